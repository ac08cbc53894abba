"""The evaluation stage's scoring helpers, on real records and patches built here."""

from builder.evaluate.stage import missed_coverage


def test_a_missed_instance_covers_nothing_unless_it_has_no_executable_line():
    assert missed_coverage(0.75, True) == 0.0
    assert missed_coverage(None, True) is None  # left out of coverage analysis
    assert missed_coverage(0.75, False) is None  # coverage not measured
