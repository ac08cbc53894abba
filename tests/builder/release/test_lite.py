"""Lite rules: each with a positive and a negative case; thresholds and patterns are config."""

import random

import pytest

from builder.core.config import LiteConfig
from builder.release.lite import check_instance, select_lite
from tests.support.instances import LONG_ISSUE, diff, golden_test_patch, make_instance

CONFIG = LiteConfig()


def _broken(**overrides) -> dict[str, str]:
    return check_instance(make_instance(**overrides), CONFIG).broken


def test_the_baseline_instance_breaks_no_rule():
    assert _broken() == {}


def test_problem_with_40_words_is_too_short_and_41_is_enough():
    words = LONG_ISSUE.split()
    assert "problem_too_short" in _broken(problem_statement=" ".join(words[:40]))
    assert _broken(problem_statement=" ".join(words[:41])) == {}


@pytest.mark.parametrize(
    "rule, positive, negative",
    [
        ("url", "see https://example.org/bug for details", "the http client fails on retries"),
        ("url", "mirrored at www.example.org today", "the www folder is not created"),
        ("issue_reference", "this regressed in #1234 again", "the C#12 parser and step 12"),
        ("issue_reference", "same as owner/repo#77 upstream", "owner/repo has 77 stars"),
        ("issue_reference", "reported in issue 45 before", "raised 45 issues overall"),
        ("issue_reference", "PR #7 broke it", "the PRs were reviewed"),
        ("commit_sha", "since " + "0123456789abcdef" * 2 + "01234567", "since 0123456 it fails"),
        ("media_link", "screenshot: ![plot](shot)", "the plot looks wrong"),
        ("media_link", "output in result.png shows it", "the png writer is slow"),
        ("media_link", 'see <img src="x">', "see the image module"),
        ("media_link", "recording demo.mp4 attached", "mp4 output is slow"),
    ],
)
def test_problem_pattern(rule, positive, negative):
    assert f"problem_has_{rule}" in _broken(problem_statement=f"{LONG_ISSUE} {positive}")
    assert f"problem_has_{rule}" not in _broken(problem_statement=f"{LONG_ISSUE} {negative}")


def test_patch_that_adds_or_deletes_a_file_is_not_lite_unless_allowed():
    adding = diff("calc/new.py", new_file=True)
    assert "patch_adds_or_deletes_files" in _broken(patch=adding)
    assert "patch_adds_or_deletes_files" not in _broken(patch=diff("calc/new.py"))
    allowed = LiteConfig(allow_added_or_deleted_files=True)
    assert check_instance(make_instance(patch=adding), allowed).eligible


def test_patch_touching_two_files_is_not_lite_one_is():
    assert "patch_touches_too_many_files" in _broken(patch=diff("a.py") + diff("b.py"))
    assert "patch_touches_too_many_files" not in _broken(patch=diff("a.py"))


def test_patch_hunks_must_be_between_one_and_three():
    mode_only = "diff --git a/x.py b/x.py\nold mode 100644\nnew mode 100755\n"
    assert "patch_too_few_hunks" in _broken(patch=mode_only)
    assert "patch_too_few_hunks" not in _broken(patch=diff(hunks=1))
    assert "patch_too_many_hunks" in _broken(patch=diff(hunks=4))
    assert "patch_too_many_hunks" not in _broken(patch=diff(hunks=3))


def test_unparsable_patch_is_named():
    assert "patch_unparsable" in _broken(patch="@@ -1,1 +1,1 @@\n-a\n+b\n")


@pytest.mark.parametrize(
    "rule, positive, negative",
    [
        (
            "pytest_raises_match",
            '    with pytest.raises(ValueError, match="bad input"):',
            "    with pytest.raises(ValueError):",
        ),
        (
            "pytest_raises_match",
            '    with pytest.raises(\n        ValueError,\n        match=r"x",\n    ):',
            '    with pytest.raises(make_error("match=")):  # a call in the args',
        ),
        (
            "pytest_warns_match",
            '    with pytest.warns(UserWarning, match="old"):',
            "    with pytest.warns(UserWarning):",
        ),
        (
            "assert_message",
            '        with self.assertRaisesMessage(ValueError, "bad"):',
            "        with self.assertRaises(ValueError):",
        ),
        (
            "assert_message",
            '        self.assertRaisesRegex(ValueError, "b.d", f)',
            "        self.assertEqual(f(), 1)",
        ),
    ],
)
def test_golden_tests_checking_exact_messages(rule, positive, negative):
    assert f"tests_check_{rule}" in _broken(test_patch=golden_test_patch(positive))
    assert f"tests_check_{rule}" not in _broken(test_patch=golden_test_patch(negative))


def test_only_added_test_lines_count():
    removed = (
        "diff --git a/tests/t.py b/tests/t.py\n--- a/tests/t.py\n+++ b/tests/t.py\n"
        '@@ -1,2 +1,1 @@\n def test_x():\n-    with pytest.raises(E, match="m"):\n'
    )
    assert _broken(test_patch=removed) == {}


def test_thresholds_and_patterns_are_data():
    short = make_instance(problem_statement="median is wrong for even inputs")
    assert not check_instance(short, CONFIG).eligible
    assert check_instance(short, LiteConfig(min_problem_words=3)).eligible
    custom = LiteConfig(problem_patterns={"stack_trace": r"Traceback \(most recent call last\)"})
    traced = make_instance(problem_statement=LONG_ISSUE + " Traceback (most recent call last):")
    assert check_instance(traced, custom).broken == {
        "problem_has_stack_trace": "Traceback (most recent call last)"
    }
    assert check_instance(traced, CONFIG).eligible


def _population(count: int):
    eligible = [make_instance(n) for n in range(count)]
    ineligible = [make_instance(1000 + n, problem_statement="too short") for n in range(5)]
    return eligible, ineligible


def test_sample_is_seeded_deterministic_and_order_independent():
    eligible, ineligible = _population(40)
    config = LiteConfig(size=10, seed=7)
    first = select_lite(eligible + ineligible, config)
    shuffled = eligible + ineligible
    random.Random(1).shuffle(shuffled)
    again = select_lite(shuffled, config)
    ids = [i.instance_id for i in first.instances]
    assert ids == [i.instance_id for i in again.instances]
    assert len(ids) == 10 and ids == sorted(ids)
    assert set(ids) <= {i.instance_id for i in eligible}
    other_seed = select_lite(eligible, LiteConfig(size=10, seed=8))
    assert [i.instance_id for i in other_seed.instances] != ids
    assert first.to_dict() == {
        "considered": 45,
        "eligible": 40,
        "selected": 10,
        "excluded_by_rule": {"problem_too_short": 5},
    }


def test_size_zero_or_larger_than_eligible_keeps_every_eligible_instance():
    eligible, ineligible = _population(4)
    for size in (0, 4, 50):
        chosen = select_lite(eligible + ineligible, LiteConfig(size=size)).instances
        assert [i.instance_id for i in chosen] == sorted(i.instance_id for i in eligible)
