"""The evaluation stage's shared scoring rules."""

from builder.evaluate.stage import missed_coverage


def test_a_missed_instance_covers_nothing_unless_it_has_no_executable_line():
    assert missed_coverage(0.75, True) == 0.0
    assert missed_coverage(None, True) is None  # left out of coverage analysis
    assert missed_coverage(0.75, False) is None  # coverage not measured
