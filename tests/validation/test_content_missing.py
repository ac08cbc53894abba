"""A record whose repository history lacks a file's content at its commit: a named drop before
any build, unless ``[validation] repair_from`` gives the bytes (the record is then validated as
if nothing had been missing) or ``stub_missing`` checks the file out empty, listed in the
record's ``run_metadata``; a stored ``content_missing`` never holds, nor a stubbed record once
a repair folder gives its file (validated again)."""

from __future__ import annotations

import json
import zipfile

import pytest

from builder.core.config import ValidationConfig
from builder.core.pipeline import Outcome
from builder.core.records import DropReason
from builder.core.repos import ContentMissing, worktree
from recipes.swe_bench import to_candidate
from tests.support.git import GitRepo
from tests.support.records import swe_record
from tests.support.stage_fixtures import ADD_TEST, CODE, FIXED, TESTS
from validation.stage import ValidateStage

TABLE = b"\x00\x01 a table the history lists without its content\n"
READS_TABLE = (
    "\n\ndef test_table():\n"
    "    import pathlib\n"
    "    assert pathlib.Path('data/table.bin').read_bytes().startswith(b'\\x00\\x01')\n"
)


def _case(tmp_path, name: str, *, reads_table: bool = False):
    """A repository with ``data/table.bin`` whose blob its .git lacks, and a candidate of it."""
    repo = GitRepo(tmp_path / name)
    tests = TESTS + (READS_TABLE if reads_table else "")
    base = repo.commit(
        {
            "pkg/__init__.py": CODE,
            "tests/test_pkg.py": tests,
            "data/table.bin": TABLE.decode(),
        }
    )
    test_patch = repo.diff({"tests/test_pkg.py": ADD_TEST + (READS_TABLE if reads_table else "")})
    patch = repo.diff({"pkg/__init__.py": FIXED})
    blob = repo.git("rev-parse", f"{base}:data/table.bin").strip()  # gone after the diffs,
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # which write blobs
    candidate = to_candidate(swe_record(f"fixture/{name}", 1, base, patch, test_patch))
    return repo, candidate


def _stage(tmp_path, repo, candidate, **settings) -> ValidateStage:
    config = ValidationConfig(backend="local", repetitions=1, coverage=False, **settings)
    return ValidateStage(config, tmp_path / "work", {candidate.repo: str(repo.path)})


def test_a_record_whose_history_lacks_content_is_a_named_drop_before_any_build(tmp_path):
    repo, candidate = _case(tmp_path, "lacking")
    stage = _stage(tmp_path, repo, candidate)
    outcome = stage.process(candidate)
    assert outcome.verdict.reason is DropReason.CONTENT_MISSING, outcome.verdict
    evidence = outcome.verdict.evidence
    assert json.loads(evidence["missing"]) == {candidate.base_commit: ["data/table.bin"]}
    assert "repair_from" in evidence["error"] and "stub_missing" in evidence["error"]
    assert not (tmp_path / "work" / "envs").exists()  # nothing was built for it
    assert not stage.holds(candidate, outcome)  # the mirror may hold it later: judged again
    kept = Outcome.drop("validate", DropReason.NO_FAIL_TO_PASS, error="x")
    assert stage.holds(candidate, kept)


@pytest.mark.slow
def test_a_wheel_with_the_bytes_repairs_it_exactly(tmp_path):
    repo, candidate = _case(tmp_path, "recovered", reads_table=True)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / "fixture-1.0-py3-none-any.whl", "w") as archive:
        archive.writestr("fixture/data/table.bin", TABLE)
    stage = _stage(tmp_path, repo, candidate, repair_from=[str(wheels)])
    outcome = stage.process(candidate)
    assert outcome.verdict.kept, outcome.verdict
    instance = outcome.output
    assert instance.FAIL_TO_PASS == ("tests/test_pkg.py::test_add",)
    assert "tests/test_pkg.py::test_table" in instance.PASS_TO_PASS  # it read the real bytes
    assert "stubbed_files" not in instance.run_metadata


@pytest.mark.slow
def test_stubbed_files_are_checked_out_empty_and_listed(tmp_path):
    repo, candidate = _case(tmp_path, "stubbed", reads_table=True)
    stage = _stage(tmp_path, repo, candidate, stub_missing=True)
    outcome = stage.process(candidate)
    assert outcome.verdict.kept, outcome.verdict
    instance = outcome.output
    assert json.loads(instance.run_metadata["stubbed_files"]) == {
        candidate.base_commit: ["data/table.bin"]
    }
    assert instance.FAIL_TO_PASS == ("tests/test_pkg.py::test_add",)
    # the stub changes what a test reading it sees: listed, never silent
    assert "tests/test_pkg.py::test_table" not in instance.PASS_TO_PASS
    assert stage.holds(candidate, outcome)  # the same file would be stubbed
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / "fixture-1.0-py3-none-any.whl", "w") as archive:
        archive.writestr("fixture/data/table.bin", TABLE)
    repaired = _stage(tmp_path, repo, candidate, stub_missing=True, repair_from=[str(wheels)])
    assert repaired.key(candidate) == stage.key(candidate)  # where repairs come from: no key
    assert not repaired.holds(candidate, outcome)  # the folder gives it now: validated again


def test_a_validated_record_s_mirror_is_repaired_as_its_validation_repaired_it(tmp_path):
    """Evaluation and export check out a validated record in their work dir: with the build's
    settings the same files are stubbed there; without them, a fault naming the files."""
    repo, candidate = _case(tmp_path, "again")
    stubbing = ValidateStage(
        ValidationConfig(backend="local", stub_missing=True), tmp_path / "elsewhere",
        {candidate.repo: str(repo.path)},
    )  # fmt: skip
    mirror = stubbing.mirror_as_validated(candidate, candidate.environment_setup_commit)
    with worktree(mirror, candidate.base_commit, tmp_path / "checkout") as checkout:
        assert (checkout / "data" / "table.bin").read_bytes() == b""
    plain = ValidateStage(
        ValidationConfig(backend="local"), tmp_path / "plain", {candidate.repo: str(repo.path)}
    )
    with pytest.raises(ContentMissing, match="data/table.bin"):
        plain.mirror_as_validated(candidate)
