"""A release dir is read whole or refused with one line."""

import json

import pytest

from builder.text.errors import TextError
from builder.text.release_dir import read_release
from tests.support.instances import make_instance, make_release


def test_the_instances_of_a_release(tmp_path):
    config, _ = make_release(tmp_path / "dist", [make_instance(2), make_instance(1)])
    ids = [i.instance_id for i in read_release(config.dataset_dir)]
    assert ids == ["owner__repo-1", "owner__repo-2"]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("no dir", "no such release dir"),
        ("no manifest", r"is not a release dir \(no manifest.json\)"),
        ("bad manifest", "manifest.json is not a release manifest"),
        ("no instances", r"is not a release dir \(no instances.jsonl\)"),
        ("bad instances", r"instances.jsonl:1: not a valid Instance"),
        ("lost instance", "split full/test names owner__repo-2, which instances.jsonl lacks"),
    ],
)
def test_a_malformed_release_dir_is_one_line(tmp_path, damage, message):
    config, _ = make_release(tmp_path / "dist", [make_instance(1), make_instance(2)])
    out = config.dataset_dir
    if damage == "no dir":
        out = tmp_path / "elsewhere"
    elif damage == "no manifest":
        (out / "manifest.json").unlink()
    elif damage == "bad manifest":
        (out / "manifest.json").write_text("[1, 2]")
    elif damage == "no instances":
        (out / "instances.jsonl").unlink()
    elif damage == "bad instances":
        (out / "instances.jsonl").write_text("{not json\n")
    else:
        lines = (out / "instances.jsonl").read_text().splitlines(keepends=True)
        (out / "instances.jsonl").write_text(lines[0])
    with pytest.raises(TextError, match=message) as raised:
        read_release(out)
    assert "\n" not in str(raised.value)


def test_a_month_naming_an_instance_neither_file_has_is_one_line(tmp_path):
    instances = [make_instance(1, created_at="2024-01-10T00:00:00Z")]
    config, _ = make_release(tmp_path / "dist", instances, as_of="2024-03-01")
    out = config.dataset_dir
    manifest = json.loads((out / "manifest.json").read_text())
    month = next(s for s in manifest["splits"] if s["split"] == "month_2024_01")
    month["instance_ids"].append("owner__repo-9")
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(TextError, match="month_2024_01 names owner__repo-9, which its file lacks"):
        read_release(out)
