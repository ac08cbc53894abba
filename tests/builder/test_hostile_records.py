"""Hostile records on a real build: ids like ``../x`` and ``/abs/x`` are malformed and touch
nothing outside the work dir (the validation stage refuses one should it get past the source),
and text that is not UTF-8 is malformed without stopping the build."""

import json
from pathlib import Path

import pytest

from builder.cli import main
from builder.core.config import ValidationConfig
from builder.core.files import OutsideRoot
from builder.core.records import Candidate, DropReason
from tests.support.records import SHA, candidate, swe_record, write_records
from validation.stage import ValidateStage

HOSTILE = ["../canary", "../../x", "/abs/x", "..", "a/../../canary", ".hidden", "a..b"]


def _tree(root: Path) -> dict[str, tuple[int, float] | None]:
    """Every path under ``root``: a file's size and modification time, None for a dir."""
    return {
        str(path.relative_to(root)): None
        if path.is_dir()
        else (path.stat().st_size, path.stat().st_mtime)
        for path in sorted(root.rglob("*"))
    }


@pytest.fixture
def canary(tmp_path):
    """``tmp_path/canary`` (a dir with a file) beside the work dir ``tmp_path/run/work``."""
    (tmp_path / "canary").mkdir()
    (tmp_path / "canary" / "file").write_text("canary")
    (tmp_path / "run").mkdir()
    return tmp_path / "canary"


def test_a_build_drops_hostile_ids_and_writes_nothing_outside_the_work_dir(tmp_path, canary):
    rows = [swe_record("o/r", n, SHA, "p", "t", instance_id=i) for n, i in enumerate(HOSTILE)]
    source = write_records(tmp_path / "run" / "source.jsonl", rows)
    before = _tree(tmp_path)
    work, out = tmp_path / "run" / "work", tmp_path / "run" / "dist"
    argv = ["build", "--source", str(source), "--work-dir", str(work), "--output-dir", str(out)]
    code = main([*argv, "--set", "validation.backend=local", "--no-progress"])
    assert code == 1  # nothing kept: every record is malformed
    after = _tree(tmp_path)
    outside = {p: v for p, v in after.items() if not p.startswith(("run/work", "run/dist"))}
    assert outside == before
    dropped = [json.loads(line) for line in (work / "rejected" / "source.jsonl").open()]
    assert [row["reason"] for row in dropped] == [DropReason.MALFORMED_RECORD.value] * len(HOSTILE)
    origins = [row["evidence"]["origin"] for row in dropped]
    assert origins == [f"source.jsonl:{n}" for n in range(1, len(HOSTILE) + 1)]
    assert all("instance_id" in row["evidence"]["error"] for row in dropped)


def test_a_build_drops_text_that_is_not_utf8_and_reads_the_rest(tmp_path):
    good = swe_record("o/r", 1, SHA, "p", "t", instance_id="good")
    surrogate = swe_record("o/r", 2, SHA, "p", "t", problem_statement="\ud800")
    source = tmp_path / "source.jsonl"
    lines = [json.dumps(surrogate).encode(), b'{"instance_id": "\xff"}', json.dumps(good).encode()]
    source.write_bytes(b"\n".join(lines) + b"\n")
    config = tmp_path / "swt-builder.toml"  # the good record's repository: absent, no network
    config.write_text(f'[repos]\n"o/r" = "{tmp_path / "absent"}"\n')
    work = tmp_path / "work"
    argv = ["build", "--config", str(config), "--source", str(source), "--work-dir", str(work)]
    argv += ["--output-dir", str(tmp_path / "dist"), "--set", "validation.backend=local"]
    assert main([*argv, "--no-progress"]) == 1
    dropped = [json.loads(line) for line in (work / "rejected" / "source.jsonl").open()]
    assert [row["evidence"]["origin"] for row in dropped] == ["source.jsonl:1", "source.jsonl:2"]
    assert {row["reason"] for row in dropped} == {DropReason.MALFORMED_RECORD.value}
    assert dropped[0]["record"]["problem_statement"] == "\ud800"
    validated = [json.loads(line) for line in (work / "rejected" / "validate.jsonl").open()]
    assert [row["record"]["instance_id"] for row in validated] == ["good"]


@pytest.mark.parametrize("hostile", ["../../../canary", "/abs/x", ".."])
def test_the_stage_refuses_a_hostile_id_that_got_past_validation(tmp_path, canary, hostile):
    work = tmp_path / "run" / "work"
    stage = ValidateStage(ValidationConfig(backend="local"), work, {})
    fields = candidate().model_dump()
    if hostile == "/abs/x":  # an absolute path: the canary itself
        hostile = str(canary)
    record = Candidate.model_construct(**{**fields, "instance_id": hostile})
    before = _tree(tmp_path)
    with pytest.raises(OutsideRoot, match="leaves"):
        stage.process(record)
    assert _tree(tmp_path) == before
