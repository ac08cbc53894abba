"""Parse pytest's JUnit XML into per-test statuses keyed by pytest node id (file::name)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

from builder.core.errors import SwtError
from builder.core.records import TestStatus
from validation.runs.parsers import file_for_module
from validation.runs.pytest_launcher import OUTCOME_PROPERTY, RAW_ID_PROPERTY, XPASSED


class ReportError(SwtError, ValueError):
    """The JUnit report is not valid XML."""


CONNECTION_ERRORS = re.compile(
    r"socket\.gaierror|Name or service not known|Temporary failure in name resolution"
    r"|nodename nor servname provided|Network is unreachable|No route to host"
    r"|ConnectionRefusedError|ConnectionResetError|ConnectionError|NewConnectionError"
    r"|MaxRetryError|Failed to establish a new connection|getaddrinfo failed"
)
"""What a test failing for lack of network says: DNS, refused or unreachable connections, and
urllib3/requests' wrappers of them."""


OLD_XPASS = "xfail-marked test passes unexpectedly"
"""How pytest before 3.0 wrote a non-strict xpass in its JUnit report: as a skip."""


def _status(case: ElementTree.Element) -> TestStatus:
    if any(
        prop.get("name") == OUTCOME_PROPERTY and prop.get("value") == XPASSED
        for prop in case.iter("property")
    ):
        return TestStatus.XPASS  # a non-strict xpass, marked by the launcher's plugin
    for child in case:
        if child.tag == "failure":
            return (
                TestStatus.XPASS if "XPASS" in (child.get("message") or "") else TestStatus.FAILED
            )
        if child.tag == "error":
            return TestStatus.ERROR
        if child.tag == "skipped":
            if child.get("message") == OLD_XPASS:
                return TestStatus.XPASS
            return TestStatus.XFAIL if child.get("type") == "pytest.xfail" else TestStatus.SKIPPED
    return TestStatus.PASSED


def _node_id(case: ElementTree.Element, files: list[str]) -> str | None:
    """Rebuild the node id from ``file`` (xunit1) or by matching the dotted classname against
    the run's files: ``file`` names where the test function is defined, which for a test class
    inherited from another module (``class TestMeta(MetaBaseTest)``) is that module, while the
    classname is the module that collected it."""
    classname = case.get("classname") or ""
    name = case.get("name") or ""
    path = case.get("file")
    candidates = [path, *files] if path else files
    for candidate in candidates:
        dotted = candidate[: -len(".py")].replace("/", ".") if candidate.endswith(".py") else ""
        if classname == dotted:
            return f"{candidate}::{name}"
        if dotted and classname.startswith(dotted + "."):
            inner = classname[len(dotted) + 1 :].split(".")
            return "::".join([candidate, *inner, name])
    return None


def collection_errors(report: bytes, files: list[str] = ()) -> list[str]:
    """The files whose collection failed: pytest reports them as nameless errors named by
    dotted module, mapped back to the one of ``files`` it names (kept dotted otherwise)."""
    root = _root(report)
    return [
        file_for_module(module, list(files)) or module
        for module in (
            case.get("name") or ""
            for case in root.iter("testcase")
            if not case.get("classname") and case.find("error") is not None
        )
    ]


def parse_junit(report: bytes, files: list[str]) -> dict[str, TestStatus]:
    """Statuses of the tests in ``files``; an error case without a node id is not a test."""
    statuses: dict[str, TestStatus] = {}
    for case in _root(report).iter("testcase"):
        node = _node_id(case, files)
        if node is not None:
            statuses[node] = _status(case)
    return statuses


def network_errors(report: bytes, files: list[str]) -> dict[str, str]:
    """Failed or errored tests whose failure names a connection error, with its first such line
    (from the failure's message, else its text: the traceback pytest reports)."""
    errors: dict[str, str] = {}
    for case in _root(report).iter("testcase"):
        node = _node_id(case, files)
        failure = next((c for c in case if c.tag in ("failure", "error")), None)
        if node is None or failure is None or "XPASS" in (failure.get("message") or ""):
            continue
        text = "\n".join(filter(None, (failure.get("message"), failure.text)))
        line = next((ln for ln in text.splitlines() if CONNECTION_ERRORS.search(ln)), None)
        if line is not None:
            errors[node] = line.strip()[:500]
    return errors


def raw_ids(report: bytes, files: list[str]) -> dict[str, str]:
    """Test id → the id pytest made, for each test whose id the launcher made canonical (its
    ``swt_raw_id`` property)."""
    raws: dict[str, str] = {}
    for case in _root(report).iter("testcase"):
        node = _node_id(case, files)
        raw = next(
            (p.get("value") for p in case.iter("property") if p.get("name") == RAW_ID_PROPERTY),
            None,
        )
        if node is not None and raw:
            raws[node] = raw
    return raws


REASON_CHARS = 300
"""How much of a skip reason or failure message a run keeps."""


def skip_reasons(report: bytes, files: list[str]) -> dict[str, str]:
    """Tests pytest skipped (a skip or skipif mark, ``pytest.skip``, ``pytest.importorskip``;
    not an xfail) with the reason it gave, on one line; a skip without a reason is left out."""
    reasons: dict[str, str] = {}
    for case in _root(report).iter("testcase"):
        node = _node_id(case, files)
        skipped = case.find("skipped")
        if node is None or skipped is None or skipped.get("type") != "pytest.skip":
            continue
        reason = " ".join((skipped.get("message") or "").split())
        if reason:
            reasons[node] = reason[:REASON_CHARS]
    return reasons


def failure_messages(report: bytes, files: list[str]) -> dict[str, str]:
    """Failed or errored tests (a strict XPASS is none) with the first line of the failure's
    message, when it has one."""
    messages: dict[str, str] = {}
    for case in _root(report).iter("testcase"):
        node = _node_id(case, files)
        failure = next((c for c in case if c.tag in ("failure", "error")), None)
        message = "" if failure is None else (failure.get("message") or "")
        if node is None or "XPASS" in message:
            continue
        line = next((ln.strip() for ln in message.splitlines() if ln.strip()), "")
        if line:
            messages[node] = line[:REASON_CHARS]
    return messages


def _root(report: bytes) -> ElementTree.Element:
    try:
        return ElementTree.fromstring(report)
    except ElementTree.ParseError as error:
        raise ReportError(f"JUnit report is not valid XML: {error}") from error
