"""How SWT-Bench runs and reads a repository's tests: its command and log parser, as a Runner.

The data is ``commands.toml`` (SWT-Bench's ``MAP_REPO_TO_TEST_FRAMEWORK`` and
``MAP_REPO_TO_PARSER``, keyed by repository and version). A run's statuses are what the named
parser (``swt_parsers``) reads from the whole log, so a collection error stops pytest where it
stops it there (their command has no ``--continue-on-collection-errors``), and every quirk of
their parsers is kept.
"""

from __future__ import annotations

import configparser
import dataclasses
import functools
import shlex
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

import tomllib

from builder.core.errors import SwtError
from builder.core.records import TestStatus
from builder.evaluate.swt.parsers import PARSERS
from validation.runs.runners import Runner

DATA = "commands.toml"
KIND = "swt-bench"
"""The runner kind of these runs (no JUnit report: the log is the report)."""
NO_TRACEBACK = "--tb=no"
"""Left out when lines are counted: SWT-Bench's traced command drops it."""
TOX_SED = ("pytest", "pytest -rA")
"""What SWT-Bench's sphinx images do to tox.ini before anything runs (``sed 's/pytest/pytest
-rA/'``: the first ``pytest`` of each line)."""
_KIND_DEFAULTS = {"sympy": "sympy/sympy", "django": "django/django"}
"""A repository SWT-Bench does not know, whose spec's runner is one of these, runs as the
repository named here does."""
_STATUS = {"PASSED": TestStatus.PASSED, "FAILED": TestStatus.FAILED,
           "SKIPPED": TestStatus.SKIPPED}  # fmt: skip
"""Their statuses as ours; any other word their parser recorded (``ERROR``, ``ERROR:``) is an
error: in their grading only PASSED and FAILED are states."""


class ToxError(SwtError, ValueError):
    """The checkout's tox.ini has no ``[testenv]`` command that runs pytest."""


@dataclasses.dataclass(frozen=True)
class SwtCommand:
    """One repository's command words, parser and variables; ``source`` says where they came
    from (``swt-bench``: its entry; ``default``: the documented default)."""

    words: tuple[str, ...]
    parser: str
    env: tuple[tuple[str, str], ...] = ()
    source: str = "swt-bench"
    traced_strip: str = ""
    """Characters their traced command strips off the end of the command line (sympy's)."""


@functools.cache
def _data() -> dict[str, Any]:
    return tomllib.loads(resources.files("builder.evaluate.swt").joinpath(DATA).read_text())


def _command(entry: dict[str, Any], version: str, source: str) -> SwtCommand:
    chosen = {**entry, **entry.get("versions", {}).get(version, {})}
    parser = chosen["parser"]
    if parser not in PARSERS:
        raise ValueError(f"{DATA}: unknown parser {parser!r} (known: {', '.join(PARSERS)})")
    env = tuple(sorted(chosen.get("env", {}).items()))
    words = tuple(shlex.split(chosen["command"]))
    return SwtCommand(words, parser, env, source, chosen.get("traced_strip", ""))


def command_for(repo: str, version: str, runner_kind: str) -> SwtCommand | None:
    """SWT-Bench's command for ``repo`` at ``version``; for a repository it does not know, the
    default for pytest, sympy's or Django's for those runners; None for a unittest repository
    (SWT-Bench has no parser for its log: the toolkit's own runner and reading are used)."""
    repos = _data()["repos"]
    if repo in repos:
        return _command(repos[repo], version, "swt-bench")
    if runner_kind in _KIND_DEFAULTS:
        return _command(repos[_KIND_DEFAULTS[runner_kind]], version, "default")
    if runner_kind == "pytest":
        return _command(_data()["default"], version, "default")
    return None


def tox_commands(tox_ini: str) -> tuple[list[str], tuple[tuple[str, str], ...]]:
    """The first ``[testenv]`` command running pytest (after :data:`TOX_SED`) and the
    testenv's ``setenv`` variables, with ``{env:NAME:default}`` as its default (a run's
    environment is clean) and ``{posargs}`` left for the files."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(tox_ini)
    if not parser.has_section("testenv"):
        raise ToxError("tox.ini has no [testenv] section")
    section = parser["testenv"]
    lines = [ln.strip() for ln in section.get("commands", "").splitlines() if ln.strip()]
    runs = [ln.replace(*TOX_SED, 1) for ln in lines if "pytest" in ln]
    if not runs:
        raise ToxError("tox.ini's [testenv] commands run no pytest")
    env = []
    for line in section.get("setenv", "").splitlines():
        name, equals, value = line.partition("=")
        if equals and name.strip():
            env.append((name.strip(), _env_defaults(value.strip())))
    return shlex.split(runs[0]), tuple(sorted(env))


def _env_defaults(value: str) -> str:
    """``{env:NAME:default}`` → ``default`` (``{env:NAME}`` → empty)."""
    out, rest = [], value
    while "{env:" in rest:
        head, _, tail = rest.partition("{env:")
        inner, _, rest = tail.partition("}")
        out += [head, inner.partition(":")[2]]
    return "".join([*out, rest]).strip()


class SwtBenchRunner(Runner):
    """Runs ``command`` on the test files (Django: their module labels) and reads the log with
    its parser. ``coverage``: the run is counted (``--tb=no`` is then left out).
    ``read``: the base commit's files (a ``tox`` command reads tox.ini)."""

    kind = KIND  # type: ignore[assignment]
    report_name = None

    def __init__(
        self, command: SwtCommand, coverage: bool, read: Callable[[str], str | None]
    ) -> None:
        super().__init__()
        words = [w for w in command.words if not (coverage and w == NO_TRACEBACK)]
        self.swt = command
        self.env = dict(command.env)
        self.parse = PARSERS[command.parser]
        self.django = command.parser == "django"
        if words[0] == "tox":
            tox_ini = read("tox.ini")
            if tox_ini is None:
                raise ToxError("the checkout has no tox.ini")
            words, env = tox_commands(tox_ini)
            self.env.update(env)
        self.words = words
        self.strip = command.traced_strip if coverage else ""

    def default_launcher(self, python: str, runtime: str | None = None) -> list[str]:
        first, *rest = self.words
        if first == "pytest":  # as their tracer starts it: no launcher, whose plugins would run
            return [python, "-m", "pytest", *rest]  # code of pytest's own repository
        if first in ("python", "python3"):
            return [python, *rest]
        return [python, first.removeprefix("./"), *rest]

    def arguments(self, files: list[str]) -> list[str]:
        if "{posargs}" in self.words:
            return []
        return [_django_label(path) for path in files] if self.django else list(files)

    def command(
        self,
        python: str,
        files: list[str],
        report: str,
        extra: Sequence[str] = (),
        runtime: str | None = None,
    ) -> list[str]:
        launched = self.default_launcher(python, runtime)
        if "{posargs}" in launched:
            at = launched.index("{posargs}")
            return [*launched[:at], *extra, *files, *launched[at + 1 :]]
        arguments = self.arguments(files)
        if self.strip and arguments:  # their str.strip of the traced command line's end
            last = arguments[-1].rstrip(self.strip)
            arguments = [*arguments[:-1], *([last] if last else [])]
        return [*launched, *extra, *arguments]

    def results(self, report, files):
        if report is None:
            return None
        parsed = self.parse(report.decode("utf-8", errors="replace"))
        return {test: _STATUS.get(status, TestStatus.ERROR) for test, status in parsed.items()}, []


def _django_label(path: str) -> str:
    """A test file as SWT-Bench names it to Django's runner (``get_test_directives``): without
    ``.py`` and a leading ``tests/``, slashes as dots."""
    path = path[: -len(".py")] if path.endswith(".py") else path
    path = path[len("tests/") :] if path.startswith("tests/") else path
    return path.replace("/", ".")
