"""The touched test files' imports that the environment lacks are installed for the instance."""

import json
from pathlib import Path

import pytest

from builder.core.records import DropReason
from tests.support.stage_fixtures import ADD_TEST, FIXED

USES_DATEUTIL = (
    "from dateutil import parser\n\n"
    + ADD_TEST
    + "\n\ndef test_parses():\n    assert parser.parse('2020-01-02').day == 2\n"
)


def _log(outcome) -> str:
    evidence = outcome.verdict.evidence
    logs = Path(evidence["logs"]) if "logs" in evidence else Path(evidence["runs"]).parent
    return (logs / "test-imports.log").read_text()


@pytest.mark.slow
def test_an_imported_distribution_the_environment_lacks_is_added(make_case):
    outcome = make_case({"tests/test_pkg.py": USES_DATEUTIL}, {"pkg/__init__.py": FIXED})
    assert outcome.verdict.kept, outcome.verdict
    instance = outcome.output
    assert instance.FAIL_TO_PASS == ("tests/test_pkg.py::test_add",)
    assert "tests/test_pkg.py::test_parses" in instance.PASS_TO_PASS
    assert json.loads(instance.run_metadata["test_requirements"]) == ["python-dateutil"]
    log = _log(outcome)
    assert "wanted dateutil (tests/test_pkg.py:1)" in log
    assert "added: python-dateutil" in log


@pytest.mark.slow
def test_an_environment_with_them_that_cannot_be_built_leaves_the_one_there_was(make_case):
    tests = "import swt_test_no_such_distribution_4f1c\n\n" + ADD_TEST
    outcome = make_case({"tests/test_pkg.py": tests}, {"pkg/__init__.py": FIXED})
    # the import fails on both sides: no F→P, but no environment drop either
    assert outcome.verdict.reason is not DropReason.ENVIRONMENT_FAILED, outcome.verdict
    log = _log(outcome)
    assert "added: swt_test_no_such_distribution_4f1c" in log
    assert "not built" in log


def test_what_the_environment_has_adds_nothing(make_case):
    outcome = make_case(
        {"tests/test_pkg.py": "import pytest\n" + ADD_TEST}, {"pkg/__init__.py": FIXED}
    )
    assert outcome.verdict.kept, outcome.verdict
    assert "test_requirements" not in outcome.output.run_metadata
    assert "missing: none; added: none" in _log(outcome)


@pytest.mark.slow
@pytest.mark.parametrize(
    "missing",
    [
        ["swt_test_no_such_distribution_4f1c"],
        # the installer reports one failure per build: the second build still fails on the
        # other name, the third gets the rest
        ["swt_test_no_such_distribution_4f1c", "swt_test_no_such_distribution_9e2d"],
    ],
    ids=["one", "one-at-a-time"],
)
def test_what_the_installer_blames_is_left_out_and_the_rest_installed(make_case, missing):
    tests = (
        USES_DATEUTIL
        + "\n\ndef test_optional():\n"
        + "".join(f"    pytest.importorskip('{name}')\n" for name in missing)
    )
    outcome = make_case(
        {"tests/test_pkg.py": "import pytest\n" + tests}, {"pkg/__init__.py": FIXED}
    )
    assert outcome.verdict.kept, outcome.verdict
    metadata = outcome.output.run_metadata
    assert json.loads(metadata["test_requirements"]) == ["python-dateutil"]
    assert sorted(json.loads(metadata["test_requirements_failed"])) == missing
    assert outcome.output.FAIL_TO_PASS == ("tests/test_pkg.py::test_add",)
    assert _log(outcome).count("not built") == len(missing)
