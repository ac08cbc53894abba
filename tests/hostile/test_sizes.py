"""Oversized records and predictions: a field over its ``[sizes]`` limit is a named drop
(``oversized_record``) or a prediction not evaluated, with the field and both sizes; the good
line beside it is read. A configured pattern RE2 cannot run in linear time is refused."""

import json

import pytest

from builder.core.config import ConfigError, SizesConfig, load_config
from builder.evaluate.predictions import read_predictions
from recipes.swe_bench import swe_bench_candidates
from tests.support.records import SHA, swe_record

SIZES = SizesConfig(
    problem_statement_kb=4, hints_text_kb=4, patch_kb=8, test_patch_kb=8, test_ids_kb=1, other_kb=1
)
BIG = "x" * 9000


def _row(**changes) -> bytes:
    row = swe_record("o/r", 1, SHA, "p", "t", instance_id=changes.pop("instance_id"))
    return json.dumps({**row, **changes}).encode()


CASES = {
    "problem_statement": ({"problem_statement": BIG}, "problem_statement_kb"),
    "hints_text": ({"hints_text": BIG}, "hints_text_kb"),
    "test_patch": ({"test_patch": BIG + BIG}, "test_patch_kb"),
    "reference_list": ({"FAIL_TO_PASS": json.dumps(["t::x" * 100] * 10)}, "test_ids_kb"),
    "other_field": ({"version": "1" * 2000}, "other_kb"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_field_over_its_limit_is_an_oversized_record(tmp_path, case):
    changes, setting = CASES[case]
    source = tmp_path / "source.jsonl"
    line = _row(instance_id="big", **changes)
    source.write_bytes(_row(instance_id="good") + b"\n" + line + b"\n")
    outcomes = [outcome for _, outcome in swe_bench_candidates(str(source), sizes=SIZES)]
    assert outcomes[0].verdict.kept and outcomes[0].output.instance_id == "good"
    verdict = outcomes[1].verdict
    assert verdict.reason.value == "oversized_record"
    assert verdict.evidence["origin"] == "source.jsonl:2"
    (said,) = [text for text in verdict.evidence.values() if f"sizes.{setting}" in text]
    assert " bytes > " in said


def test_a_prediction_over_its_limit_is_not_evaluated_and_named(tmp_path):
    path = tmp_path / "predictions.jsonl"
    rows = [
        {"instance_id": "a-1", "model_patch": "+" * 5000},
        {"instance_id": "a-2", "model_patch": "small"},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    big, small = read_predictions(path, SizesConfig(model_patch_kb=4))
    assert "over its size limit: model_patch: 5000 bytes > 4096 (sizes.model_patch_kb)" in (
        big.invalid
    )
    assert big.model_patch == ""  # not held for the rest of the evaluation
    assert (small.invalid, small.model_patch) == ("", "small")


@pytest.mark.parametrize(
    "pattern", [r"(?<![\w&/])#\d+", r"(a+)\1", r"(?=x)y"], ids=["lookbehind", "backref", "ahead"]
)
def test_a_configured_pattern_that_cannot_run_in_linear_time_is_refused(tmp_path, pattern):
    config = tmp_path / "swt-builder.toml"
    config.write_text(f"[lite.problem_patterns]\nmine = '{pattern}'\n")
    with pytest.raises(ConfigError, match=r"lite\.problem_patterns.*mine: .*RE2 syntax"):
        load_config(config)
