"""End to end on the bundled demo (collected from its loopback GitHub): funnel, load_dataset,
determinism, resume after SIGKILL; and the same demo through the SWE-bench-format source."""

import collections
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import datasets
import pytest

from builder.build import reference_line
from builder.cli import main
from recipes.demo.generate import EXPECTED
from recipes.demo.github_demo import GITHUB_EXPECTED
from recipes.demo.github_replay import ReplayServer
from recipes.demo.serve import LOOPBACK_TOKEN
from tests.support.instances import make_instance
from tests.support.tiers import END_TO_END

pytestmark = END_TO_END

OUTPUTS = (
    "data/full/test-00000-of-00001.parquet",
    "data/lite/test-00000-of-00001.parquet",
    "README.md",
    "stats.json",
    "instances.jsonl",
    "config.json",
    "manifest.json",
    "CHANGELOG.md",
    "figures/repos.png",
    "figures/issue_words.png",
    "figures/funnel.png",
)
FAST = ["--set", "validation.timeout_s=20", "--set", "validation.backend=local", "--no-progress"]
"""The local backend keeps these builds fast; every drop reason also runs on Docker (test_stage)."""


def _build(demo: Path, out: Path, work: Path, *extra: str, capsys=None) -> str:
    argv = ["build", "--config", str(demo / "swt-builder.toml")]
    argv += ["--output-dir", str(out), "--work-dir", str(work), *FAST, *extra]
    argv += ["--set", f"source.base_url={demo.github_url}"]
    assert main(argv) == 0
    return capsys.readouterr().out if capsys else ""


class _Demo(type(Path())):
    """The demo directory, carrying the URL of its GitHub served on loopback."""

    github_url: str


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    directory = _Demo(tmp_path_factory.mktemp("demo"))
    assert main(["demo", str(directory)]) == 0
    with (
        ReplayServer.from_json(directory / "github" / "fixtures.json") as server,
        pytest.MonkeyPatch.context() as env,
    ):
        env.setenv("GITHUB_TOKEN", LOOPBACK_TOKEN)  # as `make build-dataset` does
        env.delenv("GITHUB_TOKENS", raising=False)
        directory.github_url = server.url
        yield directory


@pytest.fixture(scope="module")
def built(demo, tmp_path_factory):
    """One cold build of the demo shared by the read-only tests."""
    root = tmp_path_factory.mktemp("built")
    _build(demo, root / "dist", root / "work")
    return root / "dist" / "swt-demo", root / "work"


def _assert_funnel(dataset_dir: Path, expected_outcomes: dict[str, str], stages: tuple) -> None:
    stats = json.loads((dataset_dir / "stats.json").read_text())
    assert [stage["stage"] for stage in stats["funnel"]][:2] == list(stages)
    expected = collections.Counter(v.lower() for v in expected_outcomes.values() if v != "kept")
    observed = collections.Counter()
    for stage in stats["funnel"]:
        observed.update(stage["dropped"])
    assert observed == expected
    kept = sorted(k for k, v in expected_outcomes.items() if v == "kept")
    assert stats["instances"] == len(kept)
    rejected = 0
    for stage in stages:
        for line in (dataset_dir / "rejected" / f"{stage}.jsonl").read_text().splitlines():
            row = json.loads(line)
            instance_id = row["record"]["instance_id"]
            assert expected_outcomes[instance_id].lower() == row["reason"], instance_id
            assert row["evidence"], f"{instance_id} dropped without evidence"
            rejected += 1
    assert rejected == sum(expected.values())
    card = (dataset_dir / "README.md").read_text()
    assert card.startswith("---\n") and "| validate | 8 | 2 |" in card


def test_funnel_puts_every_demo_case_where_it_belongs(built):
    dataset_dir, _ = built
    _assert_funnel(dataset_dir, GITHUB_EXPECTED, ("collect", "validate"))
    card = (dataset_dir / "README.md").read_text()
    assert "| collect | 13 | 8 |" in card


def test_the_swe_bench_source_builds_the_same_demo(demo, built, tmp_path, capsys):
    _, work = built  # environments are reused; the candidates differ, so validation reruns
    printed = _build(demo, tmp_path / "dist", work, "--set", "source.kind=swe-bench", capsys=capsys)
    assert "source: 8 candidates" in printed
    _assert_funnel(tmp_path / "dist" / "swt-demo", EXPECTED, ("source", "validate"))


def test_gold_predictions_score_every_demo_instance(demo, built, tmp_path, capsys):
    """The build's self-check: the release's own golden tests, evaluated as predictions, are
    successful on every instance — under SWT-Bench's rules (the default) and ours — and under
    ours cover what validation recorded."""
    dataset_dir, work = built
    argv = ["evaluate", "--dataset", str(dataset_dir), "--predictions", "gold", "--run-id", "gold"]
    argv += ["--settings", str(demo / "swt-builder.toml"), "--work-dir", str(work), *FAST]
    assert main([*argv, "--output-dir", str(tmp_path / "swt")]) == 0
    summary = json.loads((tmp_path / "swt" / "evaluations" / "gold" / "summary.json").read_text())
    assert summary["semantics"] == "swt-bench"
    assert summary["summary"]["instances"] == len(_rows(dataset_dir)) > 0
    assert summary["summary"]["success"] == 100.0 and summary["not_applicable"] == {}
    assert summary["summary"]["coverage"] == 90.0  # SWT-Bench's code gives 90.0 here too
    assert main([*argv, "--semantics", "strict", "--output-dir", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "evaluations" / "gold" / "summary.json").read_text())
    assert summary["summary"]["success"] == 100.0 and summary["not_applicable"] == {}
    recorded = {row["instance_id"]: row["golden_coverage"] for row in _rows(dataset_dir)}
    for path in (tmp_path / "evaluations" / "gold" / "instances").glob("*.json"):
        result = json.loads(path.read_text())
        assert result["score"]["coverage"] == recorded[result["instance_id"]], path.name


def _rows(dataset_dir: Path) -> list[dict]:
    lines = (dataset_dir / "instances.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_load_dataset_reads_the_output(demo, built):
    dataset_dir, _ = built
    rows = datasets.load_dataset(str(dataset_dir), split="test")
    assert sorted(rows["instance_id"]) == sorted(k for k, v in EXPECTED.items() if v == "kept")
    assert list(rows.features)[:12] == [
        "instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement",
        "hints_text", "created_at", "version", "environment_setup_commit", "FAIL_TO_PASS",
        "PASS_TO_PASS",
    ]  # fmt: skip
    reference = {
        record["instance_id"]: record
        for record in map(json.loads, (demo / "records.jsonl").read_text().splitlines())
    }
    for row in rows:  # the graded lists equal the demo's reference lists exactly
        expected = reference[row["instance_id"]]
        assert json.loads(row["FAIL_TO_PASS"]) == sorted(json.loads(expected["FAIL_TO_PASS"]))
        assert json.loads(row["PASS_TO_PASS"]) == sorted(json.loads(expected["PASS_TO_PASS"]))
        assert json.loads(row["FAIL_TO_PASS"])


def test_fresh_build_elsewhere_is_byte_identical(demo, built, tmp_path, capsys):
    dataset_dir, _ = built
    _build(demo, tmp_path / "dist", tmp_path / "work", capsys=capsys)
    for name in OUTPUTS:
        assert (tmp_path / "dist" / "swt-demo" / name).read_bytes() == (
            dataset_dir / name
        ).read_bytes(), name


def test_a_cluster_without_a_shared_work_dir_builds_the_same_bytes(demo, built, tmp_path, capsys):
    """Two worker processes, each with its own local dir, and a client with another: the
    client stores every result, so the release is the local build's and a rerun reuses all."""
    from dask import distributed

    dataset_dir, _ = built
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
        local_directory=str(tmp_path / "workers"),
    ) as cluster:  # fmt: skip
        dask = [
            "--set",
            "executor=dask",
            "--set",
            f"executor_scheduler={cluster.scheduler_address}",
        ]
        _build(demo, tmp_path / "dist", tmp_path / "client", *dask, capsys=capsys)
        for name in OUTPUTS:
            assert (tmp_path / "dist" / "swt-demo" / name).read_bytes() == (
                dataset_dir / name
            ).read_bytes(), name
        assert not (tmp_path / "client" / "envs").exists()  # the workers built environments
        assert list((tmp_path / "workers").rglob("swt-work/envs"))
        rejected = tmp_path / "dist" / "swt-demo" / "rejected" / "validate.jsonl"
        rows = [json.loads(line) for line in rejected.open()]
        logs = [Path(row["evidence"]["log"]) for row in rows if "log" in row["evidence"]]
        assert logs  # the drops' logs came back: readable where the build ran
        assert all(log.is_relative_to(tmp_path / "client") and log.is_file() for log in logs)
        again = _build(demo, tmp_path / "dist", tmp_path / "client", *dask, capsys=capsys)
    assert "validate: 8 of 8 reused from the store" in again


def test_rebuild_reuses_and_settings_recompute_only_what_they_affect(demo, tmp_path, capsys):
    out, work = tmp_path / "dist", tmp_path / "work"
    first = _build(demo, out, work, capsys=capsys)
    assert "reused" not in first
    entries = sorted((work / "store" / "validate").glob("*/*.json"))
    assert len(entries) == 8
    again = _build(demo, out, work, "--set", "name=renamed", capsys=capsys)
    assert "validate: 8 of 8 reused from the store" in again
    changed = _build(demo, out, work, "--set", "validation.timeout_s=21", capsys=capsys)
    assert "reused" not in changed
    assert len(list((work / "store" / "validate").glob("*/*.json"))) == 16


def test_tokens_never_reach_outputs_or_test_runs(demo, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secretvalue_for_test_0001")
    monkeypatch.setenv("HF_TOKEN", "hf_secretvalue_for_test_0002")
    out, work = tmp_path / "dist", tmp_path / "work"
    printed = _build(demo, out, work, capsys=capsys)
    for root in (out, work / "logs", work / "store", work / "github-state"):
        for path in root.rglob("*"):
            if path.is_file():
                text = path.read_bytes()
                assert b"secretvalue" not in text, path
    assert "secretvalue" not in printed


def test_sigkill_midway_then_resume(demo, built, tmp_path):
    """Kill a build once some results are stored; the rerun keeps them and matches a clean one."""
    out, work = tmp_path / "dist", tmp_path / "work"
    command = [
        sys.executable,
        "-m",
        "builder.cli",
        "build",
        "--config",
        str(demo / "swt-builder.toml"),
    ]
    command += ["--output-dir", str(out), "--work-dir", str(work), "--jobs", "1", *FAST]
    command += ["--set", f"source.base_url={demo.github_url}"]
    process = subprocess.Popen(command, start_new_session=True, cwd=Path(__file__).parents[2])
    store = work / "store" / "validate"
    deadline = time.monotonic() + 120
    while len(list(store.glob("*/*.json"))) < 3:
        assert process.poll() is None, "the build ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    finished = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in store.glob("*/*.json")}
    assert 3 <= len(finished) < 8
    assert not (out / "swt-demo" / "stats.json").exists()

    rerun = subprocess.run(command, capture_output=True, text=True, cwd=Path(__file__).parents[2])
    assert rerun.returncode == 0, rerun.stderr
    assert f"validate: {len(finished)} of 8 reused from the store" in rerun.stdout
    for path, identity in finished.items():
        assert (path.stat().st_ino, path.stat().st_mtime_ns) == identity, "recomputed"
    assert len(list(store.glob("*/*.json"))) == 8
    dataset_dir, _ = built
    for name in OUTPUTS:
        assert (out / "swt-demo" / name).read_bytes() == (dataset_dir / name).read_bytes(), name


def _release_files(directory: Path) -> dict[str, bytes]:
    """Every file of a release dir but the local diagnostics under rejected/ (log paths)."""
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and not p.relative_to(directory).as_posix().startswith("rejected/")
    }


def test_release_matches_its_manifest_and_every_config_loads(built):
    dataset_dir, _ = built
    manifest = json.loads((dataset_dir / "manifest.json").read_text())
    files = _release_files(dataset_dir)
    assert set(manifest["files"]) == set(files) - {"manifest.json"}
    for path, entry in manifest["files"].items():
        assert entry["sha256"] == hashlib.sha256(files[path]).hexdigest(), path
    kept = sorted(k for k, v in GITHUB_EXPECTED.items() if v == "kept")
    assert manifest["counts"]["instances"] == len(kept)
    features = None
    for split in manifest["splits"]:
        if not split["rows"]:
            assert split["path"] is None
            continue
        rows = datasets.load_dataset(str(dataset_dir), split["config"], split=split["split"])
        assert sorted(rows["instance_id"]) == split["instance_ids"]
        assert features is None or rows.features == features  # one schema for every split
        features = rows.features


def test_noop_rebuild_rewrites_nothing(demo, built, tmp_path, capsys):
    _, work = built  # the validation results are reused from the shared store
    out = tmp_path / "dist"
    _build(demo, out, work, capsys=capsys)
    stamps = _stamps(out / "swt-demo")
    again = _build(demo, out, work, capsys=capsys)
    assert "release 0.1.0: up to date, nothing rewritten" in again
    assert "written to" not in again and "instances in " in again
    assert _stamps(out / "swt-demo") == stamps  # every file: instances, rejected, config too


def _stamps(directory):
    """Each file under ``directory`` and its inode and mtime (a rewrite changes either)."""
    return {
        path: (path.stat().st_ino, path.stat().st_mtime_ns)
        for path in directory.rglob("*")
        if path.is_file()
    }


def test_swebench_package_loads_the_release(built, tmp_path):
    """swebench's own dataset loader, installed from PyPI into a throwaway venv, reads the test
    split and finds every field of its SWEbenchInstance (swebench is too heavy to be ours)."""
    dataset_dir, _ = built
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    venv = tmp_path / "swebench-venv"
    python = str(Path(sys.base_prefix) / "bin" / "python3")
    subprocess.run([uv, "venv", "-q", "--python", python, str(venv)], check=True)
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), "swebench==5.0.2"],
        check=True,
    )
    script = (
        "import json, sys\n"
        "from swebench.harness.utils import load_swebench_dataset\n"
        "from swebench.types import SWEbenchInstance\n"
        "rows = load_swebench_dataset(sys.argv[1], 'test')\n"
        "keys = set(SWEbenchInstance.__annotations__)\n"
        "print(json.dumps({r['instance_id']: [sorted(keys - set(r)), json.loads(r['FAIL_TO_PASS'])]"
        " for r in rows}))\n"
    )
    result = subprocess.run(
        [str(venv / "bin" / "python"), "-c", script, str(dataset_dir)],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "cache")},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert sorted(loaded) == sorted(k for k, v in GITHUB_EXPECTED.items() if v == "kept")
    for instance_id, (missing, fail_to_pass) in loaded.items():
        assert missing == [] and fail_to_pass, instance_id


def test_build_publishes_when_hf_repo_id_and_token_are_set(
    demo, built, tmp_path, monkeypatch, capsys
):
    import huggingface_hub.constants

    from tests.support.hub_server import FakeHub

    _, work = built
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_XET", True)  # LFS path
    with FakeHub("hf_build_token_0003") as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("HF_TOKEN", "hf_build_token_0003")
        monkeypatch.setenv("HF_REPO_ID", "swt/demo")
        printed = _build(demo, tmp_path / "dist", work, capsys=capsys)
        assert "published swt/demo v0.1.0 at commit" in printed
        assert "hf_build_token_0003" not in printed
        published = hub.files("swt/demo", "v0.1.0")
    del published[".gitattributes"]
    assert published == _release_files(tmp_path / "dist" / "swt-demo")


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def test_no_exported_row_holds_a_path_of_this_machine(built, tmp_path_factory):
    """Every column of every row of every split and of instances.jsonl: no checkout, work,
    temporary or home path (the same build elsewhere must give the same bytes)."""
    dataset_dir, work = built
    machine = {str(Path(__file__).resolve().parents[2]), str(tmp_path_factory.getbasetemp()),
               str(work), str(Path.home())}  # fmt: skip
    rows = [json.loads(line) for line in (dataset_dir / "instances.jsonl").read_text().splitlines()]
    for parquet in sorted(dataset_dir.glob("data/*/*.parquet")):
        rows += datasets.Dataset.from_parquet(str(parquet)).to_list()
    assert rows
    for row in rows:
        metadata = row["run_metadata"]  # a JSON text in the parquet files
        if isinstance(metadata, str):
            row = {**row, "run_metadata": json.loads(metadata)}
        for text in _strings(row):
            assert not any(path in text for path in machine), (row["instance_id"], text)
        assert row["run_metadata"]["environment_spec"] == "bundled:swt-demo__calc.toml"


def test_a_failed_publish_says_the_dataset_was_written(demo, built, tmp_path, monkeypatch, capsys):
    import socket

    _, work = built
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{probe.getsockname()[1]}"
    monkeypatch.setenv("HF_ENDPOINT", endpoint)  # nothing listens there any more
    monkeypatch.setenv("HF_TOKEN", "hf_build_token_0004")
    monkeypatch.setenv("HF_REPO_ID", "swt/demo")
    argv = ["build", "--config", str(demo / "swt-builder.toml"), "--output-dir",
            str(tmp_path / "dist"), "--work-dir", str(work), *FAST,
            "--set", f"source.base_url={demo.github_url}"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    dataset_dir = tmp_path / "dist" / "swt-demo"
    assert err.startswith(
        f"swt-builder build: the dataset was written to {dataset_dir}, but publishing it failed: "
        f"cannot reach the Hub at {endpoint}"
    )
    assert (dataset_dir / "manifest.json").is_file()


def test_the_build_says_how_many_instances_got_their_reference_environment() -> None:
    referenced = make_instance(
        1, run_metadata={"environment_spec": "reference:owner__repo/1/environment.yml"}
    )
    bundled = make_instance(2, run_metadata={"environment_spec": "bundled:owner__repo.toml"})
    line = reference_line([referenced, bundled, make_instance(3)])
    assert line.startswith("validate: 1 of 3 kept instances built in their reference environment")
