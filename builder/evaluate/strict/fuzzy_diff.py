"""Unified diffs applied with tolerance: hunk counts ignored, line numbers as hints, context
matched exactly, then ignoring whitespace, then with up to two context lines dropped at either
end (as ``patch --fuzz=2``). Removed lines must always be found; only the matched span changes,
so a file is never cut short: a diff that creates a file which exists, or deletes a file its
hunks do not list in full, does not apply. Every byte outside the changed span stays as it
was (lines end as they did; an added line ends as its neighbour). Lines are git's: ended by
``\n``. The result is the new text of every file (None: deleted)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from builder.core.errors import SwtError
from builder.evaluate.lines import diff_lines, dominant_ending

MAX_FUZZ = 2
"""Context lines that may be dropped at each end of a hunk that does not match as written."""

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


_TOLERANCE = f", even ignoring whitespace and dropping up to {MAX_FUZZ} context lines at each end"


class FuzzyPatchError(SwtError, ValueError):
    """A diff cannot be read or one of its hunks is found nowhere (the message names it)."""


@dataclasses.dataclass
class Hunk:
    number: int  # counted over the whole diff, from 1
    old_start: int  # the line number the diff claims (a hint)
    lines: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (" "/"-"/"+", text)
    counts: tuple[int, int] = (0, 0)  # the header's old and new line counts (strict mode)
    trimmed: int = 0  # blank context lines taken off the end (maybe the gap before a file)


@dataclasses.dataclass
class FilePatch:
    old_path: str | None  # None: the file is created
    new_path: str | None  # None: the file is deleted
    hunks: list[Hunk] = dataclasses.field(default_factory=list)

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""


def parse(text: str) -> list[FilePatch]:
    """The file patches of a unified diff, read leniently (LLM output: wrong counts, stripped
    blank context lines, prose between files)."""
    files: list[FilePatch] = []
    lines = [line.removesuffix("\n").removesuffix("\r") for line in diff_lines(text)]
    index, hunks = 0, 0
    current: FilePatch | None = None
    while index < len(lines):
        line = lines[index]
        if (
            line.startswith("--- ")
            and index + 1 < len(lines)
            and lines[index + 1].startswith("+++ ")
        ):
            current = FilePatch(_path(line[4:]), _path(lines[index + 1][4:]))
            files.append(current)
            index += 2
            continue
        found = _HUNK.match(line)
        if found and current is not None:
            hunks += 1
            old_count, new_count = (int(n) if n else 1 for n in found.group(2, 4))
            hunk = Hunk(hunks, int(found.group(1)), counts=(old_count, new_count))
            index += 1
            while index < len(lines) and _in_hunk(lines, index):
                body = lines[index]
                if body.startswith("\\"):
                    index += 1
                    continue
                tag, rest = (body[0], body[1:]) if body else (" ", "")
                hunk.lines.append((tag, rest))
                index += 1
            _trim_trailing_blank_context(hunk)
            current.hunks.append(hunk)
            continue
        index += 1
    if not files:
        raise FuzzyPatchError("no file header ('--- a/…' then '+++ b/…') found in the diff")
    for patch in files:
        if not patch.hunks and patch.old_path is not None and patch.new_path is not None:
            raise FuzzyPatchError(f"{patch.path}: a file header without any '@@' hunk")
    return files


def _path(header: str) -> str | None:
    name = header.split("\t")[0].strip()
    if name == "/dev/null":
        return None
    if name.startswith(("a/", "b/")):
        name = name[2:]
    if not name or name.startswith("/") or ".." in name.split("/") or "\\" in name:
        raise FuzzyPatchError(f"the diff names {name!r}: not a relative path inside the repository")
    return name


def _file_header(lines: list[str], index: int) -> bool:
    following = lines[index + 1] if index + 1 < len(lines) else ""
    return lines[index].startswith("--- ") and following.startswith("+++ ")


def _in_hunk(lines: list[str], index: int) -> bool:
    line = lines[index]
    if line.startswith("@@") or line.startswith("diff --git"):
        return False
    if _file_header(lines, index):
        return False
    return line == "" or line[0] in " +-\\"


def _trim_trailing_blank_context(hunk: Hunk) -> None:
    """Blank lines after a hunk are the gap before the next file, not context."""
    while hunk.lines and hunk.lines[-1] == (" ", "") and len(hunk.lines) > 1:
        hunk.lines.pop()
        hunk.trimmed += 1


def _counted(hunk: Hunk, path: str) -> Hunk:
    """The hunk as its header counts it (strict mode): its lines must be as many as the
    header says, blank context lines taken off its end given back when the header counts
    them; a mismatch is an error."""
    old = sum(tag != "+" for tag, _ in hunk.lines)
    new = sum(tag != "-" for tag, _ in hunk.lines)
    missing = hunk.counts[0] - old
    if 0 < missing <= hunk.trimmed and hunk.counts[1] - new == missing:
        lines = hunk.lines + [(" ", "")] * missing
        return dataclasses.replace(hunk, lines=lines, trimmed=hunk.trimmed - missing)
    if (old, new) != hunk.counts:
        raise FuzzyPatchError(
            f"{path}: hunk {hunk.number} (at line {hunk.old_start}) has {old} old and {new} "
            f"new lines, its header says {hunk.counts[0]} and {hunk.counts[1]}"
        )
    return hunk


def apply(
    patches: list[FilePatch], read: Callable[[str], str | None], *, exact: bool = False
) -> dict[str, str | None]:
    """The new text of every file the diff touches (None: deleted); ``read(path)`` gives a
    file's current text (None: absent). ``exact``: hunks must match as written (at any offset,
    as ``git apply``), no whitespace tolerance, no context dropped, and hold as many lines as
    their headers say."""
    result: dict[str, str | None] = {}

    def current(path: str) -> str | None:
        return result[path] if path in result else read(path)

    for patch in patches:
        source = patch.old_path
        text = None if source is None else current(source)
        if source is not None and text is None:
            raise FuzzyPatchError(f"{source}: the diff changes a file that does not exist")
        target = patch.new_path
        if target is not None and target != source and current(target) is not None:
            verb = "creates" if source is None else f"renames {source} to"
            raise FuzzyPatchError(f"{target}: the diff {verb} {target}, which exists")
        new = _apply_file(patch, text, exact)
        if target is None:
            if new:
                left = len(diff_lines(new))
                raise FuzzyPatchError(
                    f"{source}: the diff deletes {source} but its hunks do not list all of it "
                    f"({left} line{'s' if left != 1 else ''} left)"
                )
            result[source or ""] = None
            continue
        if source is not None and source != target:
            result[source] = None
        result[target] = new
    return result


def _apply_file(patch: FilePatch, text: str | None, exact: bool) -> str:
    """``text`` with the patch's hunks applied: only the matched spans change; a kept line
    keeps its ending, an added one takes its neighbour's (the file's usual one at its start)."""
    lines = diff_lines(text or "")
    usual = dominant_ending(lines)
    final_newline = text is None or text == "" or text.endswith("\n")
    offset = 0
    for hunk in patch.hunks:
        if exact:
            hunk = _counted(hunk, patch.path)
        hint = hunk.old_start - 1 + offset
        start, length, kept = _locate(hunk, lines, hint, patch.path, exact)
        before = _ending(lines[start - 1]) if start else ""
        after = _ending(lines[start + length - 1]) if length else ""
        replacement = _replacement(
            hunk, lines[start : start + length], kept, before or after or usual
        )
        lines[start : start + length] = replacement
        offset += len(replacement) - length
    for index, line in enumerate(lines[:-1]):
        if not _ending(line):  # was the file's unended last line; no longer last
            lines[index] = line + usual
    if lines and not final_newline:
        lines[-1] = _content(lines[-1])
    elif lines and not _ending(lines[-1]):
        lines[-1] += usual
    return "".join(lines)


def _locate(
    hunk: Hunk, lines: list[str], hint: int, path: str, exact: bool
) -> tuple[int, int, tuple[int, int]]:
    """Where the hunk's old lines are: (start, length, (context dropped before, after))."""
    old = [(tag, text) for tag, text in hunk.lines if tag != "+"]
    if not old:
        return min(max(hint + 1 if hunk.old_start else 0, 0), len(lines)), 0, (0, 0)
    lead = _leading_context(old)
    trail = _leading_context(old[::-1])
    for fuzz in range(1 if exact else MAX_FUZZ + 1):
        drop_front, drop_back = min(fuzz, lead), min(fuzz, trail)
        if fuzz and (drop_front, drop_back) == (0, 0):
            break
        wanted = [text for _, text in old[drop_front : len(old) - drop_back]]
        if not wanted:
            break
        for same in (_exact,) if exact else (_exact, _rstripped, _collapsed):
            starts = [
                i
                for i in range(len(lines) - len(wanted) + 1)
                if all(same(_content(lines[i + k]), w) for k, w in enumerate(wanted))
            ]
            if starts:
                best = min(starts, key=lambda i: (abs(i - drop_front - hint), i))
                return best, len(wanted), (drop_front, drop_back)
    removed = sum(tag == "-" for tag, _ in old)
    tolerance = ", as written" if exact else _TOLERANCE
    raise FuzzyPatchError(
        f"{path}: hunk {hunk.number} (at line {hunk.old_start}) matches nowhere in the file: "
        f"its {len(old) - removed} context and {removed} removed lines are not found{tolerance}"
    )


def _ending(line: str) -> str:
    """A git line's ending: ``\r\n``, ``\n``, or "" (the file's unended last line)."""
    return "\r\n" if line.endswith("\r\n") else "\n" if line.endswith("\n") else ""


def _content(line: str) -> str:
    return line[: len(line) - len(_ending(line))]


def _leading_context(old: list[tuple[str, str]]) -> int:
    count = 0
    for tag, _ in old:
        if tag != " ":
            break
        count += 1
    return count


def _exact(line: str, wanted: str) -> bool:
    return line == wanted


def _rstripped(line: str, wanted: str) -> bool:
    return line.rstrip() == wanted.rstrip()


def _collapsed(line: str, wanted: str) -> bool:
    return "".join(line.split()) == "".join(wanted.split())


def _replacement(hunk: Hunk, matched: list[str], kept: tuple[int, int], newline: str) -> list[str]:
    """The hunk's new lines for the matched span: context as the file has it, additions as the
    diff has them (an addition among dropped context lines stays on its side of the span),
    each ended as the line before it (``newline`` for the first)."""
    drop_front, drop_back = kept
    old_positions = [i for i, (tag, _) in enumerate(hunk.lines) if tag != "+"]
    if not old_positions:
        return [text + newline for _, text in hunk.lines]
    first = old_positions[drop_front]
    last = old_positions[len(old_positions) - 1 - drop_back]
    out: list[str] = []
    file_lines = iter(matched)
    for position, (tag, text) in enumerate(hunk.lines):
        if tag == "+":
            out.append(text + (_ending(out[-1]) if out and _ending(out[-1]) else newline))
        elif first <= position <= last:
            actual = next(file_lines)
            if tag == " ":
                out.append(actual)
    return out
