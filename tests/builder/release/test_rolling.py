"""Rolling splits: public date, the cutoff registry, per-cutoff splits and complete months."""

import datetime as dt
import re

import pytest

from builder.core.config import ConfigError, RollingConfig
from builder.release.rolling import (
    complete_months,
    cutoff_split_name,
    cutoff_splits,
    load_cutoffs,
    monthly_splits,
    public_at,
)
from tests.support.instances import make_instance


def test_public_date_is_the_earliest_of_issue_and_pr_creation():
    issue_first = make_instance(
        created_at="2024-03-06T17:20:00Z",
        issue_created_at=("2024-02-28T09:00:00Z", "2024-03-01T00:00:00Z"),
    )
    assert public_at(issue_first) == dt.datetime(2024, 2, 28, 9, tzinfo=dt.timezone.utc)
    pr_first = make_instance(created_at="2024-01-02T00:00:00Z", issue_created_at=("2024-02-01",))
    assert public_at(pr_first) == dt.datetime(2024, 1, 2, tzinfo=dt.timezone.utc)
    offset = make_instance(created_at="2024-03-01T01:00:00+02:00")
    assert public_at(offset) == dt.datetime(2024, 2, 29, 23, tzinfo=dt.timezone.utc)


def test_bundled_registry_loads_with_valid_split_names():
    cutoffs = load_cutoffs()
    assert len(cutoffs) >= 3
    assert cutoffs == sorted(cutoffs, key=lambda c: (c.date, c.model))
    for cutoff in cutoffs:
        assert re.fullmatch(r"\w+", cutoff.split)
    assert cutoff_split_name("gpt-4o-2024-05-13") == "after_gpt_4o_2024_05_13"


def _registry(tmp_path, body: str) -> str:
    path = tmp_path / "cutoffs.toml"
    path.write_text(body)
    return str(path)


def test_cutoff_split_uses_the_public_date_not_the_merge_date(tmp_path):
    cutoffs = load_cutoffs(_registry(tmp_path, '[cutoffs]\n"model-a" = 2024-02-29\n'))
    on_the_day = make_instance(1, created_at="2024-02-29T23:59:00Z")
    next_day = make_instance(2, created_at="2024-03-01T00:00:00Z")
    old_issue = make_instance(
        3,
        created_at="2024-03-05T00:00:00Z",
        issue_created_at=("2024-01-10T00:00:00Z",),
        merged_at="2024-04-01T00:00:00Z",
    )
    splits = cutoff_splits([on_the_day, next_day, old_issue], cutoffs)
    assert {k: [i.instance_id for i in v] for k, v in splits.items()} == {
        "after_model_a": ["owner__repo-2"]
    }


@pytest.mark.parametrize(
    "body, message",
    [
        ('[cutoffs]\n"m" = "2024-01-01"\n', "must be a date"),
        ('[cutoffs]\n"m" = 2024-01-01T00:00:00Z\n', "must be a date"),
        ('[cutoffs]\n"a-b" = 2024-01-01\n"a_b" = 2024-02-01\n', "same split name"),
        ('[models]\n"m" = 2024-01-01\n', "needs a [cutoffs] table"),
        ("[cutoffs\n", "not valid TOML"),
    ],
)
def test_bad_registries_are_refused(tmp_path, body, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_cutoffs(_registry(tmp_path, body))


def test_missing_registry_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_cutoffs(str(tmp_path / "absent.toml"))


def _at(number: int, day: str):
    return make_instance(number, created_at=f"{day}T12:00:00Z")


def test_only_complete_months_are_released():
    instances = [_at(1, "2024-01-15"), _at(2, "2024-03-02"), _at(3, "2024-04-20")]
    assert complete_months(instances, None) == ["2024-01", "2024-02", "2024-03"]
    assert complete_months(instances, "2024-05-01") == ["2024-01", "2024-02", "2024-03", "2024-04"]
    assert complete_months([], None) == []


def test_monthly_splits_skip_released_months_and_keep_empty_ones():
    instances = [_at(1, "2024-01-15"), _at(2, "2024-01-31"), _at(3, "2024-03-02")]
    config = RollingConfig(as_of="2024-04-01")
    splits = monthly_splits(instances, config)
    assert {k: [i.instance_id for i in v] for k, v in splits.items()} == {
        "month_2024_01": ["owner__repo-1", "owner__repo-2"],
        "month_2024_02": [],
        "month_2024_03": ["owner__repo-3"],
    }
    later = monthly_splits(instances, config, released=["month_2024_01", "month_2024_02"])
    assert list(later) == ["month_2024_03"]
    assert monthly_splits(instances, RollingConfig(monthly=False)) == {}
