"""A kept instance names the golden tests in neither of its lists with what its runs saw of
them (``run_metadata.unlisted_tests``): pytest's skip reason, an F→F test's failure message;
and the modules its test files import only when installed (``optional_imports``)."""

import json

import pytest

from tests.support.stage_fixtures import ADD_TEST, FIXED, runs_of

UNLISTED = """

def test_needs_optional():
    import pytest

    pytest.importorskip("not_a_module_anywhere")


def test_always_broken():
    raise RuntimeError("broken before and after")


def test_fetch():
    import socket

    socket.create_connection(("127.0.0.1", 1), timeout=5)
"""


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local"])
def test_a_kept_instance_names_its_skipped_and_fail_to_fail_tests(make_case):
    outcome = make_case({"tests/test_pkg.py": ADD_TEST + UNLISTED}, {"pkg/__init__.py": FIXED})
    assert outcome.verdict.kept, outcome.verdict
    metadata = outcome.output.run_metadata
    assert json.loads(metadata["unlisted_tests"]) == {
        "tests/test_pkg.py::test_always_broken": (
            "failed before and after: RuntimeError: broken before and after"
        ),
        "tests/test_pkg.py::test_needs_optional": (
            "skipped: could not import 'not_a_module_anywhere': "
            "No module named 'not_a_module_anywhere'"
        ),
    }  # test_fetch is in needs_network, not here
    assert list(json.loads(metadata["needs_network"])) == ["tests/test_pkg.py::test_fetch"]
    # the file guards no import at module level: nothing recorded of it for compare
    assert "optional_imports" not in metadata
    run = runs_of(outcome)[0]
    assert run.skip_reasons == {
        "tests/test_pkg.py::test_needs_optional": (
            "could not import 'not_a_module_anywhere': No module named 'not_a_module_anywhere'"
        )
    }
    assert "tests/test_pkg.py::test_always_broken" in run.failure_messages


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local"])
def test_a_kept_instance_names_the_modules_its_test_files_import_only_when_installed(make_case):
    guarded = "try:\n    import not_a_module_anywhere\nexcept ImportError:\n    pass\n"
    outcome = make_case({"tests/test_pkg.py": guarded + ADD_TEST}, {"pkg/__init__.py": FIXED})
    assert outcome.verdict.kept, outcome.verdict
    assert json.loads(outcome.output.run_metadata["optional_imports"]) == {
        "tests/test_pkg.py": ["not_a_module_anywhere"]
    }
