"""Infer an environment spec from a repository's own files at a commit, for a maintainer to pin."""

from __future__ import annotations

import ast
import configparser
import re
from pathlib import Path

import tomllib
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from validation.environments.ci_installs import ci_installs
from validation.environments.project_pythons import project_pythons
from validation.environments.requirement_files import (
    Requirements,
    logical_lines,
    requirement_files_for_tests,
)
from validation.environments.runner_inference import own_runner, pytest_facts
from validation.environments.specs import Entry, RepoSpec, Settings
from validation.environments.versioning import package_name, show

INFERENCE_VERSION = 11
"""Bump when inference reads repositories differently: validation results are recomputed.
6: what CI installs from a VCS URL is an optional package, by name. 7: what a requirement
file installs from a URL too. 8: what only CI steps install is optional. 9: a ``#`` inside
quotes in a CI step is the argument's, not a comment. 10: the spec keeps each such URL
(``url_packages``), and a record names the index's release that stood in for it. 11: the
plugins reporting to a CI service are left out (``NOT_FOR_TESTS``)."""

TEST_EXTRAS = ("test", "tests", "testing", "dev")
"""Extras that carry test dependencies, in order of preference."""

NOT_FOR_TESTS = re.compile(
    r"^(tox|pre-commit|flake8.*|pylint|mypy|black|isort|ruff|sphinx.*|twine|wheel|"
    r"setuptools|pip|bump2?version|invoke|nox|coveralls|codecov|readme[-_]renderer|"
    r"check-manifest|types-.*|pydocstyle|doc8|numpydoc|jupyter.*|ipython|nbsphinx|"
    r"pyroma|build|tbump|towncrier|flit|.*-stubs|-e|\.|"
    r"pytest[-_.]azurepipelines|pytest[-_.]github[-_.]actions[-_.]annotate[-_.]failures|"
    r"pytest[-_.]travis[-_.]fold|teamcity[-_.]messages)$",
    re.IGNORECASE,
)
"""Development tools an inferred test environment leaves out (linters, docs, release tools), and
the plugins that report a run to a CI service: they test nothing, and what they do to a run's
report is the service's (pytest-azurepipelines 0.6 names a test after its module's docstring
in the JUnit report and the summary, so no id of the run is the test's)."""

_SETUP_KWARG = re.compile(r"\b{name}\s*=\s*(['\"])(.+?)\1")
_FACTORS = re.compile(r"^([\w.!-]+(?:\s*,\s*[\w.!-]+)*)\s*:\s")


def requires_python_at(mirror: Path, commit: str) -> str:
    """The project's ``requires-python``/``python_requires`` at ``commit`` ("" if none)."""
    pyproject = _toml(show(mirror, commit, "pyproject.toml"))
    value = pyproject.get("project", {}).get("requires-python")
    if isinstance(value, str):
        return value
    poetry = pyproject.get("tool", {}).get("poetry", {}).get("dependencies", {})
    if isinstance(poetry.get("python"), str):
        return _poetry_to_pep440(poetry["python"])
    cfg = _cfg(show(mirror, commit, "setup.cfg"))
    value = cfg.get("options", "python_requires", fallback="").strip()
    if value:
        return value
    setup_py = show(mirror, commit, "setup.py") or ""
    found = re.search(_SETUP_KWARG.pattern.format(name="python_requires"), setup_py)
    return found.group(2) if found else ""


def _poetry_to_pep440(text: str) -> str:
    text = text.strip()
    if text.startswith("^"):
        return f">={text[1:]}"
    return text if text[:1] in "<>=!~" else ""


def _toml(text: str | None) -> dict:
    if not text:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _cfg(text: str | None) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    if text:
        try:
            parser.read_string(text)
        except configparser.Error:
            return configparser.ConfigParser(interpolation=None)
    return parser


def _extras(mirror: Path, commit: str) -> dict[str, list[str]]:
    """Extras → requirement strings, from pyproject, setup.cfg or setup.py's literal dict."""
    pyproject = _toml(show(mirror, commit, "pyproject.toml"))
    extras = pyproject.get("project", {}).get("optional-dependencies")
    if isinstance(extras, dict) and extras:
        return {k: [str(v) for v in vs] for k, vs in extras.items()}
    groups = pyproject.get("dependency-groups")
    if isinstance(groups, dict) and groups:
        return {k: [v for v in vs if isinstance(v, str)] for k, vs in groups.items()}
    cfg = _cfg(show(mirror, commit, "setup.cfg"))
    if cfg.has_section("options.extras_require"):
        return {
            key: [line.strip() for line in value.splitlines() if line.strip()]
            for key, value in cfg.items("options.extras_require")
        }
    return _setup_py_extras(show(mirror, commit, "setup.py") or "")


def install_requirements(mirror: Path, commit: str) -> list[str]:
    """The project's install requirements at ``commit``: ``[project] dependencies``, setup.cfg's
    ``install_requires``, or setup.py's when it is (or names) a literal list (else none)."""
    pyproject = _toml(show(mirror, commit, "pyproject.toml"))
    dependencies = pyproject.get("project", {}).get("dependencies")
    if isinstance(dependencies, list) and dependencies:
        return [str(item) for item in dependencies]
    cfg = _cfg(show(mirror, commit, "setup.cfg"))
    listed = cfg.get("options", "install_requires", fallback="")
    if listed.strip():
        return [line.strip() for line in logical_lines(listed) if line.strip()]
    return _setup_py_install_requires(show(mirror, commit, "setup.py") or "")


def _setup_py_install_requires(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    assigned: dict[str, ast.AST] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                assigned[target.id] = node.value
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "install_requires":
            return _literal_strings(node.value, assigned) or []
    return []


def _setup_py_extras(source: str) -> dict[str, list[str]]:
    """``extras_require`` of setup.py when it is (or names) a literal dict of literal lists."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    assigned: dict[str, ast.AST] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                assigned[target.id] = node.value
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "extras_require":
            value = node.value
            if isinstance(value, ast.Name):
                value = assigned.get(value.id, value)
            return _literal_extras(value, assigned)
    return {}


def _literal_extras(node: ast.AST, assigned: dict[str, ast.AST]) -> dict[str, list[str]]:
    if not isinstance(node, ast.Dict):
        return {}
    extras: dict[str, list[str]] = {}
    for key, value in zip(node.keys, node.values, strict=True):
        if not isinstance(key, ast.Constant) or not isinstance(key.value, str):
            continue
        items = _literal_strings(value, assigned)
        if items is not None:
            extras[key.value] = items
    return extras


def _literal_strings(node: ast.AST, assigned: dict[str, ast.AST]) -> list[str] | None:
    if isinstance(node, ast.Name) and node.id in assigned:
        node = assigned[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _literal_strings(node.left, assigned)
        right = _literal_strings(node.right, assigned)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.List | ast.Tuple):
        values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        return [v for v in values if isinstance(v, str)]
    return None


def _tox(mirror: Path, commit: str) -> tuple[configparser.ConfigParser, list[str], list[str]]:
    """tox.ini, and its ``[testenv]`` deps and extras that apply to a plain test env: lines
    for named factors only (``min: …``) are left out, negated ones (``!pypy: …``) kept."""
    cfg = _cfg(show(mirror, commit, "tox.ini"))
    deps = []
    for line in _unconditional(cfg.get("testenv", "deps", fallback="")):
        line = line.replace("{toxinidir}/", "").replace("{toxinidir}", ".")
        if "{" not in line:
            deps.append(line)
    extras = []
    for line in _unconditional(cfg.get("testenv", "extras", fallback="")):
        extras += line.replace(",", " ").split()
    return cfg, deps, extras


def _unconditional(value: str) -> list[str]:
    """The lines of a tox setting that apply to a plain test env, factor prefixes removed:
    lines for named factors only (``alldeps: all``) are left out, negated ones (``!pypy:``)
    kept."""
    lines = []
    for line in logical_lines(value):
        factors = _FACTORS.match(line)
        if factors:
            if not all(f.strip().startswith("!") for f in factors.group(1).split(",")):
                continue
            line = line[factors.end() :].strip()
        lines.append(line)
    return lines


def _keep(requirement: str) -> str | None:
    """The requirement if it is a valid test dependency (markers dropped only if invalid)."""
    try:
        parsed = Requirement(requirement)
    except InvalidRequirement:
        return None
    if NOT_FOR_TESTS.match(parsed.name) or parsed.url:
        return None
    return str(parsed)


def _kept(requirements: list[str], constraints: dict[str, str]) -> dict[str, str]:
    """Canonical name → requirement, the first of each name; a bare name takes the
    constraint files' version of it."""
    kept: dict[str, str] = {}
    for requirement in requirements:
        value = _keep(requirement)
        if value is not None:
            name = canonicalize_name(Requirement(value).name)
            plain = not Requirement(value).specifier
            kept.setdefault(name, constraints.get(name, value) if plain else value)
    return kept


def infer_spec(
    repo: str, mirror: Path, commit: str, extra_packages: list[str] | tuple[str, ...] = ()
) -> RepoSpec:
    """A spec read from the project's files at ``commit``: test deps by name, runner, notes.

    Test dependencies are installed by name (not through the extra), so a dev extra whose
    other members no longer build does not sink the environment: the test extra (tox's
    ``extras`` first), tox's ``deps`` with the requirement files they include, else the
    repository's test requirement files, what its CI's install steps install (see
    ``ci_installs``: packages, requirement files, the project's extras), and the plugins its
    pytest configuration needs. What only the CI's steps install (a package no test extra,
    tox deps or test requirement file declares) is an optional package with its bounds:
    installed when it can be, left out and named when not (a job of optional backends may
    install what no longer builds). What the CI or a requirement file it reads installs from a
    VCS URL (``pip install git+https://github.com/pydicom/pydicom-data``) is taken by name
    from the index as an optional package (``optional_packages``: left out and named when the
    index has no such distribution or it does not fit), unless the spec requires that name
    already; only names the project's own files give, nothing else. The
    runner is the repository's own (Django's ``tests/runtests.py``, a ``bin/test``), else
    pytest when tox, the configuration or the dependencies name it, else unittest. Python is
    left to resolution (see ``project_pythons``); everything unpinned is resolved dated.
    """
    found: list[str] = []
    packages: list[str] = []
    extras = _extras(mirror, commit)
    tox, tox_deps, tox_extras = _tox(mirror, commit)
    chosen = [name for name in tox_extras if name in extras] or [
        name for name in TEST_EXTRAS if name in extras
    ][:1]
    for name in chosen:
        found.append(f"extra '{name}'")
        packages += extras[name]
    requirements = Requirements(mirror, commit)
    if tox_deps:
        found.append("tox.ini [testenv] deps")
        requirements.lines(tox_deps, "")
    if not requirements.files:
        for path in requirement_files_for_tests(mirror, commit):
            requirements.read(path)
    declared = len(requirements.packages)  # what CI steps add comes after
    ci = ci_installs(mirror, commit)
    if ci.sources:
        found.append(f"install steps of {', '.join(ci.sources)}")
        requirements.lines(ci.lines, "")
        for name in ci.extras:
            if name in extras and name not in chosen:
                chosen.append(name)
                found.append(f"extra '{name}'")
                packages += extras[name]
    found += requirements.files
    packages += requirements.packages[:declared]
    runner, launcher = own_runner(mirror, commit)
    facts = pytest_facts(mirror, commit, tox)
    if runner in (None, "pytest"):  # a runner of the repository's own reads no pytest config
        found += facts.sources
        packages += facts.plugins
    kept = _kept(packages, requirements.constraints)
    for requirement in extra_packages:
        kept.setdefault(_name(requirement), requirement)
    only_ci = {
        name: value
        for name, value in _kept(requirements.packages[declared:], requirements.constraints).items()
        if name not in kept
    }
    if runner in (None, "pytest"):
        plugins = any(name.startswith("pytest") for name in (*kept, *only_ci))
        uses_pytest = runner or facts.runner or plugins or _mentions_pytest(mirror, commit)
        runner = "pytest" if uses_pytest else "unittest"
        if facts.options:
            launcher = ("python", "-m", "pytest", *facts.options)
    installable = any(show(mirror, commit, f) is not None for f in ("setup.py", "pyproject.toml"))
    own = (package_name(mirror, commit) or "") if installable else ""
    if runner == "pytest" and "pytest" not in kept:
        kept["pytest"] = only_ci.pop("pytest", "pytest")  # the runner itself is no option
    kept.pop(canonicalize_name(own), None)  # the project installs itself (pytest's own tests)
    only_ci.pop(canonicalize_name(own), None)
    # what only a CI step installs (no test extra, tox deps or test requirement file declares
    # it: sympy's job of optional ground types installs gmpy2, whose sdist needs libmpfr) is
    # installed when it can be, never failing the environment; one the optional step cannot
    # take as a word (a marker, a space) stays required as before
    steps_only = {name: "".join(value.split()) for name, value in only_ci.items()}
    for name, value in only_ci.items():
        if Requirement(value).marker is not None or any(c in value for c in "'\""):
            kept[name] = value
            steps_only.pop(name)
    if steps_only:
        found.append(f"optional, only CI steps install them: {', '.join(steps_only)}")
    urls = {**ci.from_urls, **requirements.from_urls}
    from_urls = [
        name
        for name in urls
        if name not in kept
        and name not in steps_only
        and name != canonicalize_name(own)
        and not NOT_FOR_TESTS.match(name)
    ]
    if from_urls:
        found.append(f"optional, by name from the index: {', '.join(from_urls)} (CI or a "
                     "requirement file installs them from a URL)")  # fmt: skip
    optional = [*from_urls, *steps_only.values()]
    requires = requires_python_at(mirror, commit)
    tested = sorted(
        {p.version for p in project_pythons(mirror, commit) if p.source != "classifiers"},
        key=Version,
    )
    note = (
        f"Inferred from {repo} at {commit[:12]} ({', '.join(found) or 'no test dependencies'}"
        f"; requires-python {requires or 'unset'}; CI tests Python "
        f"{', '.join(tested) or 'unknown'}). Review, then pin python and packages."
    )
    return RepoSpec(
        repo=repo,
        note=note,
        defaults=Settings(
            packages=sorted(kept.values(), key=str.lower),
            runner=runner,
            install="project" if installable else "none",
            pins_override=False,  # the project's own pins: requirements, also once reviewed
            **({"optional_packages": optional} if optional else {}),
            **({"url_packages": {name: urls[name] for name in from_urls}} if from_urls else {}),
            **({"test_command": list(launcher)} if launcher else {}),
        ),
        environments=[Entry()],
    )


def _name(requirement: str) -> str:
    """The normalized project name, or the text itself when it is no requirement."""
    try:
        return canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return requirement


def _mentions_pytest(mirror: Path, commit: str) -> bool:
    for path in ("setup.cfg", "pyproject.toml", "pytest.ini", "tox.ini"):
        text = show(mirror, commit, path) or ""
        if "pytest" in text:
            return True
    return False
