"""A reference pytest run stopped part way: which differences it explains, with the evidence."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

FAIL_TO_PASS, PASS_TO_PASS = "FAIL_TO_PASS", "PASS_TO_PASS"
_STOPS = (
    "a pytest session stops at a collection error unless run with "
    "--continue-on-collection-errors (ours is), or dies at an INTERNALERROR"
)


def file_of(key: str) -> str:
    """The file of a pytest id: the part before its first ``::``."""
    return key.split("::", 1)[0]


def collection_aborts(
    theirs: Mapping[str, Iterable[str]],
    ours: Mapping[str, Iterable[str]],
    collection_errors: Mapping[str, Iterable[str]] | None = None,
) -> dict[tuple[str, str, str], str]:
    """The differences a stopped reference run explains, keyed ``(list, side, key)`` with side
    ``missing`` (a reference id ours lacks) or ``extra`` (ours the reference lacks), each with
    its evidence. ``theirs``/``ours`` map each list to comparison keys (pytest ids, junk left
    out); ``collection_errors`` maps ``before``/``after`` to the files our runs could not
    collect, when known.

    A test lands in ``PASS_TO_PASS`` only if both runs report it, so a run that stopped
    (at a collection error in another file, or an INTERNALERROR) leaves every test of the files
    it never reached out of the reference's ``PASS_TO_PASS``; a stop *before* the fix also makes
    them ``FAIL_TO_PASS`` (absent before counts as failing), and a stop *after* it leaves them
    out of both lists. Recognised, per test file, by that shape: our id is in a list where the
    reference names no test of its file (for ``FAIL_TO_PASS``, no test of it in either list),
    or the reference's ``FAIL_TO_PASS`` id is our ``PASS_TO_PASS`` one and its ``PASS_TO_PASS``
    names no test of the file; in both cases the reference lists tests of other files. The
    shape is evidence of a stop only with our collection errors (:func:`proven`)."""
    their_sets = {name: set(theirs[name]) for name in (FAIL_TO_PASS, PASS_TO_PASS)}
    our_sets = {name: set(ours[name]) for name in (FAIL_TO_PASS, PASS_TO_PASS)}
    their_files = {name: {file_of(key) for key in keys} for name, keys in their_sets.items()}
    listed = their_files[FAIL_TO_PASS] | their_files[PASS_TO_PASS]
    why = _why(collection_errors or {})
    found: dict[tuple[str, str, str], str] = {}
    for name, keys in our_sets.items():
        for key in sorted(keys - their_sets[name]):
            path = file_of(key)
            named = their_files[name] if name == PASS_TO_PASS else listed
            if path in named or not listed - {path}:
                continue
            count = sum(file_of(other) == path for other in keys)
            where = (
                f"the reference's {PASS_TO_PASS} has no test of {path}"
                if name == PASS_TO_PASS
                else f"the reference has no test of {path} in either list"
            )
            text = f"{where} (our {name} has {count})"
            if name == PASS_TO_PASS and key in their_sets[FAIL_TO_PASS]:
                text += (
                    f"; it lists this one as {FAIL_TO_PASS}: its run before the fix reported "
                    "no test of the file, which counts as failing"
                )
            found[(name, "extra", key)] = text + why
    for key in sorted((their_sets[FAIL_TO_PASS] - our_sets[FAIL_TO_PASS]) & our_sets[PASS_TO_PASS]):
        path = file_of(key)
        if path in their_files[PASS_TO_PASS] or not listed - {path}:
            continue
        found[(FAIL_TO_PASS, "missing", key)] = (
            f"passes before and after the fix in our run ({PASS_TO_PASS}); the reference's "
            f"{PASS_TO_PASS} has no test of {path}: its run before the fix reported none, "
            "which counts as failing" + why
        )
    return found


def proven(collection_errors: Mapping[str, Iterable[str]] | None) -> bool:
    """Whether our runs' collection errors (by side) give evidence of a stopped run: any."""
    return any(list(files) for files in (collection_errors or {}).values())


def _why(collection_errors: Mapping[str, Iterable[str]]) -> str:
    """Our runs' collection errors as the likely stop, or that there were none: a clause of
    the evidence."""
    named = [
        f"{', '.join(sorted(set(files)))} ({side} the fix)"
        for side in ("before", "after")
        if (files := collection_errors.get(side))
    ]
    if not named:
        return (
            "; our runs had no collection error, so nothing shows that the reference's run "
            f"stopped ({_STOPS})"
        )
    return f"; our runs had collection errors in {'; '.join(named)}: {_STOPS}"
