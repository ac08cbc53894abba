"""A prediction's patch made ready to run: its format found, applied to the base commit's files,
kept to test files, or a reason why it is not applicable."""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Callable, Mapping

from builder.core.diffs import unsafe_paths
from builder.evaluate.strict import function_diff, fuzzy_diff
from builder.evaluate.unified import unified_diff
from recipes.patch_split import PathRules

MAX_PATCH_BYTES = 2_000_000
"""A larger prediction is not applicable (``huge``): no test file needs megabytes of diff."""


class PatchFormat(str, enum.Enum):
    """How a prediction's patch was read: the format it was applied in."""

    UNIFIED = "unified"  # a unified diff whose hunks match exactly (an offset allowed, as git)
    FUZZY = "fuzzy"  # a unified diff placed with tolerance (see fuzzy_diff)
    FUNCTION = "function"  # the function-level format (see function_diff)


MODES = ("unit", "repro")
"""What a prediction's tests are: test files run by the runner, or scripts run by exit code."""
REQUESTABLE = ("auto", "unified", "fuzzy", "function")
"""What ``--patch-format`` accepts; auto: the function-level format when the text has its
blocks, else a unified diff, exact first and with tolerance when exact fails."""

_BINARY = re.compile(r"^(GIT binary patch|Binary files .* differ)$", re.MULTILINE)
_SYMLINK = re.compile(r"^(new file mode|new mode|old mode|deleted file mode) 120000$", re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class PreparedPatch:
    """What runs: ``diff`` (test files only unless asked otherwise), or why nothing can."""

    diff: str = ""
    format: PatchFormat | None = None
    test_files: tuple[str, ...] = ()
    code_files: tuple[str, ...] = ()  # non-test files the prediction changes
    not_applicable: str = ""  # the reason, when the prediction cannot run
    new_texts: Mapping[str, str | None] = dataclasses.field(default_factory=dict)
    """The files ``diff`` changes, as it leaves them (None: deleted)."""

    @property
    def applicable(self) -> bool:
        return not self.not_applicable

    @property
    def edits_code(self) -> bool:
        return bool(self.code_files)


def prepare(
    text: str,
    read: Callable[[str], str | None],
    *,
    rules: PathRules | None = None,
    requested: str = "auto",
    tests_only: bool = True,
    mode: str = "unit",
) -> PreparedPatch:
    """Read ``text`` in the requested format against the base commit's files (``read``).

    ``mode`` ``unit``: the prediction's tests are the test files it adds or changes;
    ``repro``: the Python files it creates are its reproduction scripts (in ``test_files``),
    and a change to an existing file is a code edit."""
    if mode not in MODES:
        raise ValueError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    if requested not in REQUESTABLE:
        raise ValueError(f"patch format {requested!r} is not one of {', '.join(REQUESTABLE)}")
    rules = rules or PathRules()
    problem = _unsafe(text)
    if problem:
        return PreparedPatch(not_applicable=problem)
    try:
        new_texts, used = _apply(text, read, requested)
    except (function_diff.FormatError, fuzzy_diff.FuzzyPatchError) as error:
        return PreparedPatch(not_applicable=str(error))
    changed = {path: new for path, new in new_texts.items() if read(path) != new}
    if not changed:
        return PreparedPatch(format=used, not_applicable="the patch changes nothing")
    if mode == "repro":
        tests = sorted(p for p in changed if read(p) is None and p.endswith(".py"))
    else:
        tests = sorted(path for path in changed if rules.is_test(path))
    code = sorted(path for path in changed if path not in tests)
    kept = {path: changed[path] for path in (tests if tests_only else tests + code)}
    if not kept:
        return PreparedPatch(
            format=used,
            code_files=tuple(code),
            not_applicable=(
                "the patch adds no reproduction script (a new .py file)"
                if mode == "repro"
                else "the patch changes no test file"
            )
            + " (only "
            + ", ".join(code)
            + ")",
        )
    return PreparedPatch(
        diff=unified_diff(kept, read),
        format=used,
        test_files=tuple(tests),
        code_files=tuple(code),
        new_texts=kept,
    )


def _unsafe(text: str) -> str:
    if not text.strip():
        return "the patch is empty"
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return "the patch is not valid UTF-8 text"
    if size > MAX_PATCH_BYTES:
        return f"the patch is {size} bytes, more than the {MAX_PATCH_BYTES} allowed"
    if _BINARY.search(text):
        return "the patch changes a binary file"
    unsafe = unsafe_paths(text)  # each path with why: absolute, '..', .git, a link's target
    if unsafe:
        return "the patch names a path it may not write: " + "; ".join(u.text() for u in unsafe)
    if _SYMLINK.search(text):
        return "the patch makes a symbolic link"
    return ""


def _apply(
    text: str, read: Callable[[str], str | None], requested: str
) -> tuple[dict[str, str | None], PatchFormat]:
    if requested == "function" or (requested == "auto" and function_diff.looks_like(text)):
        blocks = function_diff.parse(text)
        return dict(function_diff.apply(blocks, read)), PatchFormat.FUNCTION
    patches = fuzzy_diff.parse(text)
    if requested == "fuzzy":
        return fuzzy_diff.apply(patches, read), PatchFormat.FUZZY
    try:
        return fuzzy_diff.apply(patches, read, exact=True), PatchFormat.UNIFIED
    except fuzzy_diff.FuzzyPatchError:
        if requested == "unified":
            raise
    return fuzzy_diff.apply(patches, read), PatchFormat.FUZZY
