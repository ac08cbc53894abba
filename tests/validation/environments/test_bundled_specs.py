"""The bundled specs of SWT-Bench's twelve source repositories: each loads, names its runner,
gives the Python SWE-bench's harness used per version, and resolves every real record."""

import json
import os
from pathlib import Path

import pytest

from builder.core.config import packaged_spec_dir
from validation.environments.resolution import resolve
from validation.environments.specs import SpecLibrary, spec_file_name
from validation.runs.runners import make_runner

RUNNERS = {
    "astropy/astropy": "pytest",
    "django/django": "django",
    "matplotlib/matplotlib": "pytest",
    "mwaskom/seaborn": "pytest",
    "pallets/flask": "pytest",
    "psf/requests": "pytest",
    "pydata/xarray": "pytest",
    "pylint-dev/pylint": "pytest",
    "pytest-dev/pytest": "pytest",
    "scikit-learn/scikit-learn": "pytest",
    "sphinx-doc/sphinx": "pytest",
    "sympy/sympy": "sympy",
}
"""SWT-Bench's repositories (SWE-bench's twelve) and the runner their tests need."""

HARNESS_PYTHON = {
    "astropy/astropy": {"0.4": "3.6", "1.3": "3.6", "3.0": "3.9", "4.3": "3.9", "5.2": "3.9",
                        "5.3": "3.10"},
    "django/django": {"1.9": "3.5", "2.2": "3.5", "3.0": "3.6", "3.2": "3.6", "4.0": "3.8",
                      "4.1": "3.9", "4.2": "3.9", "5.0": "3.11", "5.2": "3.11"},
    "matplotlib/matplotlib": {"1.5": "3.5", "2.2": "3.5", "3.0": "3.7", "3.1": "3.8",
                              "3.4": "3.8", "3.5": "3.11", "3.9": "3.11"},
    "mwaskom/seaborn": {"0.11": "3.9", "0.12": "3.9", "0.14": "3.9"},
    "pallets/flask": {"2.0": "3.9", "2.1": "3.10", "2.2": "3.11", "2.3": "3.11", "3.1": "3.11"},
    "psf/requests": {"0.7": "3.9", "1.1": "3.9", "2.27": "3.9", "3.0": "3.9"},
    "pydata/xarray": {"0.12": "3.10", "2022.06": "3.10", "2024.05": "3.10"},
    "pylint-dev/pylint": {"2.8": "3.9", "2.13": "3.9", "3.0": "3.9", "4.0": "3.9"},
    "pytest-dev/pytest": {"4.4": "3.9", "5.4": "3.9", "7.2": "3.9", "8.4": "3.9"},
    "scikit-learn/scikit-learn": {"0.20": "3.6", "0.22": "3.6", "1.3": "3.9", "1.6": "3.9"},
    "sphinx-doc/sphinx": {"1.5": "3.9", "3.0": "3.9", "5.0": "3.9", "7.2": "3.9", "8.0": "3.10",
                          "8.1": "3.10"},
    "sympy/sympy": {"0.7": "3.9", "1.0": "3.9", "1.12": "3.9", "1.14": "3.9"},
}  # fmt: skip
"""Versions (SWE-bench's labels, spanning each spec's ranges) and the Python SWE-bench's harness
used for them (``MAP_REPO_VERSION_TO_SPECS`` in swebench/harness/constants)."""

MEASURABLE = sorted(set(RUNNERS) - {"django/django", "scikit-learn/scikit-learn",
                                    "matplotlib/matplotlib"})  # fmt: skip
"""The nine whose histories fit this kind of machine (the others are written, not measured)."""

LABELS_FROM_RULES = {"mwaskom/seaborn", "pallets/flask", "psf/requests", "pylint-dev/pylint",
                     "sympy/sympy"}  # fmt: skip
"""Specs whose version rules read SWE-bench's own label at a record's base commit."""

MIRRORS = Path(os.environ.get("SWT_MIRROR_DIR", "/work/.mirror"))
RECORDS = Path(
    os.environ.get("SWT_SWE_BENCH_RECORDS", "/work/shared/data/swe-bench-verified-nonlite.jsonl")
)


@pytest.fixture(scope="module")
def library() -> SpecLibrary:
    return SpecLibrary([packaged_spec_dir()])


@pytest.mark.parametrize("repo", sorted(RUNNERS))
def test_each_repository_has_a_spec_naming_its_runner_in_every_entry(library, repo):
    spec = library.get(repo)
    assert spec is not None, f"no bundled spec for {repo}"
    assert library.files[repo].name == spec_file_name(repo)
    for entry in spec.environments:
        version = _inside(entry.versions)
        assert spec.entry(version) is entry, f"{repo}: entries overlap at {version}"
        assert spec.settings(version).runner == RUNNERS[repo], f"{repo}@{version}"


@pytest.mark.parametrize("repo", sorted(HARNESS_PYTHON))
def test_each_spec_gives_the_python_of_swe_benchs_harness(library, repo):
    spec = library.get(repo)
    given = {version: spec.settings(version).python for version in HARNESS_PYTHON[repo]}
    assert given == HARNESS_PYTHON[repo]


COMPILE = {"gcc", "libc6-dev", "python3-dev"}
"""What a build of C extensions needs that a minimal base image (``swt-base:pythonX.Y``) lacks:
a C compiler, the C library's headers and the Python headers of the image's python3."""


def test_a_compiled_project_names_what_its_build_compiles_with_in_every_version(library):
    """astropy builds its C extensions at install: every version's system packages give the
    compiler and headers, which the Docker backend and an exported task's Dockerfile install
    (without them: ``command 'x86_64-linux-gnu-gcc' failed``) and the local backend checks."""
    spec = library.get("astropy/astropy")
    entries = [_inside(entry.versions) for entry in spec.environments]
    for version in [*HARNESS_PYTHON["astropy/astropy"], *entries]:
        assert COMPILE <= set(spec.settings(version).system_packages), version


def test_pylint_2_13_and_2_14_pin_the_astroid_of_swe_benchs_environments(library):
    """The environment commit's requirements_test_min.txt pins astroid 2.11.6; SWE-bench's
    environments had 2.11.7, the newest its own requirement allowed."""
    spec = library.get("pylint-dev/pylint")
    for version in ("2.13", "2.14"):
        assert "astroid==2.11.7" in spec.settings(version).packages, version
    assert not any(p.startswith("astroid") for p in spec.settings("2.15").packages)


def test_django_and_sympy_run_as_swe_benchs_harness_ran_them(library):
    """SWE-bench: ``./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1`` and
    ``PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose``."""
    django = library.get("django/django").settings("4.2")
    runner = make_runner(django.runner, django.test_command or ())
    assert runner.command("python", ["tests/forms_tests/tests/test_forms.py"], "r") == [
        "python", "tests/runtests.py", "--settings=test_sqlite", "--verbosity", "2",
        "--parallel", "1", "forms_tests.tests.test_forms",
    ]  # fmt: skip
    sympy = library.get("sympy/sympy").settings("1.12")
    runner = make_runner(sympy.runner, sympy.test_command or ())
    files = ["sympy/core/tests/test_basic.py"]
    assert runner.command("python", files, "r") == ["python", "bin/test", "-C", "--verbose", *files]
    assert sympy.env == {"PYTHONWARNINGS": "ignore::UserWarning,ignore::SyntaxWarning"}


def _records() -> list[dict]:
    if not RECORDS.is_file():
        pytest.skip(f"SWE-bench records not on this machine ({RECORDS}; set SWT_SWE_BENCH_RECORDS)")
    return [json.loads(line) for line in RECORDS.read_text().splitlines() if line.strip()]


def _mirror(repo: str) -> Path:
    owner, name = repo.split("/")
    mirror = MIRRORS / f"{owner}+{name}" / "repo"
    if not (mirror / "HEAD").is_file():
        pytest.skip(f"history of {repo} not on this machine ({mirror}; set SWT_MIRROR_DIR)")
    return mirror


@pytest.mark.slow
@pytest.mark.parametrize("repo", MEASURABLE)
def test_each_spec_resolves_every_real_record_of_its_repository(library, repo):
    """Every SWE-bench Verified record here resolves at its own commits: an entry for its
    version, the spec's Python and runner, the record's environment commit."""
    records = [record for record in _records() if record["repo"] == repo]
    if not records:
        pytest.skip(f"no records of {repo} in {RECORDS}")
    mirror = _mirror(repo)
    spec = library.get(repo)
    for record in records:
        resolution = resolve(
            spec,
            mirror=mirror,
            base_commit=record["base_commit"],
            record_version=record["version"],
            record_setup_commit=record["environment_setup_commit"],
        )
        settings = spec.settings(record["version"])
        where = f"{record['instance_id']} ({record['version']})"
        assert resolution.version == record["version"], where
        assert resolution.spec.python == settings.python, where
        assert resolution.spec.runner == RUNNERS[repo], where
        assert resolution.environment_commit == record["environment_setup_commit"], where
        if repo in LABELS_FROM_RULES:
            assert resolution.detected_version == record["version"], where


def _inside(specifier: str) -> str:
    """A version inside ``specifier`` (its lower bound, or a version below its upper bound)."""
    for clause in (c.strip() for c in specifier.split(",") if c.strip()):
        if clause.startswith(">="):
            return clause[2:]
    for clause in (c.strip() for c in specifier.split(",") if c.strip()):
        if clause.startswith("<"):
            major, minor = clause.lstrip("<=").split(".")[:2]
            return f"{major}.{int(minor) - 1}" if int(minor) else f"{int(major) - 1}.99"
    return "1.0"
