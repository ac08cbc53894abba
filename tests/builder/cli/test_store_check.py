"""``swt-builder store check``: finds each kind of unusable entry and stale temporary files,
``--fix`` removes them (and only them), and the exit code says whether any remain."""

import subprocess
import sys
from pathlib import Path

import pytest

from builder.cli import main
from builder.core.store import ResultStore
from tests.support.store_entries import RESULT, corruptions, write_temporary

ROOT = Path(__file__).resolve().parents[3]
GOOD_KEYS = ["0a" + "1" * 62, "0b" + "2" * 62]


def _store(work: Path) -> tuple[ResultStore, dict[Path, str], list[Path], list[Path]]:
    """Two good entries per stage, each corruption kind in stage ``s``, a misplaced copy, a
    stale and a fresh temporary file: the store, bad path → problem, the good and the fresh."""
    store = ResultStore(work / "store")
    good = [store.put(stage, key, RESULT) for stage in ("s", "t") for key in GOOD_KEYS]
    bad = {}
    for number, kind in enumerate(sorted(corruptions("k", "s"))):
        key = f"{number:02d}" + kind.replace("_", "")
        content, problem = corruptions(key, "s")[kind]
        path = store.path("s", key)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        bad[path] = problem
    misplaced = store.root / "t" / "ff" / good[0].name
    misplaced.parent.mkdir()
    misplaced.write_bytes(good[0].read_bytes())
    bad[misplaced] = "in folder 'ff', not its key's '0a'"
    bad[write_temporary(good[1], age_s=90)] = "temporary file of a write that did not finish"
    fresh = [write_temporary(good[2], age_s=1)]
    return store, bad, good, fresh


def _check(work: Path, capsys, *extra: str) -> tuple[int, list[str]]:
    code = main(["store", "check", "--work-dir", str(work), "--no-progress", *extra])
    captured = capsys.readouterr()
    assert captured.err == ""
    return code, captured.out.splitlines()


def test_check_reports_every_bad_entry_and_fix_removes_only_those(tmp_path, capsys):
    store, bad, good, fresh = _store(tmp_path / "w")
    entries = len(store.entry_files())
    assert entries == len(good) + len(bad) - 1 == 18

    code, lines = _check(tmp_path / "w", capsys)
    assert code == 1
    reported = dict(line.split(": ", 1) for line in lines[: len(bad)])
    assert set(reported) == {str(path) for path in bad}
    for path, problem in bad.items():
        assert problem in reported[str(path)], path
    summary = f"{entries} entries checked, {len(bad) - 1} bad, 1 stale temporary files"
    assert lines[len(bad)] == summary
    assert all(path.exists() for path in bad), "a check without --fix removes nothing"

    code, lines = _check(tmp_path / "w", capsys, "--fix")
    assert code == 0
    assert lines[-1] == (
        f"removed {len(bad) - 1} bad entries and 1 stale temporary files; the next build "
        "recomputes their records"
    )
    assert not any(path.exists() for path in bad)
    assert all(path.exists() for path in good + fresh)
    assert all(store.get(path.parent.parent.name, path.stem) == RESULT for path in good)

    code, lines = _check(tmp_path / "w", capsys)
    assert (code, lines) == (0, [f"{len(good)} entries checked, 0 bad, 0 stale temporary files"])


@pytest.mark.parametrize("kind", sorted(corruptions("k", "s")))
def test_each_kind_alone_fails_the_check_and_is_fixed(tmp_path, capsys, kind):
    store = ResultStore(tmp_path / "store")
    store.put("s", GOOD_KEYS[0], RESULT)
    content, problem = corruptions(GOOD_KEYS[1], "s")[kind]
    path = store.path("s", GOOD_KEYS[1])
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    code, lines = _check(tmp_path, capsys)
    assert code == 1 and lines[0].startswith(f"{path}: ") and problem in lines[0]
    assert lines[1] == "2 entries checked, 1 bad, 0 stale temporary files"
    assert _check(tmp_path, capsys, "--fix")[0] == 0
    assert _check(tmp_path, capsys) == (0, ["1 entries checked, 0 bad, 0 stale temporary files"])


def test_no_store_is_a_usage_error_in_one_line(tmp_path, capsys):
    assert main(["store", "check", "--work-dir", str(tmp_path / "none")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"swt-builder store: no result store at {tmp_path / 'none' / 'store'} "
        "(nothing was built in this work dir)\n"
    )


def _command(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "builder.cli", "store", "check", *argv],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip


@pytest.mark.slow
def test_exit_codes_of_the_command(tmp_path):
    store = ResultStore(tmp_path / "store")
    store.put("s", GOOD_KEYS[0], RESULT)
    store.path("s", GOOD_KEYS[0]).write_text("{")
    found = _command("--work-dir", str(tmp_path), "--no-progress")
    assert found.returncode == 1 and "1 entries checked, 1 bad" in found.stdout
    fixed = _command("--work-dir", str(tmp_path), "--fix")  # the bar goes to stderr
    assert fixed.returncode == 0 and "removed 1 bad entries" in fixed.stdout
    assert not store.path("s", GOOD_KEYS[0]).exists()


def test_fix_waits_for_no_build_it_refuses_while_one_holds_the_work_dir(tmp_path, capsys):
    from builder.core.worklock import work_dir_lock

    work = tmp_path / "work"
    store, bad, _, _ = _store(work)
    with work_dir_lock(work, "build"):
        assert main(["store", "check", "--work-dir", str(work), "--no-progress", "--fix"]) == 2
        assert "in use by swt-builder build" in capsys.readouterr().err
        assert all(path.exists() for path in bad)  # nothing removed under a running build
        assert main(["store", "check", "--work-dir", str(work), "--no-progress"]) == 1  # reads
