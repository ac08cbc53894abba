"""The changes SWT-Bench's harness extracts from a raw prediction per patch type, quirks and all."""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import subprocess
import tempfile
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path

from rapidfuzz.distance import Levenshtein

from builder.core.errors import SwtError

PATCH_TYPES = ("vanilla", "fuzzy", "custom")
"""The patch types of SWT-Bench's ``--patch_types``, tried in the order given."""

Read = Callable[[str], str | None]

_UNFLUSHED_CHUNK = 8192
"""io.TextIOWrapper's chunk: a write of fewer bytes stays in Python's buffer, unflushed."""

# Their regular expressions, spelled without needless escapes (same matches). A file's diff:
# an optional ``diff ...`` line, ``--- a/``, ``+++ b/``, then everything up to the next
# ``diff ``, ``--- a/`` or the end, wherever these appear (even inside a line).
_FILE_DIFF = re.compile(
    r"(?:diff[\w. /-]+\n)?---\s+a/.*?\n\+\+\+\s+b/.*?(?=diff |--- a/|\Z)", re.DOTALL
)
_FILE_HEADER = re.compile(r"---\s+a/.+\n\+\+\+\s+b/.+")
# A hunk needs both counts; its body runs to the next ``diff ``, ``--- a/``, ``@@ -`` or the end.
_HUNK = re.compile(
    r"@@\s+-(\d+),(\d+)\s+\+(\d+),(\d+)\s+@@(.+?)(?=diff |--- a/|@@ -|\Z)", re.DOTALL
)


@dataclasses.dataclass(frozen=True)
class Extraction:
    """What the harness would apply for a prediction, and how it got there."""

    new_texts: dict[str, str | None]
    """Path -> its text after extraction (None: deleted); only the files that changed. Empty:
    the harness runs nothing for the prediction."""
    succeeded: bool  # a patch type reported success (their flag; changes may exist without it)
    used: str  # the patch type that succeeded ("" if none)
    log: str  # one line per try: what it did


class _Crash(SwtError):
    """Their extraction script would raise here: it exits non-zero and nothing is extracted."""


class _Escape(SwtError):
    """A path leaves the repository (absolute, ``..``): the prediction fails as a whole, and
    nothing is written outside (their code would write there)."""


def extract(
    text: str,
    patch_types: Sequence[str],
    read: Read,
    *,
    is_dir: Callable[[str], bool] | None = None,
) -> Extraction:
    """The changes SWT-Bench's evaluation extracts from the raw prediction ``text`` with
    ``patch_types``, against the base commit's files (``read``: a path's text, None if absent).

    ``["vanilla"]`` alone: the text, binary file diffs removed, goes to ``git apply -v`` as
    is. Otherwise their ``extract_patches.py`` runs in the base checkout: each type is tried
    in order until one reports success, never resetting the checkout in between, and
    whatever the checkout then holds (``git add -A``, so new ignored files are left out) is
    the extracted patch, success or not. A try whose code would raise in their script
    (malformed headers, an empty rewrite block, ...) ends the script: nothing is extracted.
    There vanilla is their minimal patch given to git unflushed: git sees no patch under
    8192 bytes.

    Directories decide some outcomes (their ``open`` of a directory, or of a new file in a
    directory that does not exist, raises): ``is_dir`` tells whether the base checkout has a
    directory at a path; without it, a directory is taken to exist when a file ``read``
    found or a try wrote lies in it.

    Deliberate departures: a path outside the repository (absolute, ``..``) fails the
    prediction instead of being written there. The ``custom`` type parses and unparses with
    this interpreter's ``ast`` (theirs: Python 3.11 in the harness's containers)."""
    patch_types = list(patch_types)
    if not patch_types:
        raise ValueError("no patch type given")
    unknown = [name for name in patch_types if name not in PATCH_TYPES]
    if unknown:
        raise ValueError(f"unknown patch type(s) {unknown}; known: {', '.join(PATCH_TYPES)}")
    testbed = _Testbed(read, is_dir)
    if patch_types == ["vanilla"]:
        return _vanilla_alone(text, testbed)
    return _extraction_script(text, patch_types, testbed)


# --- The two flows --------------------------------------------------------------------------


def _vanilla_alone(text: str, testbed: _Testbed) -> Extraction:
    """run_instance with vanilla alone: ``git apply -v - <<EOF`` of the text with its binary
    diffs removed; the here-document adds a newline."""
    applied = _git_apply(remove_binary_diffs(text) + "\n", testbed)
    if not applied.ok:
        return Extraction({}, False, "", f"vanilla (alone): {applied.message}")
    return Extraction(
        applied.files, True, "vanilla", f"vanilla (alone): applied {_names(applied.files)}"
    )


def _extraction_script(text: str, patch_types: list[str], testbed: _Testbed) -> Extraction:
    """extract_patches.py: the raw text is read back from a file (universal newlines), the
    types are tried in order on one checkout, and the checkout's changes are the result."""
    text = _universal_newlines(text)
    log: list[str] = []
    used = ""
    for patch_type in patch_types:
        try:
            ok, note = _TRIES[patch_type](text, testbed)
        except _Crash as crash:
            log.append(f"{patch_type}: their script stops ({crash}): nothing is extracted")
            return Extraction({}, False, "", "\n".join(log))
        except _Escape as escape:
            log.append(f"{patch_type}: {escape}: the prediction fails")
            return Extraction({}, False, "", "\n".join(log))
        log.append(f"{patch_type}: {note}")
        if ok:
            used = patch_type
            break
    changes = testbed.changes()
    ignored = _ignored_new_files(changes, testbed)
    if ignored:
        log.append(f"left out as git add -A does (ignored new files): {', '.join(ignored)}")
    new_texts = {path: text for path, text in changes.items() if path not in ignored}
    return Extraction(new_texts, bool(used), used, "\n".join(log))


# --- The checkout -----------------------------------------------------------------------------


class _Testbed:
    """The base checkout under the writes their script made so far (texts as on disk)."""

    def __init__(self, read: Read, is_dir: Callable[[str], bool] | None) -> None:
        self._read = read
        self._is_dir = is_dir
        self._base: dict[str, str | None] = {}
        self._writes: dict[str, str | None] = {}
        self._made: set[str] = set()  # directories their mkdir made

    def base(self, path: str) -> str | None:
        if path not in self._base:
            self._base[path] = self._read(path)
        return self._base[path]

    def raw(self, path: str) -> str | None:
        return self._writes[path] if path in self._writes else self.base(path)

    def text(self, path: str) -> str | None:
        """The file as Python's ``open(path)`` reads it (universal newlines)."""
        raw = self.raw(path)
        return None if raw is None else _universal_newlines(raw)

    def write(self, path: str, text: str | None) -> None:
        self._writes[path] = text

    def is_dir(self, path: str) -> bool:
        if not path or path in self._made:
            return True
        files = [p for p, text in self._writes.items() if text is not None]
        if self._is_dir is None:  # the directories known to hold a file
            files += [p for p, text in self._base.items() if text is not None]
        if any(file.startswith(path + "/") for file in files):
            return True
        return self._is_dir is not None and self._is_dir(path)

    def make_parents(self, path: str) -> None:
        """Their ``Path(path).parent.mkdir(parents=True, exist_ok=True)``."""
        parts = path.split("/")[:-1]
        self._made.update("/".join(parts[:depth]) for depth in range(1, len(parts) + 1))

    def check_openable(self, path: str) -> None:
        """_Crash where their ``open(path)`` raises what they do not catch: the path is a
        directory, or lies under a file."""
        if self.is_dir(path):
            raise _Crash(f"IsADirectoryError: {path or '.'!r} is a directory")
        parts = path.split("/")
        for depth in range(1, len(parts)):
            if self.raw("/".join(parts[:depth])) is not None:
                raise _Crash(f"NotADirectoryError: {path!r} lies under a file")

    def changes(self) -> dict[str, str | None]:
        return {path: text for path, text in self._writes.items() if text != self.base(path)}


def _universal_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _inside(path: str) -> str:
    """``path`` relative to the checkout's root, ``.`` parts and repeated slashes dropped;
    _Escape when it is absolute or has a ``..`` part, or ends in a slash (a directory: kept
    out too); _Crash on a NUL (their open() raises ValueError)."""
    if "\0" in path:
        raise _Crash(f"ValueError: embedded null byte in path {path!r}")
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if path.startswith("/") or ".." in parts:
        raise _Escape(f"path {path!r} leaves the repository")
    if path.endswith("/"):
        raise _Escape(f"path {path!r} names a directory")
    return "/".join(parts)


def _names(files: dict[str, str | None]) -> str:
    return ", ".join(sorted(files)) or "(no file changed)"


# --- vanilla: their minimal patch, then git apply -------------------------------------------


def _try_vanilla(text: str, testbed: _Testbed) -> tuple[bool, str]:
    """Their apply_patch: the minimal patch written to a NamedTemporaryFile that is not
    flushed before ``git apply -v`` reads it, so git sees it only when it fills Python's
    text-file chunk (8192 bytes, UTF-8): a shorter patch is an empty file to git."""
    patch = _minimal_patch(text)
    if len(patch.encode("utf-8", "surrogateescape")) < _UNFLUSHED_CHUNK:
        return False, (
            "git apply failed: error: No valid patches in input (their temporary file is "
            f"not flushed: a patch under {_UNFLUSHED_CHUNK} bytes is empty to git)"
        )
    applied = _git_apply(patch, testbed)
    if not applied.ok:
        return False, applied.message
    for path, new in applied.files.items():
        testbed.write(path, new)
    return True, f"applied {_names(applied.files)}"


def remove_binary_diffs(text: str) -> str:
    """Their remove_binary_diffs: the text split at ``diff --git`` lines (``splitlines``, so
    any line separator becomes ``\\n``) without the parts that contain ``Binary files``
    anywhere, rejoined, ending in a newline."""
    kept: list[str] = []
    part: list[str] = []
    binary = False
    for line in [*text.splitlines(), "diff --git"]:
        if line.startswith("diff --git"):
            if part and not binary:
                kept.append("\n".join(part))
            part, binary = [], False
        binary = binary or "Binary files" in line
        part.append(line)
    return "\n".join(kept) + "\n"


def _minimal_patch(text: str) -> str:
    """Their extract_minimal_patch: per file diff its first ``--- a/``/``+++ b/`` header pair,
    then each hunk cut to its changed lines and one line after them (each line's trailing
    whitespace stripped), its start moved past the lines cut and its counts recomputed."""
    out: list[str] = []
    for file_diff in _FILE_DIFF.findall(remove_binary_diffs(text)):
        out.append(_first_header(file_diff) + "\n")
        delta = 0
        for old_start, _, _, _, body in _HUNK.findall(file_diff):
            _check_body(body)
            lines, skipped = _trim(body)
            start = int(old_start) + skipped
            old_count, new_count = _counts(lines)
            out.append(f"@@ -{start},{old_count} +{start + delta},{new_count} @@\n")
            out.append("\n".join(lines) + "\n")
            delta += new_count - old_count
    return "".join(out)


def _first_header(file_diff: str) -> str:
    headers = _FILE_HEADER.findall(file_diff)
    if not headers:  # e.g. an empty path or a header spread over lines: their [0] raises
        raise _Crash("IndexError: a file diff without a one-line --- a/ +++ b/ header")
    return headers[0]


def _check_body(body: str) -> None:
    if body.isnumeric():  # they turn every numeric group into an int, the body too
        raise _Crash("AttributeError: a hunk body that is a number")


def _trim(body: str) -> tuple[list[str], int]:
    """Their strip_content: the body's lines (the first is the rest of the header line) from
    the first ``-``/``+`` line to the one after the last, right-stripped; and how many lines
    came before it, the header's rest not counted (-1 when it is itself a change)."""
    lines = body.split("\n")
    marks = [index for index, line in enumerate(lines) if line[:1] in ("-", "+")]
    first = marks[0] if marks else len(lines)
    end = marks[-1] + 2 if marks else 1
    return [line.rstrip() for line in lines[first:end]], first - 1


def _counts(lines: list[str]) -> tuple[int, int]:
    """Their get_hunk_stats: old and new line counts, blank lines at the ends not counted, but
    a hunk with no lines counts one context line."""
    counted = "\n".join(lines).strip("\n").split("\n")
    removed = sum(line.startswith("-") for line in counted)
    added = sum(line.startswith("+") for line in counted)
    context = len(counted) - removed - added
    return context + removed, context + added


@dataclasses.dataclass(frozen=True)
class _Applied:
    ok: bool
    files: dict[str, str | None]  # the changed files (None: deleted)
    message: str  # why it failed


def _git_apply(patch: str, testbed: _Testbed) -> _Applied:
    """``git apply -v`` of ``patch`` to the checkout: the files the patch names (and any
    ancestor path that is a file) are written into a scratch repository, the real git applies
    the patch there, and the named files are read back. A named path outside the repository
    fails without running git (git refuses such paths too)."""
    with tempfile.TemporaryDirectory(prefix="swt-apply-") as scratch:
        root = Path(scratch) / "repo"
        root.mkdir()
        patch_file = Path(scratch) / "patch.diff"
        patch_file.write_bytes(patch.encode("utf-8", "surrogateescape"))
        _git(root, "init", "-q")
        listed = _git(root, "apply", "--numstat", "-z", str(patch_file))
        if listed.returncode != 0:
            return _Applied(False, {}, "git apply failed: " + _git_error(listed))
        try:
            paths = [_inside(path) for path in _numstat_paths(listed.stdout)]
        except (_Escape, _Crash) as problem:
            return _Applied(False, {}, f"git apply failed: invalid path {problem}")
        for path in paths:
            _materialise(root, path, testbed)
        applied = _git(root, "apply", "-v", str(patch_file))
        if applied.returncode != 0:
            return _Applied(False, {}, "git apply failed: " + _git_error(applied))
        files = {path: _read_back(root / path) for path in paths}
        return _Applied(True, {p: t for p, t in files.items() if t != testbed.raw(p)}, "")


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        HOME=str(cwd.parent),  # no user ignore file (~/.config/git/ignore) either
        XDG_CONFIG_HOME=str(cwd.parent),
    )
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, check=False)


def _git_error(completed: subprocess.CompletedProcess[bytes]) -> str:
    lines = completed.stderr.decode("utf-8", "replace").splitlines()
    errors = [line for line in lines if line.startswith(("error:", "fatal:"))]
    return (errors or lines or [f"exit status {completed.returncode}"])[-1]  # git's verdict


def _numstat_paths(output: bytes) -> list[str]:
    """The paths of ``git apply --numstat -z``: ``added TAB deleted TAB path NUL``, or for a
    rename or copy ``added TAB deleted TAB NUL old NUL new NUL``."""
    fields = output.decode("utf-8", "surrogateescape").split("\0")
    paths: list[str] = []
    index = 0
    while index < len(fields) and fields[index]:
        path = fields[index].split("\t", 2)[2]
        if path:
            paths.append(path)
            index += 1
        else:
            paths += fields[index + 1 : index + 3]
            index += 3
    return list(dict.fromkeys(paths))


def _materialise(root: Path, path: str, testbed: _Testbed) -> None:
    parts = path.split("/")
    for depth in range(1, len(parts) + 1):
        prefix = "/".join(parts[:depth])
        text = testbed.raw(prefix)
        if text is None:
            continue
        target = root / prefix
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8", "surrogateescape"))
        except OSError:  # a file where another one's directory is: git sees the clash
            pass


def _read_back(target: Path) -> str | None:
    if target.is_symlink():
        return os.readlink(target)  # as git stores a link: its target
    if not target.is_file():
        return None
    return target.read_bytes().decode("utf-8", "surrogateescape")


# --- fuzzy: their line-wise diff placed by Levenshtein overlap --------------------------------


@dataclasses.dataclass
class _Change:
    """One run of changed lines in a hunk with its surrounding context lines."""

    before: list[str]
    removed: list[str]
    added: list[str]
    after: list[str]


def _try_fuzzy(text: str, testbed: _Testbed) -> tuple[bool, str]:
    """Their apply_fuzzy_patches: each file diff in turn rewrites its file; a missing file
    stops it (files rewritten before stay)."""
    file_diffs = _fuzzy_diffs(text)
    if not file_diffs:
        return False, "no --- a/ +++ b/ diff found"
    done: list[str] = []
    for name, changes in file_diffs:
        if not name:  # their open("") raises FileNotFoundError, which they catch
            return False, "a diff with an empty path: not found" + _left(done)
        path = _inside(name)
        testbed.check_openable(path)
        current = testbed.text(path)
        if current is None:
            return False, f"{name} not found" + _left(done)
        lines = current.splitlines()
        for change in changes:
            lines = _place(change, lines)
        testbed.write(path, "\n".join(lines))
        done.append(path)
    return True, f"applied {', '.join(dict.fromkeys(done))}"


def _left(done: list[str]) -> str:
    return f" ({', '.join(dict.fromkeys(done))} already rewritten)" if done else ""


def _fuzzy_diffs(text: str) -> list[tuple[str, list[_Change]]]:
    """Their extract_fuzzy_patch: per file diff, the path (the ``--- a/`` name up to
    whitespace) and the runs of changes of all its hunks."""
    file_diffs = []
    for file_diff in _FILE_DIFF.findall(text):
        name = _first_header(file_diff).split()[1][2:]
        changes: list[_Change] = []
        for *_, body in _HUNK.findall(file_diff):
            _check_body(body)
            changes += _split_changes(body.split("\n")[1:])
        file_diffs.append((name, changes))
    return file_diffs


def _split_changes(lines: list[str]) -> list[_Change]:
    """A hunk's runs of changes: context lines before the first run, then each run's ``-`` and
    ``+`` lines and the context after it, which is also the next run's context before.
    Lines that start otherwise (blank ones too) are skipped; one starting with three
    backticks or ``<`` ends the hunk. A hunk always gives at least one (maybe empty) run."""
    changes: list[_Change] = []
    current = _Change([], [], [], [])
    state = "before"
    for line in lines:
        if line.startswith(("```", "<")):
            break
        marker, rest = line[:1], line[1:]
        if marker == " ":
            if state == "before":
                current.before.append(rest)
            else:
                state = "after"
                current.after.append(rest)
        elif marker in ("-", "+"):
            if state == "after":
                changes.append(current)
                current = _Change(current.after, [], [], [])
            state = "change"
            (current.removed if marker == "-" else current.added).append(rest)
    changes.append(current)
    return changes


def _place(change: _Change, lines: list[str]) -> list[str]:
    """Their placement: the change starts after the best match of its context before and
    removed lines, and ends at the best match of its context after, each searched over the
    whole file (first best wins; none: start 0, end the file's end, so a run without context
    after replaces the rest of the file). Ends before the start duplicate lines."""
    start, best = 0, 0.0
    for index in range(len(lines)):
        score = _overlap(change.before + change.removed, lines, index)
        if score > best:
            best, start = score, min(index + len(change.before), len(lines))
    end, best = len(lines), 0.0
    for index in range(len(lines)):
        score = _overlap(change.after, lines, index)
        if score > best:
            best, end = score, index
    return lines[:start] + change.added + lines[end:]


def _overlap(wanted: list[str], lines: list[str], at: int) -> float:
    """Their overlap_score: the sum over ``wanted``'s lines of 1 - normalised Levenshtein
    distance to the file's lines from ``at`` (two empty lines count 0)."""
    score = 0.0
    for offset, want in enumerate(wanted[: len(lines) - at]):
        have = lines[at + offset]
        longest = max(len(have), len(want))
        if longest:
            score += 1 - Levenshtein.distance(have, want) / longest
    return score


# --- custom: their function-level blocks, applied through ast -------------------------------


@dataclasses.dataclass(frozen=True)
class _Block:
    path: str
    action: str
    line: str  # the rough line number as written: they sort blocks by it as a string
    code: list[str]


def _try_custom(text: str, testbed: _Testbed) -> tuple[bool, str]:
    """Their apply_custom_patches: blocks sorted by their line as a string, grouped by file;
    each file parsed (missing: empty), its blocks applied, and written back as ``ast.unparse``
    gives it before the next file is read, so a later failure leaves earlier files changed."""
    blocks = _custom_blocks(text)
    if not blocks:
        return False, "no diff block found"
    by_file: dict[str, list[_Block]] = {}
    for block in sorted(blocks, key=lambda block: block.line):
        by_file.setdefault(block.path, []).append(block)
    done: list[str] = []
    for name, file_blocks in by_file.items():
        path = _inside(name)
        testbed.check_openable(path)
        try:
            tree = _parse(testbed.text(path) or "")
        except SyntaxError:
            return False, f"syntax error in {path}" + _left(done)
        for block in file_blocks:
            problem = _apply_block(block, tree)
            if problem:
                return False, f"{problem} in {path}" + _left(done)
            if block.action == "insert":
                testbed.make_parents(path)
        if not testbed.is_dir(path.rpartition("/")[0]):
            raise _Crash(f"FileNotFoundError: no directory to write {path!r} in")
        testbed.write(path, _unparse(tree))
        done.append(path)
    return True, f"applied {', '.join(dict.fromkeys(done))}"


def _custom_blocks(text: str) -> list[_Block]:
    """Their extract_custom_patches: every line starting with ``diff`` that has three lines
    after it opens a block (even inside another block's code): path, action, line, then the
    code up to the first line starting with ``end diff``; without one, up to the last line of
    the text, which is dropped."""
    lines = text.splitlines()
    blocks = []
    for index, line in enumerate(lines):
        if not line.startswith("diff") or index + 3 >= len(lines):
            continue
        code_start = index + 4
        ends = (j for j in range(code_start, len(lines)) if lines[j].startswith("end diff"))
        end = next(ends, max(code_start, len(lines) - 1))
        blocks.append(_Block(*lines[index + 1 : code_start], lines[code_start:end]))
    return blocks


def _apply_block(block: _Block, tree: ast.Module) -> str:
    """Apply one block to the module; "" or why it fails. ``rewrite`` puts its first statement
    (a function or class) in place of every definition of that kind and name; ``insert``
    appends its statements to the module's end whatever its line; other actions do
    nothing."""
    try:
        code = _parse(textwrap.dedent("\n".join(block.code)))
    except SyntaxError:
        return "syntax error in a block"
    if block.action == "rewrite":
        if not code.body:
            raise _Crash("IndexError: a rewrite block without a statement")
        new = code.body[0]
        if not isinstance(new, (ast.FunctionDef, ast.ClassDef)):
            return "a rewrite that is no function or class definition"
        rewriter = _Rewriter(new)
        rewriter.visit(tree)
        if not rewriter.replaced:
            return f"no {type(new).__name__} named {new.name}"
    elif block.action == "insert":
        tree.body.extend(code.body)
    return ""


class _Rewriter(ast.NodeTransformer):
    """Replaces every FunctionDef (not AsyncFunctionDef) or ClassDef named as ``new``, of its
    kind, at any depth, by that one node; a replaced definition's inside is not visited."""

    def __init__(self, new: ast.FunctionDef | ast.ClassDef) -> None:
        self.new = new
        self.replaced = 0

    def _definition(self, node: ast.FunctionDef | ast.ClassDef) -> ast.AST:
        if type(node) is type(self.new) and node.name == self.new.name:
            self.replaced += 1
            return self.new
        return self.generic_visit(node)

    visit_FunctionDef = _definition
    visit_ClassDef = _definition


def _parse(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError:
        raise
    except (ValueError, RecursionError, MemoryError) as error:  # not caught by their code
        raise _Crash(f"{type(error).__name__} parsing Python") from error


def _unparse(tree: ast.Module) -> str:
    try:
        return ast.unparse(tree)
    except (ValueError, RecursionError) as error:
        raise _Crash(f"{type(error).__name__} unparsing Python") from error


_TRIES: dict[str, Callable[[str, _Testbed], tuple[bool, str]]] = {
    "vanilla": _try_vanilla,
    "fuzzy": _try_fuzzy,
    "custom": _try_custom,
}


# --- git add -A ---------------------------------------------------------------------------


def _ignored_new_files(changes: dict[str, str | None], testbed: _Testbed) -> list[str]:
    """The new files ``git add -A`` would not add: those the checkout's ``.gitignore`` files
    (as the tries left them) ignore."""
    new = [
        path for path, text in changes.items() if text is not None and testbed.base(path) is None
    ]
    if not new:
        return []
    with tempfile.TemporaryDirectory(prefix="swt-ignore-") as scratch:
        root = Path(scratch) / "repo"
        root.mkdir()
        _git(root, "init", "-q")
        for path in new:
            parts = path.split("/")
            for depth in range(len(parts)):
                ignore = "/".join([*parts[:depth], ".gitignore"])
                if testbed.raw(ignore) is not None:
                    _materialise(root, ignore, testbed)
        for path in new:
            try:
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).touch()
            except OSError:
                pass
        listed = _git(root, "ls-files", "-z", "--others", "--exclude-standard")
        if listed.returncode != 0:
            raise RuntimeError("git ls-files failed: " + _git_error(listed))
        kept = set(listed.stdout.decode("utf-8", "surrogateescape").split("\0"))
    return [path for path in new if path not in kept]
