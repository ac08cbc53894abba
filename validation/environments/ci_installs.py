"""What a project's CI installs for its tests, read from its CI files at a commit.

Install commands (``pip install …``, ``python -m pip install …``, ``pip3``, ``uv pip install``)
are read from:

- GitHub Actions workflows: the ``run`` of every step of the jobs that run the tests (a step
  running pytest, tox, nox, unittest, ``setup.py test``, ``make test`` or a ``runtests``
  script; every job when no workflow has one). ``${{ matrix.KEY }}`` takes the first value the job's
  matrix gives KEY (its first ``include`` that sets it, else its list's first); a step whose
  ``if`` tests the matrix (``matrix.KEY == 'V'``, ``!=``) is kept when some value of the
  matrix satisfies it: the tested job is the one that installs the most. Any other
  ``${{ … }}`` or ``$VARIABLE`` leaves the argument out.
- tox.ini's ``[testenv]`` ``commands_pre`` and ``commands`` (``deps`` are read by inference).
- noxfile.py: the literal arguments of ``session.install(…)`` in the sessions that run pytest.
- ``.travis.yml``, ``azure-pipelines.yml`` and ``appveyor.yml``: every string of the file.

Each job's commands are read in order: a later ``pip uninstall`` takes back what that job
installed before it. The project itself (``.``, ``-e .``) is not a requirement; its extras
(``.[test]``) are named apart. Requirement files (``-r``/``-c``) are returned as such lines for
:class:`~validation.environments.requirement_files.Requirements` to follow.

A VCS requirement (``git+https://github.com/pydicom/pydicom-data``, ``-e hg+…#egg=NAME``,
``NAME @ git+…``; ``git+``, ``hg+``, ``svn+``, ``bzr+``) or any ``NAME @ URL`` is named apart
too (``CiInstalls.from_urls``: the distribution's name → the URL, the evidence): runs have no
network and builds reach only the package index, so what can be had is the index's
distribution of that name, which may not exist or may not fit — an optional package, never a
requirement (see ``inference.infer_spec``). The name is the ``#egg=`` fragment's or the one
before ``@``, else the URL's last path part without ``.git`` (pydicom's CI installed its test
data from GitHub, and its tests downloaded it at run time without it). Any other path or URL
(a local folder, a wheel file, an archive) is left out.
"""

from __future__ import annotations

import ast
import configparser
import dataclasses
import re
import shlex
from collections.abc import Iterable, Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from builder.core.gitutil import git
from validation.environments.versioning import show

_OTHER_CI = ("azure-pipelines.yml", ".azure-pipelines.yml", ".travis.yml", "appveyor.yml")
_TESTS = re.compile(
    r"\b(pytest|py\.test|tox|nox|unittest|setup\.py\s+test|runtests|run_tests|make\s+test)\b"
)
_MATRIX = re.compile(r"\$\{\{\s*matrix\.([\w-]+)\s*\}\}")
_EXPRESSION = re.compile(r"\$\{\{.*?\}\}")
_CONDITION = re.compile(r"^\s*matrix\.([\w-]+)\s*(==|!=)\s*['\"]?([^'\"]*?)['\"]?\s*$")
_PROJECT = re.compile(r"^(?:\.|\./?)(?:\[([^\]]*)\])?$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
_VCS_URL = re.compile(r"^(?:git|hg|svn|bzr)\+[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_PROJECT_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
# a quoted string (kept) or a comment: `#` that starts a word, to the end of the line
_COMMENT = re.compile(r"(\"(?:\\.|[^\"\\])*\"|'[^']*')|(?:^|(?<=\s))#.*")
_SEPARATORS = re.compile(r"&&|\|\||;|\|")
_OPTIONS_WITH_VALUE = frozenset(
    {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--python", "-t",
     "--target", "--prefix", "--root", "--src", "--progress-bar", "--upgrade-strategy",
     "--only-binary", "--no-binary", "--platform", "--python-version"}
)  # fmt: skip


@dataclasses.dataclass
class CiInstalls:
    """Requirement lines (``-r``/``-c`` includes kept as lines), the project's extras they
    install, the distributions they install from a URL (canonical name → the URL: see the
    module), and the files they were read from."""

    lines: list[str] = dataclasses.field(default_factory=list)
    extras: list[str] = dataclasses.field(default_factory=list)
    sources: list[str] = dataclasses.field(default_factory=list)
    from_urls: dict[str, str] = dataclasses.field(default_factory=dict)

    def add(self, source: str, commands: Iterable[str]) -> None:
        """What the commands of one job (or file) install, in order: a later ``pip uninstall``
        takes back what the job installed before it (pydicom tests Pillow, then removes it)."""
        installed = CiInstalls()
        for verb, arguments in _pip_commands(commands):
            if verb == "install":
                installed._arguments(arguments)
            else:
                gone = {_name(word) for word in arguments if not word.startswith("-")}
                installed.lines = [line for line in installed.lines if _name(line) not in gone]
                installed.extras = [extra for extra in installed.extras if extra not in gone]
                for name in gone & set(installed.from_urls):
                    del installed.from_urls[name]
            if source not in self.sources:
                self.sources.append(source)
        self.lines += [line for line in installed.lines if line not in self.lines]
        self.extras += [extra for extra in installed.extras if extra not in self.extras]
        for name, url in installed.from_urls.items():
            self.from_urls.setdefault(name, url)

    def _arguments(self, arguments: list[str]) -> None:
        words = iter(_joined_direct_references(arguments))
        for word in words:
            if word in ("-r", "--requirement", "-c", "--constraint"):
                target = next(words, "")
                if target:
                    self.lines.append(f"{word} {target}")
            elif word.startswith(("-r", "-c")) and len(word) > 2 and not word.startswith("--"):
                self.lines.append(f"{word[:2]} {word[2:]}")
            elif word in ("-e", "--editable"):
                self._target(next(words, ""))
            elif word in _OPTIONS_WITH_VALUE:
                next(words, None)
            elif word.startswith("-"):
                continue
            else:
                self._target(word)

    def _target(self, word: str) -> None:
        project = _PROJECT.match(word)
        named = url_name(word) if "$" not in word else None
        if project:
            extras = project.group(1) or ""
            self.extras += [e.strip() for e in extras.split(",") if e.strip()]
        elif named is not None:
            self.from_urls.setdefault(named, word)
        elif word and "$" not in word and "/" not in word and not word.endswith(".whl"):
            self.lines.append(word)


def url_name(word: str) -> str | None:
    """The canonical name of the distribution a VCS requirement or ``NAME @ URL`` installs
    (see the module), or None when ``word`` is neither or names no valid project."""
    name, at, url = word.partition("@")
    if at and "://" in url and _PROJECT_NAME.match(name.strip().split("[")[0]):
        return canonicalize_name(name.strip().split("[")[0])  # NAME[extra] @ URL: its name
    if not _VCS_URL.match(word):
        return None
    location, _, fragment = word.partition("#")
    fields = parse_qs(fragment)
    egg = fields.get("egg", [""])[0].split("[")[0]
    if egg:
        name = egg
    else:
        subdirectory = fields.get("subdirectory", [""])[0].strip("/")
        path = urlsplit(location.split("+", 1)[1]).path
        last = (subdirectory or path.rstrip("/")).rsplit("/", 1)[-1]
        name = last.split("@", 1)[0].removesuffix(".git")
    return canonicalize_name(name) if _PROJECT_NAME.match(name) else None


def _joined_direct_references(arguments: list[str]) -> list[str]:
    """``arguments`` with an unquoted ``NAME @ URL`` (three words) as the one word it means."""
    joined: list[str] = []
    index = 0
    while index < len(arguments):
        if arguments[index + 1 : index + 2] == ["@"] and index + 2 < len(arguments):
            joined.append(" ".join(arguments[index : index + 3]))
            index += 3
        else:
            joined.append(arguments[index])
            index += 1
    return joined


def ci_installs(mirror: Path, commit: str) -> CiInstalls:
    """The install commands of the project's CI files at ``commit`` (see the module)."""
    found = CiInstalls()
    workflows = {
        path: _jobs(_yaml(show(mirror, commit, path))) for path in _workflows(mirror, commit)
    }
    tested = {path: [job for job in jobs if _runs_tests(job)] for path, jobs in workflows.items()}
    any_tested = any(tested.values())
    for path, jobs in workflows.items():
        for job in tested[path] if any_tested else jobs:
            found.add(path, _job_commands(job))
    found.add("tox.ini", _tox_commands(show(mirror, commit, "tox.ini")))
    found.add("noxfile.py", _nox_installs(show(mirror, commit, "noxfile.py")))
    for path in _OTHER_CI:
        found.add(path, _strings(_yaml(show(mirror, commit, path))))
    return found


def install_arguments(commands: Iterable[str]) -> Iterator[list[str]]:
    """The arguments after ``install`` of every pip install command in ``commands`` (shell
    text: lines, continuations and ``&&``/``;``/``|`` lists)."""
    for verb, arguments in _pip_commands(commands):
        if verb == "install":
            yield arguments


def _pip_commands(commands: Iterable[str]) -> Iterator[tuple[str, list[str]]]:
    """Each pip ``install`` or ``uninstall`` command of ``commands``, with its arguments."""
    for command in commands:
        for line in command.replace("\\\n", " ").splitlines():
            for words in _simple_commands(line):
                found = _pip(words)
                if found is not None:
                    yield found


def _simple_commands(line: str) -> list[list[str]]:
    """The words of each command of a shell line's ``&&``/``||``/``;``/``|`` list; a quoted
    separator is a word's (``"numpy; python_version<'3.9'"``). A line sh could not split
    (an open quote) gives nothing."""
    # a comment starts a word, as in sh (shlex's own comments cut one: ``#egg=``)
    uncommented = _COMMENT.sub(lambda match: match.group(1) or "", line)
    lexer = shlex.shlex(uncommented, posix=True, punctuation_chars="&|;")
    lexer.whitespace_split = True
    lexer.commenters = ""
    commands: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token and not token.strip("&|;") and _SEPARATORS.fullmatch(token):
                commands.append([])
            else:
                commands[-1].append(token)
    except ValueError:
        return []
    return [words for words in commands if words]


def _pip(words: list[str]) -> tuple[str, list[str]] | None:
    """The verb (``install``, ``uninstall``) and its arguments when ``words`` are such a pip
    command (after any ``VAR=value``, ``sudo`` or ``uv``), else None."""
    words = list(words)
    while words and (_ASSIGNMENT.match(words[0]) or words[0] in ("sudo", "time", "uv")):
        words = words[1:]
    program = re.split(r"[/\\]", words[0])[-1].lower() if words else ""
    if re.fullmatch(r"pip[\d.]*(\.exe)?", program):
        rest = words[1:]
    elif re.fullmatch(r"python[\d.]*(\.exe)?", program) and words[1:3] == ["-m", "pip"]:
        rest = words[3:]
    else:
        return None
    while rest and rest[0].startswith("-"):  # pip's own options (--quiet, --user)
        rest = rest[1:]
    if rest[:1] in (["install"], ["uninstall"]):
        return rest[0], rest[1:]
    return None


def _name(line: str) -> str:
    """A requirement's canonical name (a ``-r`` line's text as it is)."""
    try:
        return canonicalize_name(Requirement(line).name)
    except InvalidRequirement:
        return line


def _workflows(mirror: Path, commit: str) -> list[str]:
    listing = git(
        "ls-tree", "--name-only", commit, "--", ".github/workflows/", cwd=mirror, check=False
    )
    return sorted(p for p in listing.splitlines() if p.endswith((".yml", ".yaml")))


def _yaml(text: str | None) -> list[object]:
    if not text:
        return []
    try:
        return [document for document in yaml.safe_load_all(text) if document is not None]
    except yaml.YAMLError:
        return []


def _strings(node: object) -> Iterator[str]:
    if isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)
    elif isinstance(node, str):
        yield node


def _jobs(documents: list[object]) -> list[dict]:
    jobs: list[dict] = []
    for document in documents:
        if isinstance(document, dict) and isinstance(document.get("jobs"), dict):
            jobs += [job for job in document["jobs"].values() if isinstance(job, dict)]
    return jobs


def _runs_tests(job: dict) -> bool:
    return any(_TESTS.search(_EXPRESSION.sub("", run)) for _, run in _runs(job))


def _job_commands(job: dict) -> list[str]:
    matrix = _matrix(job)
    return [
        _substitute(run, matrix) for condition, run in _runs(job) if _may_hold(condition, matrix)
    ]


def _runs(job: dict) -> list[tuple[str, str]]:
    steps = job.get("steps")
    if not isinstance(steps, list):
        return []
    return [
        (str(step.get("if", "")), step["run"])
        for step in steps
        if isinstance(step, dict) and isinstance(step.get("run"), str)
    ]


def _matrix(job: dict) -> dict[str, list[str]]:
    """Each matrix key's values, those of its ``include`` entries first."""
    strategy = job.get("strategy")
    matrix = strategy.get("matrix") if isinstance(strategy, dict) else None
    if not isinstance(matrix, dict):
        return {}
    values: dict[str, list[str]] = {}
    includes = matrix.get("include")
    for entry in includes if isinstance(includes, list) else []:
        if isinstance(entry, dict):
            for key, value in entry.items():
                values.setdefault(str(key), []).append(_text(value))
    for key, value in matrix.items():
        if key not in ("include", "exclude") and isinstance(value, list):
            values.setdefault(str(key), []).extend(_text(item) for item in value)
    return values


def _text(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _may_hold(condition: str, matrix: dict[str, list[str]]) -> bool:
    """Whether a step's ``if`` holds for some job of the matrix (unknown conditions do)."""
    condition = condition.strip()
    if condition.startswith("${{") and condition.endswith("}}"):
        condition = condition[3:-2]
    parsed = _CONDITION.match(condition)
    if not parsed or parsed.group(1) not in matrix:
        return True
    key, operator, expected = parsed.groups()
    if operator == "==":
        return expected in matrix[key]
    return any(value != expected for value in matrix[key])


def _substitute(run: str, matrix: dict[str, list[str]]) -> str:
    def first(found: re.Match) -> str:
        values = matrix.get(found.group(1))
        return values[0] if values else found.group(0)

    return _EXPRESSION.sub("$_", _MATRIX.sub(first, run))  # any other expression: unknown


def _tox_commands(text: str | None) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text or "")
    except configparser.Error:
        return []
    return [
        parser.get("testenv", key, fallback="").replace("{toxinidir}", ".")
        for key in ("commands_pre", "commands")
    ]


def _nox_installs(text: str | None) -> list[str]:
    """``pip install ARGS`` for each ``session.install(ARGS)`` of the sessions that run
    pytest (literal string arguments only)."""
    try:
        module = ast.parse(text or "")
    except (SyntaxError, ValueError):
        return []
    sessions = [
        node
        for node in module.body
        if isinstance(node, ast.FunctionDef)
        and any("session" in ast.unparse(d) for d in node.decorator_list)
    ]
    commands = []
    for session in sessions:
        calls = [node for node in ast.walk(session) if isinstance(node, ast.Call)]
        runs_tests = any(_called(call) == "run" and "pytest" in _literals(call) for call in calls)
        if not runs_tests:
            continue
        for call in calls:
            if _called(call) == "install":
                commands.append(shlex.join(["pip", "install", *_literals(call)]))
    return commands


def _called(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else ""


def _literals(call: ast.Call) -> list[str]:
    return [
        arg.value
        for arg in call.args
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    ]
