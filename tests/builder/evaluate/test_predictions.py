"""Predictions files: JSONL or a JSON list; every bad entry named with where it is."""

import json

import pytest

from builder.evaluate.predictions import PredictionsError, read_predictions


def write(tmp_path, text, name="preds.jsonl"):
    path = tmp_path / name
    path.write_text(text) if isinstance(text, str) else path.write_bytes(text)
    return path


def test_jsonl_and_a_json_list_read_the_same(tmp_path):
    rows = [
        {"instance_id": "a__b-1", "model_name_or_path": "m", "model_patch": "diff"},
        {"instance_id": "a__b-2", "model_name_or_path": "m", "model_patch": None, "extra": 1},
    ]
    jsonl = read_predictions(write(tmp_path, "\n".join(map(json.dumps, rows)) + "\n\n"))
    listed = read_predictions(write(tmp_path, json.dumps(rows), "preds.json"))
    assert jsonl == listed
    assert [(p.instance_id, p.model_patch) for p in jsonl] == [("a__b-1", "diff"), ("a__b-2", "")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"instance_id": "a-1"}\nnot json\n', "line 2 is not JSON"),
        (
            '{"instance_id": "a-1"}\n{"instance_id": "a-1"}\n',
            "line 2 predicts a-1 again \\(first at line 1\\)",
        ),
        ('{"instance_id": "../../etc"}\n', "line 1: instance_id"),
        ('{"instance_id": "a..b"}\n', "line 1: instance_id"),
        ('{"model_patch": "x"}\n', "line 1: instance_id: Field required"),
        ("[1]", "entry 1 is not an object"),
        ('[{"instance_id": "a"},', "not a JSON list"),
        (b'{"instance_id": "a\xff"}\n', "line 1: instance_id is not valid UTF-8"),
        (b'[{"instance_id": "a\xff"}]', "not UTF-8 text \\(byte 19\\)"),
    ],
)
def test_bad_entries_are_named(tmp_path, text, message):
    with pytest.raises(PredictionsError, match=message):
        read_predictions(write(tmp_path, text))


def test_a_missing_file_is_one_line(tmp_path):
    with pytest.raises(PredictionsError, match="cannot read the predictions"):
        read_predictions(tmp_path / "nope.jsonl")


def test_a_line_that_is_not_utf8_spoils_only_its_prediction(tmp_path):
    good = json.dumps({"instance_id": "a__b-1", "model_patch": "diff"}).encode()
    bad = b'{"instance_id": "a__b-2", "model_patch": "x\xff y"}'
    first, second = read_predictions(write(tmp_path, good + b"\n" + bad + b"\n"))
    assert (first.model_patch, first.invalid) == ("diff", "")
    offset = len(good) + 1 + bad.index(b"\xff")
    assert second.instance_id == "a__b-2" and second.model_patch == "x\\xff y"
    assert second.invalid == (
        f"the prediction is not valid UTF-8 at line 2 (byte {offset} of the file)"
    )


def test_an_entry_cannot_declare_itself_invalid(tmp_path):
    line = json.dumps({"instance_id": "a__b-1", "model_patch": "d", "invalid": "x"})
    (only,) = read_predictions(write(tmp_path, line + "\n"))
    assert only.invalid == ""
