"""The golden tests' kill rate in a release: its file, the card's section, the manifest's hashes,
beside text configs, and gone when the release is written anew."""

import json

from builder.release.golden_mutation import (
    GOLDEN_MUTATION,
    read_golden_mutation,
    write_golden_mutation,
)
from builder.release.manifest import hash_files, read_manifest
from builder.release.write import TextTable, write_text_configs
from tests.support.instances import make_instance, make_release


def _statistic(killed, mutants=10, equivalent=1, cap=10):
    scored = mutants - equivalent
    return {
        "instances": 3,
        "instances_with_mutants": 3,
        "cap": cap,
        "mutants": mutants,
        "equivalent": equivalent,
        "killed": killed,
        "kill_rate": round(100 * killed / scored, 2),
        "by_operator": {"comparison": {"mutants": mutants, "equivalent": equivalent,
                                       "killed": killed}},
    }  # fmt: skip


def test_the_statistic_reaches_file_card_and_manifest(tmp_path):
    instances = [make_instance(n) for n in (1, 2, 3)]
    config, _ = make_release(tmp_path / "dist", instances)
    out = config.dataset_dir

    write_golden_mutation(out, "full/test", _statistic(killed=6))
    splits = write_golden_mutation(out, "lite/test", _statistic(killed=9))

    assert read_golden_mutation(out) == splits and sorted(splits) == ["full/test", "lite/test"]
    card = (out / "README.md").read_text()
    assert "## Strength of the golden tests" in card
    assert "| full | test | 3 | 10 | 1 | 6 | 66.7 % |" in card
    assert "| lite | test | 3 | 10 | 1 | 9 | 100.0 % |" in card
    assert card.index("## Strength of the golden tests") < card.index("## Versions")
    manifest = read_manifest(out)
    assert manifest["files"] == hash_files(out) and GOLDEN_MUTATION in manifest["files"]

    write_golden_mutation(out, "full/test", _statistic(killed=7))  # replaced, not repeated
    card = (out / "README.md").read_text()
    assert card.count("## Strength of the golden tests") == 1
    assert "| full | test | 3 | 10 | 1 | 7 | 77.8 % |" in card


def test_text_configs_and_the_statistic_keep_each_other(tmp_path):
    instances = [make_instance(n) for n in (1, 2, 3)]
    config, _ = make_release(tmp_path / "dist", instances)
    out = config.dataset_dir
    texts = {f"owner__repo-{n}": f"prompt {n}" for n in (1, 2, 3)}
    table = TextTable("bm25_27k_zsp", "bm25", 27000, "zsp", "cl100k_base", texts)

    write_golden_mutation(out, "full/test", _statistic(killed=6))
    write_text_configs(out, [table])
    first = (out / "README.md").read_text()
    write_golden_mutation(out, "full/test", _statistic(killed=6))
    assert (out / "README.md").read_text() == first  # the same bytes, whichever came last
    assert first.index("## Strength") < first.index("## Text configs") < first.index("## Versions")
    manifest = read_manifest(out)
    assert manifest["text"] and manifest["files"] == hash_files(out)


def test_a_rewritten_release_drops_the_statistic(tmp_path):
    config, _ = make_release(tmp_path / "dist", [make_instance(n) for n in (1, 2, 3)])
    out = config.dataset_dir
    write_golden_mutation(out, "full/test", _statistic(killed=6))

    make_release(tmp_path / "dist", [make_instance(n) for n in (1, 2)], version="0.2.0")

    assert not (out / GOLDEN_MUTATION).exists()
    assert "Strength of the golden tests" not in (out / "README.md").read_text()
    assert GOLDEN_MUTATION not in json.loads((out / "manifest.json").read_text())["files"]
