"""The touched test files' imports that the environment lacks are installed for the instance."""

import json
import sys
from pathlib import Path

import pytest

from builder.core.config import ValidationConfig
from builder.core.records import DropReason
from recipes.swe_bench import to_candidate
from tests.support.git import GitRepo
from tests.support.records import swe_record
from tests.support.stage_fixtures import ADD_TEST, CODE, FIXED, TESTS
from validation.stage import ValidateStage

USES_DATEUTIL = (
    "from dateutil import parser\n\n"
    + ADD_TEST
    + "\n\ndef test_parses():\n    assert parser.parse('2020-01-02').day == 2\n"
)


DECLARES_UNREGISTERED = {
    "pkg/__init__.py": CODE,
    "tests/test_pkg.py": TESTS,
    # the project names them (no index has them): the step may try to install them
    "requirements-optional.txt": (
        "swt_test_no_such_distribution_4f1c\nswt-test-no-such-distribution-9e2d\n"
    ),
}


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
    outcome = make_case(
        {"tests/test_pkg.py": tests}, {"pkg/__init__.py": FIXED}, base_files=DECLARES_UNREGISTERED
    )
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
        {"tests/test_pkg.py": "import pytest\n" + tests},
        {"pkg/__init__.py": FIXED},
        base_files=DECLARES_UNREGISTERED,
    )
    assert outcome.verdict.kept, outcome.verdict
    metadata = outcome.output.run_metadata
    assert json.loads(metadata["test_requirements"]) == ["python-dateutil"]
    assert sorted(json.loads(metadata["test_requirements_failed"])) == missing
    assert outcome.output.FAIL_TO_PASS == ("tests/test_pkg.py::test_add",)
    assert _log(outcome).count("not built") == len(missing)


def test_a_name_the_project_never_declared_is_logged_not_installed(make_case):
    """A module the test patch itself adds, a typo, a plugin's import name: whoever registers
    that name on the index would have their code installed and run in the build."""
    tests = (
        "import pytest\n\n" + ADD_TEST + "\n\ndef test_optional():\n"
        "    pytest.importorskip('bump_changelog')\n    pytest.importorskip('doesnotexist')\n"
    )
    base = {
        "pkg/__init__.py": CODE,
        "tests/test_pkg.py": TESTS,
        "requirements-dev.txt": "pytest-xdist\n",  # xdist's distribution, not xdist
    }
    outcome = make_case({"tests/test_pkg.py": tests}, {"pkg/__init__.py": FIXED}, base_files=base)
    assert outcome.verdict.kept, outcome.verdict
    assert "test_requirements" not in outcome.output.run_metadata
    assert "test_requirements_failed" not in outcome.output.run_metadata
    skipped = outcome.output.run_metadata["test_imports_undeclared"]
    assert json.loads(skipped) == ["bump_changelog", "doesnotexist"]
    log = _log(outcome)
    assert "added: none" in log
    assert "not declared by the project up to the base commit: bump_changelog doesnotexist" in log


SKIPS_WITHOUT_DATEUTIL = (
    "import pytest\n\n"
    + ADD_TEST
    + "\n\ndef test_parses():\n    parser = pytest.importorskip('dateutil.parser')\n"
    + "    assert parser.parse('2020-01-02').day == 2\n"
)


def _spec_case(tmp_path, spec_line: str, *, configured: bool, reference: str = ""):
    """A test skipped without dateutil, under a spec that says ``spec_line``, with the
    configuration's ``validation.test_imports`` as ``configured`` (and its
    ``reference_environments`` as ``reference``)."""
    repo = GitRepo(tmp_path / "repo")
    base = repo.commit({"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS})
    test_patch = repo.diff({"tests/test_pkg.py": SKIPS_WITHOUT_DATEUTIL})
    patch = repo.diff({"pkg/__init__.py": FIXED})
    spec = tmp_path / "imports.toml"
    spec.write_text(
        f'repo = "fixture/imports"\n\n[defaults]\npackages = ["pytest"]\ninstall = "none"\n'
        f"{spec_line}"
    )
    settings = ValidationConfig(
        backend="local", repetitions=1, coverage=False, spec_files=[str(spec)],
        test_imports=configured, reference_environments=reference,
    )  # fmt: skip
    stage = ValidateStage(settings, tmp_path / "work", {"fixture/imports": str(repo.path)})
    return stage.process(to_candidate(swe_record("fixture/imports", 1, base, patch, test_patch)))


def test_a_spec_that_turns_them_off_installs_nothing_for_its_repository(tmp_path):
    """As SWE-bench installed pytest's project alone: the optional packages its tests skip
    without stay out (twisted, installed for ``importorskip``, changed another test's
    outcome)."""
    outcome = _spec_case(tmp_path, "test_imports = false\n", configured=True)
    assert outcome.verdict.kept, outcome.verdict
    instance = outcome.output
    assert instance.FAIL_TO_PASS == ("tests/test_pkg.py::test_add",)
    # dateutil is not there: the test that needs it skips itself before and after
    assert "tests/test_pkg.py::test_parses" not in instance.PASS_TO_PASS
    assert json.loads(instance.run_metadata["unlisted_tests"])[
        "tests/test_pkg.py::test_parses"
    ].startswith("skipped")
    assert "test_requirements" not in instance.run_metadata
    assert not (Path(outcome.verdict.evidence["logs"]) / "test-imports.log").exists()


@pytest.mark.slow
def test_a_spec_that_turns_them_on_installs_them_whatever_the_configuration(tmp_path):
    outcome = _spec_case(tmp_path, "test_imports = true\n", configured=False)
    assert outcome.verdict.kept, outcome.verdict
    assert "tests/test_pkg.py::test_parses" in outcome.output.PASS_TO_PASS
    assert json.loads(outcome.output.run_metadata["test_requirements"]) == ["python-dateutil"]


def test_none_are_added_in_a_reference_environment(tmp_path):
    """The reference's tests ran with what its environment held: a test that skips itself
    without a package stays skipped, whatever the spec and the configuration say."""
    here = f"{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}"
    export = tmp_path / "og" / "fixture__imports" / "1" / "environment.yml"
    export.parent.mkdir(parents=True)
    export.write_text(
        f"dependencies:\n  - python={here}=h1_0_cpython\n  - pip:\n      - pytest==8.3.5\n"
    )
    outcome = _spec_case(
        tmp_path, "test_imports = true\n", configured=True, reference=str(tmp_path / "og")
    )
    assert outcome.verdict.kept, outcome.verdict
    instance = outcome.output
    assert instance.FAIL_TO_PASS == ("tests/test_pkg.py::test_add",)
    assert "tests/test_pkg.py::test_parses" not in instance.PASS_TO_PASS
    assert "test_requirements" not in instance.run_metadata
    metadata = instance.run_metadata
    assert metadata["environment_spec"] == "reference:fixture__imports/1/environment.yml"
    assert (metadata["python_source"], metadata["reference_python"]) == ("reference", here)
