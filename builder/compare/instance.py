"""One instance compared: its labels against the reference's, each difference with a cause."""

from __future__ import annotations

import collections
import json
from collections.abc import Iterable, Mapping
from typing import Any

from builder.compare import causes
from builder.compare.aborts import collection_aborts, file_of, proven
from builder.compare.ids import DEFAULT_RUNNER, is_junk, our_key, reference_key
from builder.core.records import Instance
from validation.runs.patches import touched_paths

LISTS = ("FAIL_TO_PASS", "PASS_TO_PASS")


def jaccard(left: set[str], right: set[str]) -> float:
    """|left ∩ right| / |left ∪ right|; two empty sets agree fully (1.0)."""
    union = left | right
    return 1.0 if not union else len(left & right) / len(union)


def compare_labels(
    instance: Instance,
    reference: dict[str, tuple[str, ...]],
    collection_errors: Mapping[str, Iterable[str]] | None = None,
) -> dict[str, Any]:
    """Per list: exact or not, the P→P-style Jaccard (also *as defined*: without the ids whose
    difference is one of :data:`causes.AS_DEFINED`), and the missing/extra ids with causes.

    ``reference`` maps ``FAIL_TO_PASS``/``PASS_TO_PASS`` to the reference's ids; missing ids
    are the reference's (as written), extra ids ours (as written). ``collection_errors`` maps
    ``before``/``after`` to the files our golden runs could not collect, when known (they are
    part of the evidence of a ``collection_abort``)."""
    runner = instance.run_metadata.get("runner", DEFAULT_RUNNER)
    expected_tests = json.loads(instance.run_metadata.get("expected_outcome_tests", "[]"))
    network_tests = json.loads(instance.run_metadata.get("needs_network", "{}"))
    unlisted_tests = json.loads(instance.run_metadata.get("unlisted_tests", "{}"))
    guarded: dict[str, list[str]] = json.loads(instance.run_metadata.get("optional_imports", "{}"))
    last_tests: dict[str, str] = json.loads(instance.run_metadata.get("last_tests", "{}"))
    expected = {our_key(test, runner) for test in expected_tests}
    offline = {our_key(test, runner): error for test, error in network_tests.items()}
    unlisted: dict[str, str] = {}
    for test, outcome in unlisted_tests.items():
        unlisted.setdefault(our_key(test, runner), outcome)
    reference_empty = not any(reference[name] for name in LISTS)
    seen = [
        *(test for name in LISTS for test in getattr(instance, name)),
        *expected_tests,
        *network_tests,
        *unlisted_tests,
    ]
    run_files = (  # the files the runs were given: the test patch's, and any our runs reported
        {*touched_paths(instance.test_patch), *map(file_of, seen)}
        if runner == DEFAULT_RUNNER and instance.test_patch
        else set()
    )

    def junk(test: str) -> bool | str:
        if is_junk(test, runner):
            return True
        return causes.foreign_file(file_of(test), run_files) if run_files else False

    theirs = {
        name: _keyed(reference[name], lambda test: reference_key(test, runner)) for name in LISTS
    }
    ours = {
        name: _keyed(getattr(instance, name), lambda test: our_key(test, runner)) for name in LISTS
    }
    extra = {name: ours[name].keys() - theirs[name].keys() for name in LISTS}
    other = dict(zip(LISTS, reversed(LISTS), strict=True))
    absent = {name: extra[name] - theirs[other[name]].keys() for name in LISTS}
    sympy_last = (
        causes.sympy_last_tests(
            [ours[name][key] for name in LISTS for key in absent[name]],
            [ours[name][key] for name in LISTS for key in ours[name].keys() - absent[name]],
            last_tests,
        )
        if runner == "sympy"
        else {}
    )
    listed_by_file = collections.Counter(
        file_of(ours[name][key]) for name in LISTS for key in ours[name].keys() - absent[name]
    )
    if runner == DEFAULT_RUNNER:  # a file with a reference test ours lacks for no reason our
        for name in LISTS:  # runs recorded: ids that differ in form, not outcome, may be why
            for key in theirs[name].keys() - ours[name].keys() - ours[other[name]].keys():
                if not (key in unlisted or key in offline or key in expected):
                    if not junk(theirs[name][key]):
                        listed_by_file.pop(file_of(key), None)
    listed_theirs = {name: [key for key in theirs[name] if not junk(key)] for name in LISTS}
    shapes = (
        collection_aborts(
            listed_theirs, {name: list(ours[name]) for name in LISTS}, collection_errors
        )
        if runner == DEFAULT_RUNNER and not reference_empty
        else {}
    )
    aborts = shapes if proven(collection_errors) else {}
    crashed = (
        _crashed(listed_theirs, ours) if runner == DEFAULT_RUNNER and not reference_empty else {}
    )
    their_files = {file_of(key) for name in LISTS for key in listed_theirs[name]}

    def optional(key: str) -> str:
        path = file_of(ours_test(key))
        if runner != DEFAULT_RUNNER or path in their_files or not guarded.get(path):
            return ""
        return causes.optional_import(path, guarded[path])

    def ours_test(key: str) -> str:
        return ours["FAIL_TO_PASS"].get(key) or ours["PASS_TO_PASS"][key]

    collisions = (
        causes.cut_collisions(
            {
                name: [(our_key(test, runner), test) for test in getattr(instance, name)]
                for name in LISTS
            },
            theirs,
        )
        if runner == DEFAULT_RUNNER
        else {}
    )
    result: dict[str, Any] = {"runner": runner}
    abort_files: set[str] = set()
    for name in LISTS:
        missing_keys = sorted(theirs[name].keys() - ours[name].keys())
        extra_keys = sorted(extra[name])
        missing = [
            _difference(
                theirs[name][key],
                causes.missing_cause(
                    theirs[name][key],
                    junk=junk(theirs[name][key]),
                    expected_outcome=key in expected,
                    crashed=crashed.get((name, key), ""),
                    collection_abort=aborts.get((name, "missing", key), ""),
                    cut_collision=collisions.get(key, ""),
                    network_error=offline.get(key, ""),
                    before_outcome=(
                        causes.before_outcome(other[name], name) if key in ours[other[name]] else ""
                    ),
                    unlisted=unlisted.get(key, ""),
                    guarded=(guarded.get(file_of(key), ()) if runner == DEFAULT_RUNNER else ()),
                ),
            )
            for key in missing_keys
        ]
        added = [
            _difference(
                ours[name][key],
                causes.extra_cause(
                    reference_empty=reference_empty,
                    crashed=crashed.get((name, key), ""),
                    collection_abort=aborts.get((name, "extra", key), ""),
                    sympy_last=sympy_last.get(ours[name][key], ""),
                    cut_collision=collisions.get(key, ""),
                    before_outcome=(
                        causes.before_outcome(name, other[name])
                        if key in theirs[other[name]]
                        else ""
                    ),
                    list_empty="" if reference[name] else name,
                    optional=optional(key),
                    not_passed=(
                        causes.not_passed_in_reference(
                            name,
                            file_of(ours[name][key]),
                            listed_by_file[file_of(ours[name][key])],
                        )
                        if key in absent[name] and listed_by_file[file_of(ours[name][key])]
                        else ""
                    ),
                    unproven=shapes.get((name, "extra", key), ""),
                ),
            )
            for key in extra_keys
        ]
        artifacts = {  # differences that are the reference's artifacts, set aside
            key
            for keys, items in ((missing_keys, missing), (extra_keys, added))
            for key, item in zip(keys, items, strict=True)
            if set(causes_of(item)) <= set(causes.AS_DEFINED)
        }
        abort_files |= {
            file_of(key)
            for keys, items in ((missing_keys, missing), (extra_keys, added))
            for key, item in zip(keys, items, strict=True)
            if causes.COLLECTION_ABORT in causes_of(item)
        }
        result[name] = {
            "exact": not missing and not added,
            "jaccard": jaccard(set(theirs[name]), set(ours[name])),
            "jaccard_as_defined": jaccard(
                set(theirs[name]) - artifacts, set(ours[name]) - artifacts
            ),
            "missing": missing,
            "extra": added,
        }
    if abort_files:
        result["collection_abort_files"] = sorted(abort_files)
    return result


def _crashed(
    theirs: Mapping[str, Iterable[str]], ours: Mapping[str, Mapping[str, str]]
) -> dict[tuple[str, str], str]:
    """The differences a crashed reference run explains, keyed ``(list, key)``: the reference
    lists every test (of several files) as FAIL_TO_PASS and none as PASS_TO_PASS, and our runs
    pass some of them before the fix; those are its FAIL_TO_PASS ids in our PASS_TO_PASS and
    our PASS_TO_PASS ids in its FAIL_TO_PASS."""
    failing = set(theirs["FAIL_TO_PASS"])
    if set(theirs["PASS_TO_PASS"]) or len({file_of(key) for key in failing}) < 2:
        return {}
    passed = failing & ours["PASS_TO_PASS"].keys()
    if not passed:
        return {}
    evidence = causes.reference_run_crashed(
        len(failing), len(passed), len({file_of(key) for key in failing})
    )
    return {(name, key): evidence for name in LISTS for key in passed}


def _keyed(tests: Iterable[str], key) -> dict[str, str]:
    """Each test's comparison key and the first id (as written) that has it."""
    keyed: dict[str, str] = {}
    for test in tests:
        keyed.setdefault(key(test), test)
    return keyed


def _difference(test: str, found: list[tuple[str, str]]) -> dict[str, Any]:
    """A difference's entry: its cause and evidence (the first of ``found``), and under
    ``also`` every other cause that explains it with its evidence."""
    (cause, evidence), *others = found
    item: dict[str, Any] = {"id": test, "cause": cause}
    if evidence:
        item["evidence"] = evidence
    if others:
        item["also"] = [{"cause": c, **({"evidence": e} if e else {})} for c, e in others]
    return item


def causes_of(item: Mapping[str, Any]) -> list[str]:
    """Every cause a difference's entry names: its own, then those under ``also``."""
    return [item["cause"], *(other["cause"] for other in item.get("also", ()))]
