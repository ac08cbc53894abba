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

import itertools
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
_DJANGO_STATUS = ("OK", "ok", "FAILED", "ERROR", "skipped")
_DJANGO_KEYWORD = re.compile(r"\b(?:test_|app_unmigrated|OK|ok|FAILED|ERROR|skipped)\b")
_DJANGO_HEAD = {"test": re.compile(r"\b(?:test|app_unmigrated)"),
                "test_": re.compile(r"\b(?:test_|app_unmigrated)")}  # fmt: skip
_NON_SPACE = re.compile(r"\S*")
_SPACE = re.compile(r"\s*")


class _Next:
    """The first place at or after a position where ``search`` finds something, remembered:
    queries that mostly move forward cost linear time in all (each stretch is searched once)."""

    def __init__(self, search: Callable[[int], int]) -> None:
        self.search = search
        self.low, self.found = 1, 0  # nothing cached: low > found

    def __call__(self, at: int) -> int:
        if not self.low <= at <= self.found:
            self.low, self.found = at, self.search(at)
        return self.found


class _DjangoScan:
    """One pass over a log, giving what ``re.finditer`` of SWT-Bench's Django patterns gives
    (``parse_log_django``'s): their patterns backtrack, quadratically on a log of repeated
    ``test_a (b) `` (minutes for 220,000 characters). Each part of the pattern has at most two
    ways to match, found from the next ``...``, keyword or bracket after it (remembered, so the
    log is read a constant number of times)."""

    def __init__(self, text: str) -> None:
        n = len(text)
        self.text = text
        self.space_end = _Next(lambda at: _SPACE.match(text, at).end())
        self.word_end = _Next(lambda at: _NON_SPACE.match(text, at).end())
        self.close = _Next(lambda at: _found(text.find(")", at), n))
        self.dots = _Next(lambda at: _found(text.find("...", at), n))
        self.keyword = _Next(lambda at: _found_match(_DJANGO_KEYWORD.search(text, at), n))
        self.keyword_near = _Next(lambda at: _found_match(_DJANGO_KEYWORD.search(text, at), n))
        """Each of the two ways after a name asks its own (each one's questions move forward)."""

    def name_end(self, at: int, head: str) -> int | None:
        r"""Where ``head([^\s]*)\s+\([^)]*\)`` matching at ``at`` ends (its greedy parts can
        match one way only), None when it does not."""
        text = self.text
        words = self.word_end(at + len(head))
        spaces = self.space_end(words) if words < len(text) else words
        if spaces == words or not text.startswith("(", spaces):
            return None
        close = self.close(spaces + 1)
        return close + 1 if close < len(text) else None

    def names(self, heads: str, pos: int = 0):
        """(start, end) of each match of the test-name pattern alone (``heads``: ``test`` or
        ``test_``), as finditer gives them."""
        text, head = self.text, _DJANGO_HEAD[heads]
        while (found := head.search(text, pos)) is not None:
            end = self.name_end(found.start(), found.group())
            if end is None:
                pos = found.start() + 1
                continue
            yield found.start(), end
            pos = end

    def status(self, at: int, keywords: _Next) -> tuple[int, str] | None:
        r"""``((.|\n)(?!\b(keyword)\b))*\s*\b(status)\b`` from ``at``: (its end, the
        status), None when it does not match."""
        text = self.text
        keyword = keywords(at + 1)  # the first keyword after at
        if keyword < len(text) and text[keyword - 1].isspace():
            found = self._status_at(keyword)
            if found is not None:
                return found
        return self._status_at(at)

    def _status_at(self, at: int) -> tuple[int, str] | None:
        found = _DJANGO_KEYWORD.match(self.text, at)
        if found is None or found.group() not in _DJANGO_STATUS:
            return None
        return found.end(), found.group()

    def tests(self):
        """(test name, status) of each match of their test pattern, as finditer gives them."""
        text, head, pos = self.text, _DJANGO_HEAD["test"], 0
        while (found := head.search(text, pos)) is not None:
            end = self.name_end(found.start(), found.group())
            result = None if end is None else self._rest(end)
            if result is None:  # no match here: the engine tries the next position
                pos = found.start() + 1
                continue
            yield text[found.start() : end], result[1]
            pos = result[0]

    def _rest(self, at: int) -> tuple[int, str] | None:
        r"""The rest of the pattern after a name ending at ``at``: (its end, the status).
        ``((.|\n)(?!\.\.\.))*\s*\.\.\.`` matches in two ways, tried in this order: the run
        up to the first ``...`` after ``at`` when a space stands before it (the greedy run),
        then the ``...`` at ``at`` itself (the run empty; a dot before the first ``...`` comes
        to this)."""
        text = self.text
        first = self.dots(at + 1) - 1  # the first character whose next three are "..."
        if first + 1 < len(text) and text[first].isspace():
            found = self.status(first + 4, self.keyword)
            if found is not None:
                return found
        if text.startswith("...", at):
            return self.status(at + 3, self.keyword_near)
        return None


def _found(index: int, missing: int) -> int:
    return missing if index < 0 else index


def _found_match(match: re.Match[str] | None, missing: int) -> int:
    return missing if match is None else match.start()


def parse_django(log: str) -> dict[str, str]:
    """``parse_log_django``: ``name (module.Class) ... ok|FAILED|ERROR|skipped`` (a status
    may come lines later), then ``ERROR: name (…)`` / ``FAIL: name (…)`` headers override;
    read in one pass (:class:`_DjangoScan`), where their patterns backtrack."""
    found: dict[str, str] = {}
    for name, status in _DjangoScan(log).tests():
        found[name] = _DJANGO_SUFFIXES[status]
    for line in log.split("\n"):
        for key, status in (("ERROR", ERROR), ("FAIL", FAILED)):
            if line.startswith(f"{key}:"):
                part = line.split(key)[1]
                names = list(itertools.islice(_DjangoScan(part).names("test_"), 2))
                if len(names) == 1:
                    found[part[names[0][0] : names[0][1]]] = status
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
