"""The metrics on scores whose values are known by construction."""

import pytest

from builder.evaluate.scores import InstanceScore, Transition
from builder.evaluate.strict.metrics import markdown_table, summarize


def score(instance, *kinds, applicable=True, coverage=None, edits_code=False):
    verdict = {"F": "fail", "P": "pass", "O": "other"}
    transitions = [
        Transition(test=f"t{i}", before=verdict[k[0]], after=verdict[k[-1]])
        for i, k in enumerate(kinds)
    ]
    return InstanceScore(
        instance_id=instance,
        applicable=applicable,
        not_applicable="" if applicable else "the patch is empty",
        transitions=transitions,
        coverage=coverage,
        edits_code=edits_code,
    )


SCORES = [
    score("fp", "F→P", "P→P", coverage=1.0),  # success
    score("ff", "F→F", coverage=0.5),  # F→X only
    score("pf", "P→F", "F→P", coverage=0.0),  # F→P but fails after: no success
    score("na", applicable=False, coverage=0.0),  # not applicable: a miss everywhere, ΔC 0
    score("skip", "O→P", "P→P", edits_code=True),  # other verdicts count as neither
]


def test_rates_follow_the_definitions():
    summary = summarize(SCORES)
    assert summary.instances == 5
    assert summary.applicability == 80.0
    assert summary.success == 20.0  # fp only
    assert summary.fail_to_any == 60.0  # fp, ff, pf
    assert summary.fail_to_pass == 40.0  # fp, pf
    assert summary.pass_to_pass == 40.0  # fp, skip
    assert summary.edits_code == 1


def test_coverage_is_averaged_where_the_patch_has_executable_lines():
    summary = summarize(SCORES)
    assert summary.coverage_instances == 4
    assert summary.coverage == pytest.approx(100 * (1.0 + 0.5 + 0.0 + 0.0) / 4)
    assert summary.coverage_fail_to_pass == pytest.approx(50.0)  # fp 1.0, pf 0.0
    assert summary.coverage_rest == pytest.approx(25.0)  # ff 0.5, na 0.0


def test_transition_kinds():
    assert Transition(test="t", before="fail", after="pass").kind == "F→P"
    assert Transition(test="t", before="pass", after="other").kind == "other"
    with pytest.raises(ValueError):
        Transition(test="t", before="passed", after="pass")


def test_no_instances_and_no_coverage():
    empty = summarize([])
    assert empty.instances == 0 and empty.success == 0.0 and empty.coverage is None


def test_the_markdown_table_has_the_papers_columns():
    table = markdown_table([("gold", summarize(SCORES[:1])), ("mine", summarize(SCORES[1:2]))])
    lines = table.splitlines()
    assert lines[0].startswith("| Method | 𝒜 | 𝒮 | F→X | F→P | P→P | ΔC all")
    assert lines[2] == "| gold | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 | – |"
    assert lines[3] == "| mine | 100.0 | 0.0 | 100.0 | 0.0 | 0.0 | 50.0 | – | 50.0 |"


def test_equivalent_mutants_are_left_out_of_the_mutation_score():
    def mutated(instance, tried, killed, equivalent):
        return InstanceScore(
            instance_id=instance,
            applicable=True,
            mutants=tried,
            mutants_killed=killed,
            mutants_equivalent=equivalent,
        )

    summary = summarize([mutated("a", 4, 2, 1), mutated("b", 2, 1, 0)])
    assert (summary.mutants, summary.mutants_killed, summary.mutants_equivalent) == (6, 3, 1)
    assert summary.mutation_score == 60.0  # 3 of the 5 that can be killed
    assert summarize([mutated("c", 1, 0, 1)]).mutation_score is None  # nothing to kill
