"""The dataset card and the exported configs: Hub YAML, tables, figures, one schema, loadable."""

import json
import re

import datasets
import pytest
import yaml

from builder.release.export import FEATURES
from tests.support.instances import make_instance, make_release


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("card")
    registry = root / "cutoffs.toml"
    registry.write_text('[cutoffs]\n"old-model" = 2023-06-30\n"new-model" = 2024-02-15\n')
    instances = [
        make_instance(1, created_at="2024-01-10T00:00:00Z"),
        make_instance(2, created_at="2024-02-20T00:00:00Z", repo="other/lib"),
        make_instance(3, created_at="2024-03-05T00:00:00Z", problem_statement="too short"),
    ]
    config, _ = make_release(root / "dist", instances, as_of="2024-03-01", cutoffs=str(registry))
    return config.dataset_dir


def _header(card: str) -> dict:
    assert card.startswith("---\n")
    return yaml.safe_load(card.split("---\n")[1])


def test_yaml_header_lists_every_non_empty_split(release):
    header = _header((release / "README.md").read_text())
    assert header["license"] == "other"
    assert header["task_categories"] == ["text-generation"]
    assert header["size_categories"] == ["n<1K"]
    configs = {c["config_name"]: c for c in header["configs"]}
    assert list(configs) == ["full", "lite", "post_cutoff", "monthly"]
    assert configs["full"]["default"] is True
    splits = {name: [f["split"] for f in config["data_files"]] for name, config in configs.items()}
    assert splits == {
        "full": ["test"],
        "lite": ["test"],
        "post_cutoff": ["after_old_model", "after_new_model"],
        "monthly": ["month_2024_01", "month_2024_02"],
    }
    for config in configs.values():
        for entry in config["data_files"]:
            assert re.fullmatch(r"\w+", entry["split"])
            assert (release / entry["path"]).is_file()


def test_card_has_statistics_funnel_repositories_and_figures(release):
    card = (release / "README.md").read_text()
    assert "| Issue text | # words |" in card
    assert "| Golden coverage | coverage (%) | 50.0 | 50 | 50.0 | 50 |" in card
    assert "| Codebase | # files | 10.0 | 10 | 10.0 | 10 |" in card
    assert "| Existing tests | F→P | n/a (0/3) | n/a | n/a (0/2) | n/a |" in card
    assert "| source | 4 | 3 | malformed_record 1 |" in card
    assert "| lite (rules) | 3 | 2 | problem_too_short 1 |" in card
    assert "| owner/repo | 2 | 1 |" in card and "| other/lib | 1 | 1 |" in card
    assert "| new-model | 2024-02-15 | after_new_model | 2 |" in card
    for figure in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", card):
        assert (release / figure).is_file(), figure
    assert len(re.findall(r"!\[", card)) == 3


def test_the_funnel_counts_records_without_a_verdict_apart(tmp_path):
    from collections import Counter

    from builder.core.pipeline import StageStats

    instances = [make_instance(n, created_at=f"2024-0{n}-10T00:00:00Z") for n in (1, 2)]
    validate = StageStats("validate", 5, 2, 0, Counter(flaky=1), Counter(sandbox=1, killed=1))
    source = StageStats("source", 5, 5, 0, Counter())
    config, _ = make_release(tmp_path / "dist", instances, funnel=[source, validate])
    card = (config.dataset_dir / "README.md").read_text()
    assert "| validate | 3 | 2 | flaky 1 |" in card  # in: the records judged
    assert (
        "Not judged, a fault of the build machine (`infra_error`, tried again by the next "
        "build): validate 2 (killed 1, sandbox 1)." in card
    )


def test_stubbed_files_are_listed_per_instance(tmp_path, release):
    """A file checked out empty because the history lacked its content (``stub_missing``) is
    named in the card with its instance and commit; a card with none has no such section."""
    assert "## Stubbed files" not in (release / "README.md").read_text()
    stubbed = {"b" * 40: ["data/cat.fits", "data/dog.fits"]}
    instances = [
        make_instance(1, run_metadata={"stubbed_files": json.dumps(stubbed)}),
        make_instance(2, created_at="2024-02-20T00:00:00Z"),
    ]
    config, _ = make_release(tmp_path / "dist", instances)
    card = (config.dataset_dir / "README.md").read_text()
    assert "## Stubbed files" in card
    assert "| `owner__repo-1` | `bbbbbbbbbbbb` | `data/cat.fits`, `data/dog.fits` |" in card
    assert "owner__repo-2` |" not in card.split("## Stubbed files")[1].split("##")[0]


def test_a_funnel_without_faults_has_no_line_for_them(release):
    assert "Not judged" not in (release / "README.md").read_text()


def test_every_config_loads_with_one_identical_schema(release):
    loaded = {
        config: datasets.load_dataset(str(release), config)
        for config in ("full", "lite", "post_cutoff", "monthly")
    }
    assert sorted(loaded["full"]["test"]["instance_id"]) == [
        "owner__repo-1",
        "owner__repo-2",
        "owner__repo-3",
    ]
    assert loaded["lite"]["test"].num_rows == 2
    assert loaded["post_cutoff"]["after_new_model"]["instance_id"] == [
        "owner__repo-2",
        "owner__repo-3",
    ]
    assert loaded["monthly"]["month_2024_02"]["instance_id"] == ["owner__repo-2"]
    for dataset in loaded.values():
        for split in dataset.values():
            assert split.features == FEATURES
    default = datasets.load_dataset(str(release), split="test")
    assert default.num_rows == 3
