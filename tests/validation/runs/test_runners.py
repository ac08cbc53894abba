"""The runner registry against the runner kinds an environment spec may name."""

from __future__ import annotations

import pytest

from validation.environments.specs import RUNNER_KINDS, Settings
from validation.runs.runners import RUNNERS, make_runner


def test_the_registry_implements_exactly_the_kinds_a_spec_may_name():
    assert sorted(RUNNERS) == sorted(RUNNER_KINDS)
    assert all(runner.kind == kind for kind, runner in RUNNERS.items())
    assert Settings.model_json_schema()["properties"]["runner"]["enum"] == list(RUNNER_KINDS)


@pytest.mark.parametrize("kind", RUNNER_KINDS)
def test_every_kind_a_spec_names_makes_a_runner(kind):
    runner = make_runner(Settings(runner=kind).runner)
    assert runner.kind == kind and runner.command("python", ["tests/test_a.py"], "r")


def test_an_unknown_kind_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown test runner 'nose'.*pytest"):
        make_runner("nose")


@pytest.mark.parametrize(
    ("kind", "test_id", "swe_bench_id"),
    [
        ("django", "tests/app/tests.py::Cls::test_x", "test_x (app.tests.Cls)"),
        ("unittest", "app1/test_same.py::SameTests::test_it", "test_it (app1.test_same.SameTests)"),
        ("sympy", "sympy/core/tests/test_basic.py::test_equality", "test_equality"),
        ("pytest", "tests/test_a.py::test_b[1]", "tests/test_a.py::test_b[1]"),
    ],
)
def test_ids_convert_to_the_form_of_swe_bench_records(kind, test_id, swe_bench_id):
    assert make_runner(kind).swe_bench_id(test_id) == swe_bench_id
