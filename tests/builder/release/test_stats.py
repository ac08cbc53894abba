"""The Table-1 statistics: means and maxima over measured values, None counted honestly."""

from builder.core.records import InstanceStats, Transitions
from builder.release.stats import markdown_table, statistics_table
from tests.support.instances import make_instance


def _row(rows, group, name):
    (found,) = [r for r in rows if (r.group, r.name) == (group, name)]
    return found


def _measured():
    return make_instance(
        1,
        problem_statement="one two three four",
        golden_coverage=0.25,
        stats=InstanceStats(
            codebase_files=10,
            codebase_lines=1000,
            existing_tests=Transitions(
                fail_to_pass=0, fail_to_fail=1, pass_to_pass=5, pass_to_fail=0
            ),
            golden_tests=Transitions(
                fail_to_pass=2, fail_to_fail=0, pass_to_pass=1, pass_to_fail=0
            ),
            golden_tests_added=2,
            golden_tests_removed=1,
            golden_test_files_edited=1,
            golden_test_lines_edited=12,
        ),
    )


def _unmeasured():
    return make_instance(2, problem_statement="a b", golden_coverage=None, stats=InstanceStats())


def test_means_and_maxima_use_measured_values_only():
    rows = statistics_table([_measured(), _unmeasured()])
    words = _row(rows, "Issue text", "# words")
    assert (words.measured, words.total, words.mean, words.maximum) == (2, 2, 3.0, 4)
    files = _row(rows, "Codebase", "# files")
    assert (files.measured, files.mean, files.maximum) == (1, 10.0, 10)
    assert _row(rows, "Existing tests", "total").mean == 6.0
    assert _row(rows, "Existing tests", "P→P").maximum == 5
    assert _row(rows, "Golden tests", "F→P").mean == 2.0
    assert _row(rows, "Golden tests", "removed").mean == 1.0
    assert _row(rows, "Golden coverage", "coverage (%)").mean == 25.0
    assert _row(rows, "Golden test edits", "# lines").maximum == 12


def test_unmeasured_statistics_say_n_a_and_partial_ones_say_how_many():
    only_unmeasured = statistics_table([_unmeasured()])
    coverage = _row(only_unmeasured, "Golden coverage", "coverage (%)")
    assert (coverage.measured, coverage.mean, coverage.maximum) == (0, None, None)
    assert coverage.to_dict() == {
        "group": "Golden coverage",
        "name": "coverage (%)",
        "measured": 0,
        "instances": 1,
        "mean": None,
        "max": None,
    }
    text = markdown_table(
        {"full": statistics_table([_measured(), _unmeasured()]), "lite": only_unmeasured}
    )
    lines = text.splitlines()
    assert lines[0] == "| | statistic | full mean | full max | lite mean | lite max |"
    assert "| Golden coverage | coverage (%) | 25.0 (1/2) | 25 | n/a (0/1) | n/a |" in lines
    assert "| Issue text | # words | 3.0 | 4 | 2.0 | 2 |" in lines


def test_empty_split_gives_n_a_everywhere():
    rows = statistics_table([])
    assert all(r.mean is None and r.measured == 0 for r in rows)
