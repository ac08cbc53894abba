"""Split planning: full, lite, post-cutoff and monthly; released monthly splits are carried."""

import pytest

from builder.core.config import Config, LiteConfig, RollingConfig
from builder.release.splits import Split, carried_splits, plan_splits
from tests.support.instances import make_instance


def _registry(tmp_path) -> str:
    path = tmp_path / "cutoffs.toml"
    path.write_text('[cutoffs]\n"early" = 2023-12-31\n"late" = 2024-02-15\n')
    return str(path)


def _instances():
    return [
        make_instance(1, created_at="2024-01-10T00:00:00Z"),
        make_instance(2, created_at="2024-02-20T00:00:00Z", problem_statement="too short"),
        make_instance(3, created_at="2024-03-05T00:00:00Z", issue_created_at=("2024-02-01",)),
    ]


def _ids(plan, config, name):
    return list(plan.get(config, name).instance_ids)


def test_plan_has_every_split_with_the_right_members(tmp_path):
    config = Config(rolling=RollingConfig(cutoffs=_registry(tmp_path), as_of="2024-04-01"))
    plan = plan_splits(_instances(), config)
    assert [(s.config, s.name) for s in plan.splits] == [
        ("full", "test"),
        ("lite", "test"),
        ("post_cutoff", "after_early"),
        ("post_cutoff", "after_late"),
        ("monthly", "month_2024_01"),
        ("monthly", "month_2024_02"),
        ("monthly", "month_2024_03"),
    ]
    assert _ids(plan, "full", "test") == ["owner__repo-1", "owner__repo-2", "owner__repo-3"]
    assert _ids(plan, "lite", "test") == ["owner__repo-1", "owner__repo-3"]
    assert _ids(plan, "post_cutoff", "after_early") == _ids(plan, "full", "test")
    assert _ids(plan, "post_cutoff", "after_late") == ["owner__repo-2"]
    assert _ids(plan, "monthly", "month_2024_02") == ["owner__repo-2", "owner__repo-3"]
    assert _ids(plan, "monthly", "month_2024_03") == []
    assert all(s.frozen == (s.config == "monthly") for s in plan.splits)


def test_lite_can_be_disabled(tmp_path):
    config = Config(
        lite=LiteConfig(enabled=False), rolling=RollingConfig(cutoffs=_registry(tmp_path))
    )
    plan = plan_splits(_instances(), config)
    assert plan.lite is None and "lite" not in plan.by_config()


def test_released_monthly_splits_are_carried_as_recorded(tmp_path):
    previous = {
        "files": {"data/monthly/month_2024_01-00000-of-00001.parquet": {"sha256": "ab" * 32}},
        "splits": [
            {"config": "full", "split": "test", "path": "x", "instance_ids": ["old"]},
            {
                "config": "monthly",
                "split": "month_2024_01",
                "path": "data/monthly/month_2024_01-00000-of-00001.parquet",
                "instance_ids": ["owner__repo-9"],
            },
            {"config": "monthly", "split": "month_2024_02", "path": None, "instance_ids": []},
        ],
    }
    carried = carried_splits(previous)
    assert [(s.name, s.instance_ids, s.carried_sha256) for s in carried] == [
        ("month_2024_01", ("owner__repo-9",), "ab" * 32),
        ("month_2024_02", (), None),
    ]
    config = Config(rolling=RollingConfig(cutoffs=_registry(tmp_path), as_of="2024-04-01"))
    plan = plan_splits(_instances(), config, previous)
    # The released months keep their members even though the new data disagrees.
    assert _ids(plan, "monthly", "month_2024_01") == ["owner__repo-9"]
    assert _ids(plan, "monthly", "month_2024_02") == []
    assert _ids(plan, "monthly", "month_2024_03") == []
    assert _ids(plan, "full", "test") == ["owner__repo-1", "owner__repo-2", "owner__repo-3"]
    assert carried_splits(None) == []


@pytest.mark.parametrize("name", ["after-gpt", "month 1", "", "a/b"])
def test_split_names_must_be_word_characters(name):
    with pytest.raises(ValueError, match="not a valid datasets name"):
        Split("post_cutoff", name, (), ())
