"""Parse pytest's JUnit XML into per-test statuses keyed by pytest node id (file::name)."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

from builder.core.errors import SwtError
from builder.core.records import TestStatus


class ReportError(SwtError, ValueError):
    """The JUnit report is not valid XML."""


def _status(case: ElementTree.Element) -> TestStatus:
    for child in case:
        if child.tag == "failure":
            return (
                TestStatus.XPASS if "XPASS" in (child.get("message") or "") else TestStatus.FAILED
            )
        if child.tag == "error":
            return TestStatus.ERROR
        if child.tag == "skipped":
            return TestStatus.XFAIL if child.get("type") == "pytest.xfail" else TestStatus.SKIPPED
    return TestStatus.PASSED


def _node_id(case: ElementTree.Element, files: list[str]) -> str | None:
    """Rebuild the node id from ``file`` (xunit1) or by matching the dotted classname."""
    classname = case.get("classname") or ""
    name = case.get("name") or ""
    path = case.get("file")
    candidates = [path] if path else files
    for candidate in candidates:
        dotted = candidate[: -len(".py")].replace("/", ".") if candidate.endswith(".py") else ""
        if classname == dotted:
            return f"{candidate}::{name}"
        if dotted and classname.startswith(dotted + "."):
            inner = classname[len(dotted) + 1 :].split(".")
            return "::".join([candidate, *inner, name])
    return None


def collection_errors(report: bytes) -> list[str]:
    """Dotted module names whose collection failed (pytest reports them as nameless errors)."""
    root = _root(report)
    return [
        case.get("name") or ""
        for case in root.iter("testcase")
        if not case.get("classname") and case.find("error") is not None
    ]


def parse_junit(report: bytes, files: list[str]) -> dict[str, TestStatus]:
    """Statuses of the tests in ``files``; an error case without a node id is not a test."""
    statuses: dict[str, TestStatus] = {}
    for case in _root(report).iter("testcase"):
        node = _node_id(case, files)
        if node is not None:
            statuses[node] = _status(case)
    return statuses


def _root(report: bytes) -> ElementTree.Element:
    try:
        return ElementTree.fromstring(report)
    except ElementTree.ParseError as error:
        raise ReportError(f"JUnit report is not valid XML: {error}") from error
