"""Split a pull request's git diff into a code patch and a test patch, byte-for-byte."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchedFile

from builder.core.diffs import lf_lines, parse_patch
from builder.core.errors import SwtError

__all__ = [
    "DEFAULT_TEST_PATTERNS",
    "PathRules",
    "SplitPatch",
    "UnparsableDiff",
    "split_patch",
]

#: Test paths by default: a directory called test/tests/testing anywhere in the path,
#: or a pytest-style file name.
DEFAULT_TEST_PATTERNS: tuple[str, ...] = (
    "test/",
    "tests/",
    "testing/",
    "test_*.py",
    "*_test.py",
    "conftest.py",
)

_DIFF_HEADER = "diff --git "
# Lines git may put between "diff --git" and the content ("extended header lines").
_EXTENDED_HEADERS = (
    "old mode ",
    "new mode ",
    "deleted file mode ",
    "new file mode ",
    "copy from ",
    "copy to ",
    "rename from ",
    "rename to ",
    "similarity index ",
    "dissimilarity index ",
    "index ",
)
_BINARY_DATA_LINE = re.compile(
    r"(?:(?:literal|delta) [0-9]+|[A-Za-z][0-9A-Za-z!#$%&()*+;<=>?@^_`{|}~-]+|)\n?"
)
_GIT_ESCAPES = {
    "a": 0x07, "b": 0x08, "t": 0x09, "n": 0x0A, "v": 0x0B, "f": 0x0C, "r": 0x0D,
    '"': 0x22, "\\": 0x5C,
}  # fmt: skip


class UnparsableDiff(SwtError, ValueError):
    """The text is not a git diff this module can split faithfully."""


@dataclass(frozen=True)
class PathRules:
    """Decide which repository paths are test files, from fnmatch-style patterns.

    Matching is case-sensitive (:func:`fnmatch.fnmatchcase`) on ``/``-separated paths, and
    each pattern's form selects what it is matched against:

    * ``name/`` (one trailing slash, no other slash): any *directory* component of the
      path, e.g. ``tests/`` matches ``tests/a.py`` and ``src/pkg/tests/data/x.json``;
    * ``glob`` (no slash): the *file name*, e.g. ``test_*.py`` matches ``src/test_a.py``;
    * a pattern with an inner slash: the *whole path*, where ``*`` also matches ``/``
      (``src/*/fixtures/*.py``); if it also ends with ``/`` it matches when the path lies
      under a matching directory (``docs/examples/`` matches ``docs/examples/a/b.py``).

    A path is a test path when any pattern matches.  Classification is by path only: the
    caller decides what to do with, e.g., non-Python files under ``tests/``.
    """

    test_patterns: tuple[str, ...] = DEFAULT_TEST_PATTERNS

    def __post_init__(self) -> None:
        patterns = self.test_patterns
        if isinstance(patterns, str):
            raise TypeError("test_patterns must be a sequence of patterns, not a string")
        patterns = tuple(patterns)
        for pattern in patterns:
            if not isinstance(pattern, str) or not pattern.strip("/"):
                raise ValueError(f"invalid test path pattern: {pattern!r}")
        object.__setattr__(self, "test_patterns", patterns)

    def is_test(self, path: str) -> bool:
        """Tell whether ``path`` (relative, ``/``-separated) is a test path."""
        parts = path.split("/")
        return any(_pattern_matches(pattern, parts) for pattern in self.test_patterns)


@dataclass(frozen=True)
class SplitPatch:
    """A git diff split into the non-test part (``patch``) and the test part.

    ``patch`` and ``test_patch`` are concatenations of the input's per-file diffs, each
    reproduced exactly and kept in input order.  File tuples follow input order too; a
    file is listed under its new path, except deleted files (old path).  ``code_files``
    and ``test_files`` include binary files; ``binary_*`` list the binary ones again.
    ``renamed``, ``deleted`` and ``added`` (new files, including copies) cover both halves.
    """

    patch: str
    test_patch: str
    code_files: tuple[str, ...]
    test_files: tuple[str, ...]
    binary_code_files: tuple[str, ...]
    binary_test_files: tuple[str, ...]
    renamed: tuple[str, ...]
    deleted: tuple[str, ...]
    added: tuple[str, ...]


@dataclass(frozen=True)
class _FileDiff:
    """One file's section of a git diff, with the metadata the split needs."""

    text: str
    path: str
    is_binary: bool
    is_renamed: bool
    is_deleted: bool
    is_added: bool


def split_patch(diff_text: str, rules: PathRules = PathRules()) -> SplitPatch:
    """Split a git diff (``git diff``/``git show``/GitHub ``.diff``) by :class:`PathRules`.

    ``diff_text`` must keep the diff's exact line endings (read bytes and decode them
    with ``errors="surrogateescape"``, not a universal-newlines text file), and needs
    ``git diff --binary`` output if binary files are to apply.  Every per-file section is
    copied unchanged, so ``git apply`` accepts each half at the base commit.

    unidiff parses and validates every section (hunk line counts) and supplies the path
    and the binary flag.  Its gaps in version 1.0.1 are worked around here:

    * quoted paths (``"a/caf\\303\\251.py"``) keep their quotes in unidiff; they are
      unquoted here;
    * new/deleted/renamed/copied files come from git's extended header lines (``new file
      mode``, ``deleted file mode``, ``rename to``, ``copy to``): unidiff calls an emptied
      file "removed", a filled empty file "added" and a copy a "rename".  Copies count
      as added files;
    * unidiff silently skips lines it does not understand (e.g. junk after the last
      hunk or inside a binary patch), so each section's layout is checked strictly.

    Known limitation: a path containing `` b/`` can confuse unidiff's ``diff --git``
    header parsing and make a valid section unparsable.

    An input without any ``diff --git`` section that is empty or blank gives an empty
    split; anything else that does not parse raises :class:`UnparsableDiff`.
    """
    files = [_parse_section(text, line_no) for text, line_no in _sections(diff_text)]
    code = [f for f in files if not rules.is_test(f.path)]
    tests = [f for f in files if rules.is_test(f.path)]
    return SplitPatch(
        patch="".join(f.text for f in code),
        test_patch="".join(f.text for f in tests),
        code_files=tuple(f.path for f in code),
        test_files=tuple(f.path for f in tests),
        binary_code_files=tuple(f.path for f in code if f.is_binary),
        binary_test_files=tuple(f.path for f in tests if f.is_binary),
        renamed=tuple(f.path for f in files if f.is_renamed),
        deleted=tuple(f.path for f in files if f.is_deleted),
        added=tuple(f.path for f in files if f.is_added),
    )


def _pattern_matches(pattern: str, parts: list[str]) -> bool:
    """Match one :class:`PathRules` pattern against a path split at ``/``."""
    body = pattern[:-1] if pattern.endswith("/") else pattern
    if "/" not in body:
        candidates = parts[:-1] if pattern.endswith("/") else parts[-1:]
        return any(fnmatchcase(part, body) for part in candidates)
    if pattern.endswith("/"):
        prefixes = ("/".join(parts[:i]) + "/" for i in range(1, len(parts)))
        return any(fnmatchcase(prefix, pattern) for prefix in prefixes)
    return fnmatchcase("/".join(parts), pattern)


def _split_lines(text: str) -> list[str]:
    """Split at ``\\n`` only (unlike str.splitlines), keeping the line endings."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def _sections(diff_text: str) -> list[tuple[str, int]]:
    """Cut the diff into per-file sections, each with its 1-based starting line number."""
    lines = _split_lines(diff_text)
    starts = [i for i, line in enumerate(lines) if line.startswith(_DIFF_HEADER)]
    preamble = "".join(lines[: starts[0]] if starts else lines)
    if preamble.strip():
        header = repr(_DIFF_HEADER.strip())
        problem = f"text before the first {header} line" if starts else f"no {header} line"
        raise UnparsableDiff(f"not a git diff: {problem} (line 1: {lines[0][:80]!r})")
    bounds = [*starts, len(lines)]
    return [("".join(lines[a:b]), a + 1) for a, b in zip(bounds, bounds[1:], strict=False)]


def _parse_section(text: str, line_no: int) -> _FileDiff:
    """Parse and validate one file's section; ``line_no`` locates it in the whole diff."""
    patched = _unidiff_file(text, line_no)
    path = _unquote_path(patched.path)
    lines = _split_lines(lf_lines(text))  # checked as parsed; ``text`` is kept as it is
    headers = _extended_headers(lines)
    _check_layout(lines[1 + len(headers) :], patched, line_no + 1 + len(headers), path)
    is_copy = any(h.startswith("copy to ") for h in headers)
    return _FileDiff(
        text=text,
        path=path,
        is_binary=patched.is_binary_file,
        is_renamed=any(h.startswith("rename to ") for h in headers),
        is_deleted=any(h.startswith("deleted file mode ") for h in headers),
        is_added=is_copy or any(h.startswith("new file mode ") for h in headers),
    )


def _unidiff_file(text: str, line_no: int) -> PatchedFile:
    """Parse a one-file section with unidiff, turning its errors into UnparsableDiff."""
    try:
        patch_set = parse_patch(text)
    except UnidiffParseError as error:
        raise UnparsableDiff(f"file diff starting at line {line_no}: {error}") from error
    if len(patch_set) != 1:
        raise UnparsableDiff(
            f"file diff starting at line {line_no}: expected one file, unidiff found "
            f"{len(patch_set)}"
        )
    return patch_set[0]


def _extended_headers(lines: list[str]) -> list[str]:
    """Return the extended header lines that follow the ``diff --git`` line."""
    headers: list[str] = []
    for line in lines[1:]:
        if not line.startswith(_EXTENDED_HEADERS):
            break
        headers.append(line)
    return headers


def _check_layout(body: list[str], patched: PatchedFile, line_no: int, path: str) -> None:
    """Check what follows the extended headers: nothing, a binary note or text hunks."""
    if not body:
        return
    if len(body) == 1 and body[0].startswith(("Binary files ", "Binary file ")):
        return
    if body[0] == "GIT binary patch\n":
        _check_binary_data(body[1:], line_no + 1, path)
        return
    if len(body) >= 2 and body[0].startswith("--- ") and body[1].startswith("+++ "):
        _check_hunks_cover(body, patched, line_no, path)
        return
    raise UnparsableDiff(f"{path}: unexpected line {line_no}: {body[0][:80]!r}")


def _check_binary_data(data: list[str], line_no: int, path: str) -> None:
    """Check that a ``GIT binary patch`` block holds only its own line kinds."""
    if not data or not data[0].startswith(("literal ", "delta ")):
        raise UnparsableDiff(f"{path}: binary patch without data at line {line_no}")
    for offset, line in enumerate(data):
        if not _BINARY_DATA_LINE.fullmatch(line):
            raise UnparsableDiff(f"{path}: bad binary patch line {line_no + offset}: {line[:80]!r}")


def _check_hunks_cover(body: list[str], patched: PatchedFile, line_no: int, path: str) -> None:
    """Check that unidiff's hunks account for every line after ``---``/``+++``."""
    consumed = 2 + sum(1 + len(hunk) for hunk in patched)
    if not len(patched):
        raise UnparsableDiff(f"{path}: no hunks after the file names at line {line_no}")
    if consumed != len(body):
        extra = line_no + consumed
        raise UnparsableDiff(
            f"{path}: unexpected line {extra} after the last hunk: {body[consumed][:80]!r}"
        )


def _unquote_path(path: str) -> str:
    """Undo git's C-style quoting of a path (``"caf\\303\\251.py"``), if present."""
    if len(path) < 2 or not (path.startswith('"') and path.endswith('"')):
        return path
    out = bytearray()
    body = path[1:-1]
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\" or i + 1 == len(body):
            out += char.encode("utf-8", "surrogateescape")
            i += 1
        elif body[i + 1] in _GIT_ESCAPES:
            out.append(_GIT_ESCAPES[body[i + 1]])
            i += 2
        elif re.fullmatch(r"[0-7]{3}", body[i + 1 : i + 4]):
            out.append(int(body[i + 1 : i + 4], 8))
            i += 4
        else:
            out += char.encode("utf-8")
            i += 1
    return out.decode("utf-8", "surrogateescape")
