"""Find the issues of a repository that a pull request's text says it closes."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["CLOSING_KEYWORDS", "closing_references"]

#: Keywords GitHub accepts for closing an issue from a pull request description.
CLOSING_KEYWORDS: tuple[str, ...] = (
    "close",
    "closes",
    "closed",
    "fix",
    "fixes",
    "fixed",
    "resolve",
    "resolves",
    "resolved",
)

# Replaces masked text (comments, code); it is neither a word character nor whitespace,
# so masked text can neither complete a keyword nor separate a keyword from a reference.
_MASK = "\x00"

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_FENCE_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
# A code span may wrap lines but not cross a blank line (a paragraph break).
_INLINE_CODE = re.compile(
    r"(?<!`)(?P<ticks>`+)(?!`)(?P<body>(?:(?!\n[ \t]*\n).)+?)(?<!`)(?P=ticks)(?!`)", re.DOTALL
)

_OWNER = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_NAME = r"[A-Za-z0-9._-]+"
_NUMBER = r"[1-9][0-9]*"


def closing_references(
    text: str, repo: str, web_hosts: Iterable[str] = ("github.com",)
) -> list[int]:
    """Return the numbers of issues of ``repo`` that ``text`` says it closes.

    ``repo`` is ``"owner/name"``; ``web_hosts`` are the host names (optionally with a port)
    whose issue URLs count, e.g. ``("github.example.com",)`` for GitHub Enterprise.

    A reference is a closing keyword (see :data:`CLOSING_KEYWORDS`, any case, optionally
    followed by a colon) followed by horizontal whitespace and one of ``#N``,
    ``owner/name#N`` or ``https://HOST/owner/name/issues/N``.  References to other
    repositories, pull-request URLs (``/pull/N``) and ``#0`` are ignored; repository and
    host names compare case-insensitively.

    Like GitHub, only the single reference directly after a keyword counts:
    ``fixes #1, #2 and #3`` closes only ``#1`` (write ``fixes #1, fixes #2``).

    Before matching, HTML comments (``<!-- ... -->``, possibly spanning lines; an
    unclosed comment runs to the end of the text) are removed, then fenced code blocks
    (``` or ~~~; an unclosed fence runs to the end of the text) and inline code spans are
    masked.  Indented code blocks are not recognised and are searched like prose.

    The result is de-duplicated and ordered by first appearance.
    """
    owner, name = _split_repo(repo)
    pattern = _reference_pattern(tuple(web_hosts))
    prose = _mask_inline_code(_mask_fenced_blocks(_strip_html_comments(text)))
    numbers: list[int] = []
    for match in pattern.finditer(prose):
        number = _number_for_repo(match, owner, name)
        if number is not None and number not in numbers:
            numbers.append(number)
    return numbers


def _split_repo(repo: str) -> tuple[str, str]:
    """Split ``"owner/name"`` into its lower-cased parts, rejecting malformed input."""
    parts = repo.split("/")
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"repo must look like 'owner/name', got {repo!r}")
    return parts[0].lower(), parts[1].lower()


def _reference_pattern(web_hosts: tuple[str, ...]) -> re.Pattern[str]:
    """Compile the keyword-plus-reference pattern for the given web hosts."""
    keywords = "|".join(sorted(CLOSING_KEYWORDS, key=len, reverse=True))
    url = ""
    if web_hosts:
        hosts = "|".join(re.escape(host) for host in web_hosts)
        url = (
            rf"|https?://(?:{hosts})/(?P<url_owner>{_OWNER})/(?P<url_name>{_NAME})"
            rf"/issues/(?P<url_number>{_NUMBER})(?![\w/])"
        )
    reference = (
        rf"(?:#(?P<local_number>{_NUMBER})(?!\w)"
        rf"|(?P<ref_owner>{_OWNER})/(?P<ref_name>{_NAME})#(?P<ref_number>{_NUMBER})(?!\w)"
        rf"{url})"
    )
    return re.compile(rf"(?<!\w)(?:{keywords}):?[^\S\r\n]+{reference}", re.IGNORECASE)


def _number_for_repo(match: re.Match[str], owner: str, name: str) -> int | None:
    """Return the referenced issue number if the match refers to ``owner/name``."""
    if match.group("local_number"):
        return int(match.group("local_number"))
    for prefix in ("ref", "url"):
        number = match.groupdict().get(f"{prefix}_number")
        if number and _same_repo(match, prefix, owner, name):
            return int(number)
    return None


def _same_repo(match: re.Match[str], prefix: str, owner: str, name: str) -> bool:
    """Tell whether the owner/name groups with ``prefix`` name ``owner/name``."""
    return (
        match.group(f"{prefix}_owner").lower() == owner
        and match.group(f"{prefix}_name").lower() == name
    )


def _strip_html_comments(text: str) -> str:
    """Remove HTML comments; an unclosed comment swallows the rest of the text."""
    return _HTML_COMMENT.sub("", text)


def _mask_fenced_blocks(text: str) -> str:
    """Blank out the lines of fenced code blocks, fences included (CommonMark rules)."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    fence: str | None = None
    for line in lines:
        if fence is None:
            fence = _opening_fence(line)
            out.append(_blank_line(line) if fence else line)
            continue
        if _closes_fence(line, fence):
            fence = None
        out.append(_blank_line(line))
    return "".join(out)


def _opening_fence(line: str) -> str | None:
    """Return the fence string if ``line`` opens a fenced code block."""
    match = _FENCE_OPEN.match(line.rstrip("\r\n"))
    if match is None:
        return None
    fence = match.group("fence")
    if fence[0] == "`" and "`" in match.group("info"):
        return None
    return fence


def _closes_fence(line: str, fence: str) -> bool:
    """Tell whether ``line`` closes a block opened by ``fence``."""
    stripped = line.rstrip("\r\n")
    indent = len(stripped) - len(stripped.lstrip(" "))
    body = stripped.strip()
    return indent <= 3 and len(body) >= len(fence) and set(body) == {fence[0]}


def _blank_line(line: str) -> str:
    """Replace a line's content with the mask, keeping its line ending."""
    ending = line[len(line.rstrip("\r\n")) :]
    return _MASK + ending


def _mask_inline_code(text: str) -> str:
    """Replace inline code spans (matching backtick runs) with the mask."""
    return _INLINE_CODE.sub(_MASK, text)
