"""benchmarks/python_choice.py: each rule's pick at a record's environment commit, read from
a real git repository's CI files, is compared with the reference's Python per record."""

from __future__ import annotations

import json

from benchmarks.python_choice import main
from tests.support.git import GitRepo


def test_each_rule_is_counted_against_the_reference_python(tmp_path, capsys):
    # dated 2024-01-01 by GitRepo: 3.7 to 3.11 were released by then, 3.12 only since 2023-10
    repo = GitRepo(tmp_path / "repos" / "acme+widgets")
    tox = "[tox]\nenvlist = py{37,38,39,310,311}\n"
    base = repo.commit({"tox.ini": tox, "setup.py": "from setuptools import setup\nsetup()\n"})
    records = tmp_path / "records.jsonl"
    rows = [
        {"repo": "acme/widgets", "instance_id": f"acme__widgets-{n}", "base_commit": base,
         "version": "1.0", "environment_setup_commit": base}
        for n in (1, 2, 3)
    ]  # fmt: skip
    records.write_text("".join(json.dumps(row) + "\n" for row in rows))
    reference = tmp_path / "reference.json"
    reference.write_text(
        json.dumps({
            "acme__widgets-1": "3.9",  # the median of 3.7-3.11
            "acme__widgets-2": {"python": "3.11.5"},  # the newest (an object, a micro version)
            "acme__widgets-3": "3.9",
        })
    )  # fmt: skip
    picks = tmp_path / "picks.json"
    assert main(["--data", str(records), "--repos-dir", str(tmp_path / "repos"),
                 "--reference-pythons", str(reference), "--json", str(picks)]) == 0  # fmt: skip
    out = capsys.readouterr().out
    per_record = json.loads(picks.read_text())
    assert per_record["acme__widgets-1"]["tested"] == ["3.7", "3.8", "3.9", "3.10", "3.11"]
    assert per_record["acme__widgets-1"]["picks"]["newest tested"] == "3.11"
    assert per_record["acme__widgets-1"]["picks"]["median tested"] == "3.9"
    assert per_record["acme__widgets-1"]["picks"]["oldest tested"] == "3.7"
    assert per_record["acme__widgets-2"]["reference"] == "3.11"
    # per repository: 3 records, all 3 references tested; newest 1, median 2, oldest 0
    assert "| widgets | 3 | 3 | 1 | 2 | 0 |" in out
    # over all: median exact 2, within one minor 3 (3.9 vs 3.11 is two minors: not within)
    assert "| median tested | 2 | 2 | 0.67 |" in out
    assert "| newest tested | 1 | 1 | 1.33 |" in out
    assert "reference Pythons: 3.11: 1, 3.9: 2" in out
