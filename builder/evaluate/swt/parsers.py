"""SWT-Bench's log parsers, by name: a run's log → test id → status, quirks included.

Written from the rules of SWT-Bench's ``src/log_parsers.py`` (logic-star-ai/swt-bench), which
``MAP_REPO_TO_PARSER`` picks per repository (``commands.toml`` names them). Each reads every
line of the log, whatever printed it: a status word at a line's start makes the next word a test
id. The quirks that follow from that are theirs and kept: an id is cut at its first whitespace;
``SKIPPED [1] path:line: reason`` (pytest's summary of a skip) records a test named ``[1]``;
pytest's ``ERROR: file or directory not found: PATH`` records a test named ``file``; lines an
inner pytest run prints (pytest's own tests) read as tests; the last line naming a test wins.
Statuses are ``PASSED``, ``FAILED``, ``SKIPPED``, ``ERROR`` (and what follows ``ERROR`` or
``FAILED`` on the line is dropped), as their parsers return them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

PASSED, FAILED, SKIPPED, ERROR = "PASSED", "FAILED", "SKIPPED", "ERROR"
STATUSES = (FAILED, PASSED, SKIPPED, ERROR)
"""Their ``TestStatus`` values, in the order their parsers test a line's start."""

Parser = Callable[[str], dict[str, str]]


def _pytest_line(line: str) -> tuple[str, str] | None:
    """(status word, test id) of a line starting with a status; the words are split on
    whitespace after a ``FAILED`` line's `` - `` became a space. None: not such a line."""
    if not line.startswith(STATUSES):
        return None
    if line.startswith(FAILED):
        line = line.replace(" - ", " ")
    words = line.split()
    if len(words) <= 1:
        return None
    return words[0], words[1]


def parse_pytest(log: str) -> dict[str, str]:
    """``parse_log_pytest``: ``STATUS id`` lines (the ``-rA`` summary); the status word as
    written (``ERROR:`` of pytest's own error lines too)."""
    found: dict[str, str] = {}
    for line in log.split("\n"):
        parsed = _pytest_line(line)
        if parsed is not None:
            found[parsed[1]] = parsed[0]
    return found


_OPTION = re.compile(r"(.*?)\[(.*)\]")


def parse_pytest_options(log: str) -> dict[str, str]:
    """``parse_log_pytest_options`` (requests, pylint, pydicom): as :func:`parse_pytest`, and a
    parametrize id starting with one ``/`` (no ``*``) reduced to ``/`` and its last component."""
    found: dict[str, str] = {}
    for line in log.split("\n"):
        parsed = _pytest_line(line)
        if parsed is None:
            continue
        status, test = parsed
        option = _OPTION.search(test)
        if option:
            main, value = option.groups()
            if value.startswith("/") and not value.startswith("//") and "*" not in value:
                value = "/" + value.split("/")[-1]
            test = f"{main}[{value}]"
        found[test] = status
    return found


_COLOUR = re.compile(r"\[(\d+)m")
_CONTROL = str.maketrans("", "", "".join(chr(code) for code in range(1, 32)))


def parse_pytest_v2(log: str) -> dict[str, str]:
    """``parse_log_pytest_v2`` (astropy, scikit-learn, sphinx): colour codes and control
    characters removed first; ``STATUS id`` lines, and (older pytest's verbose lines) a line
    *ending* with a status word: its first word is the id, its second the status. A line that
    is a status word alone is skipped (theirs stops with an ``IndexError``: no report)."""
    found: dict[str, str] = {}
    for raw in log.split("\n"):
        line = _COLOUR.sub("", raw).translate(_CONTROL)
        if line.startswith(STATUSES):
            if line.startswith(FAILED):
                line = line.replace(" - ", " ")
            words = line.split()
            if len(words) > 1:  # a lone status word: their parser raises IndexError there
                found[words[1]] = words[0]
        elif line.endswith(STATUSES):
            words = line.split()
            if len(words) >= 2:
                found[words[0]] = words[1]
    return found


def parse_seaborn(log: str) -> dict[str, str]:
    """``parse_log_seaborn``: ``FAILED id`` lines, ``id PASSED …`` (verbose) and ``PASSED id``
    lines; ``ERROR`` and ``SKIPPED`` lines are not read (a file that cannot be collected
    gives no test)."""
    found: dict[str, str] = {}
    for line in log.split("\n"):
        if line.startswith(FAILED):
            found[line.split()[1]] = FAILED
        elif f" {PASSED} " in line:
            words = line.split()
            if words[1] == PASSED:
                found[words[0]] = PASSED
        elif line.startswith(PASSED):
            found[line.split()[1]] = PASSED
    return found


_SYMPY_STATUS = {"E": ERROR, "F": FAILED, "ok": PASSED}


def parse_sympy(log: str) -> dict[str, str]:
    """``parse_log_sympy``: tests are keyed by their bare function name (same-named tests of
    two files are one); a failure's header (``___ path.py:test_x ___``) makes it ``FAILED``,
    then each ``test_x ok|F|E`` line sets its status."""
    found: dict[str, str] = {}
    for name in _sympy_failures(log):
        found[name] = FAILED
    for name, status in _sympy_tests(log):
        found[name] = _SYMPY_STATUS[status]
    return found


def _sympy_failures(log: str) -> list[str]:
    r"""The names ``_\n(_*) (.*)\.py::?(.*) (_*)`` (their pattern of a failure's header line,
    ``___ path.py:test_x ___``) captures after ``.py:``, found in one pass: as a pattern it
    tries every ``.py:`` of a line against every space after it (a line of 200,000 characters:
    over a minute). A match starts at a ``_`` ending a line; the next line is underscores, a
    space, then the text up to its last ``.py:`` that has a space after it (and a second ``:``
    taken when there is one), the name up to the line's last space, and the underscores after
    that space, where the next match is looked for."""
    names, position = [], 0
    while True:
        start = log.find("_\n", position)
        if start < 0:
            return names
        line_start = start + 2
        line_end = log.find("\n", line_start)
        line_end = len(log) if line_end < 0 else line_end
        line = log[line_start:line_end]
        bar = len(line) - len(line.lstrip("_"))
        rest = line[bar + 1 :] if line[bar : bar + 1] == " " else None
        last_space = rest.rfind(" ") if rest is not None else -1
        at = rest.rfind(".py:", 0, last_space) if last_space >= 0 else -1
        if at < 0:
            position = start + 1
            continue
        name_start = at + 4 + (1 if rest[at + 4 : at + 5] == ":" else 0)
        names.append(rest[name_start:last_space])
        tail = rest[last_space + 1 :]
        underscores = len(tail) - len(tail.lstrip("_"))
        position = line_start + bar + 1 + last_space + 1 + underscores


_TOKEN = re.compile(r"\S+")


def _sympy_tests(log: str) -> list[tuple[str, str]]:
    r"""What ``test_([^\s]*)\s+(E|F|ok)\s`` finds in ``log`` (their sympy pattern), found in one
    pass over the log's words: run as a pattern it tries every ``test_`` of a long word again
    (200,000 characters of ``test_test_…``: two minutes). A match starts at the first
    ``test_`` of a word, takes the rest of the word as the name, and needs the next word to
    be ``E``, ``F`` or ``ok`` with whitespace after it, which it consumes."""
    words = list(_TOKEN.finditer(log))
    found, index = [], 0
    while index < len(words):
        word = words[index].group()
        start = word.find("test_")
        status = words[index + 1] if index + 1 < len(words) else None
        if (
            start >= 0
            and status is not None
            and status.group() in _SYMPY_STATUS
            and status.end() < len(log)  # whitespace follows it (a word ends at whitespace)
        ):
            found.append(("test_" + word[start + len("test_") :], status.group()))
            index += 2
            continue
        index += 1
    return found


_DJANGO_SUFFIXES = {"ok": PASSED, "OK": PASSED, "skipped": SKIPPED, "FAILED": FAILED,
                    "ERROR": ERROR}  # fmt: skip
_DJANGO_TEST = re.compile(
    r"(?P<testname>\b(test|app_unmigrated)([^\s]*)\s+\([^)]*\))((.|\n)(?!\.\.\.))*\s*\.\.\."
    r"((.|\n)(?!\b(test_|app_unmigrated|OK|ok|FAILED|ERROR|skipped)\b))*\s*"
    r"\b(?P<status>OK|ok|FAILED|ERROR|skipped)\b",
    flags=re.MULTILINE,
)
_DJANGO_FAILURE = re.compile(r"(?P<testname>\b(test_|app_unmigrated)([^\s]*)\s+\([^)]*\))")


def parse_django(log: str) -> dict[str, str]:
    """``parse_log_django``: ``name (module.Class) ... ok|FAILED|ERROR|skipped`` (a status
    may come lines later), then ``ERROR: name (…)`` / ``FAIL: name (…)`` headers override.
    Their pattern, kept as it is, is super-linear on a hostile log (220,000 characters of
    ``test_a (b) `` take minutes): unlike sympy's, no one-pass equivalent is written yet."""
    found: dict[str, str] = {}
    for match in _DJANGO_TEST.finditer(log):
        found[match.group("testname")] = _DJANGO_SUFFIXES[match.group("status")]
    for line in log.split("\n"):
        for key, status in (("ERROR", ERROR), ("FAIL", FAILED)):
            if line.startswith(f"{key}:"):
                tests = list(_DJANGO_FAILURE.finditer(line.split(key)[1]))
                if len(tests) == 1:
                    found[tests[0].group("testname")] = status
    return found


def parse_matplotlib(log: str) -> dict[str, str]:
    """``parse_log_matplotlib``: :func:`parse_pytest` after ``MouseButton.LEFT``/``RIGHT`` in a
    line became ``1``/``3``."""
    text = log.replace("MouseButton.LEFT", "1").replace("MouseButton.RIGHT", "3")
    return parse_pytest(text)


PARSERS: dict[str, Parser] = {
    "pytest": parse_pytest,
    "pytest_options": parse_pytest_options,
    "pytest_v2": parse_pytest_v2,
    "seaborn": parse_seaborn,
    "sympy": parse_sympy,
    "django": parse_django,
    "matplotlib": parse_matplotlib,
}
"""The parsers by the name ``commands.toml`` gives them."""
