"""JUnit XML from a real pytest run maps to node ids and explicit statuses."""

import subprocess
import sys

from builder.core.records import TestStatus
from validation.runs.junit import (
    collection_errors,
    failure_messages,
    network_errors,
    parse_junit,
    skip_reasons,
)

FILES = {
    "tests/test_a.py": """
import pytest

def test_pass(): pass
def test_fail(): assert False
def test_same_name(): pass

@pytest.fixture
def broken(): raise RuntimeError("fixture")
def test_error(broken): pass

@pytest.mark.skip(reason="no")
def test_skip(): pass

@pytest.mark.xfail(reason="known")
def test_xfail(): assert False

@pytest.mark.xfail(strict=True, reason="strict")
def test_xpass_strict(): pass

@pytest.mark.parametrize("value", [1, "a b", "x::y"])
def test_param(value): pass

class TestGroup:
    def test_method(self): pass
    class TestInner:
        def test_deep(self): assert False
""",
    "tests/sub/test_b.py": "def test_same_name(): assert False\n",
    "tests/test_broken.py": "import not_a_module_anywhere\n\ndef test_never(): pass\n",
}


def _report(root, files, *targets, options=()):
    """``files`` (path → text) written under ``root``, a real pytest run of ``targets`` there
    with a JUnit report (xunit1), and the report's bytes."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    report = root / "report.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "junit_family=xunit1",
         *options, f"--junitxml={report}", *targets],
        cwd=root, capture_output=True,
    )  # fmt: skip
    return report.read_bytes()


def test_real_pytest_report(tmp_path):
    files = sorted(FILES)
    report = _report(tmp_path, FILES, *files, options=["--continue-on-collection-errors"])
    statuses = parse_junit(report, files)
    assert statuses == {
        "tests/test_a.py::test_pass": TestStatus.PASSED,
        "tests/test_a.py::test_fail": TestStatus.FAILED,
        "tests/test_a.py::test_same_name": TestStatus.PASSED,
        "tests/sub/test_b.py::test_same_name": TestStatus.FAILED,
        "tests/test_a.py::test_error": TestStatus.ERROR,
        "tests/test_a.py::test_skip": TestStatus.SKIPPED,
        "tests/test_a.py::test_xfail": TestStatus.XFAIL,
        "tests/test_a.py::test_xpass_strict": TestStatus.XPASS,
        "tests/test_a.py::test_param[1]": TestStatus.PASSED,
        "tests/test_a.py::test_param[a b]": TestStatus.PASSED,
        "tests/test_a.py::test_param[x::y]": TestStatus.PASSED,
        "tests/test_a.py::TestGroup::test_method": TestStatus.PASSED,
        "tests/test_a.py::TestGroup::TestInner::test_deep": TestStatus.FAILED,
    }
    assert collection_errors(report) == ["tests.test_broken"]
    # mapped back to the run's file when it names one
    assert collection_errors(report, ["tests/test_a.py", "tests/test_broken.py"]) == [
        "tests/test_broken.py"
    ]


def test_a_test_class_inherited_from_another_module_is_the_collecting_files(tmp_path):
    """A test method inherited from a base class of another module: pytest writes that module
    as ``file`` and the collecting one as ``classname``; the node id is the collecting file's."""
    files = {
        "pkg/tests/base.py": "class MetaBase:\n    def test_meta(self):\n        assert True\n",
        "pkg/tests/test_table.py": (
            "from pkg.tests.base import MetaBase\n\n\nclass TestMeta(MetaBase):\n    pass\n"
        ),
        "pkg/__init__.py": "",
        "pkg/tests/__init__.py": "",
    }
    report = _report(tmp_path, files, "pkg/tests/test_table.py")
    assert b'file="pkg/tests/base.py"' in report
    assert parse_junit(report, ["pkg/tests/test_table.py"]) == {
        "pkg/tests/test_table.py::TestMeta::test_meta": TestStatus.PASSED
    }


def test_classname_mapping_without_file_attribute(tmp_path):
    report = tmp_path / "r.xml"
    report.write_text(
        "<testsuites><testsuite>"
        '<testcase classname="tests.test_a.TestGroup" name="test_m[1]"/>'
        '<testcase classname="tests.sub.test_b" name="test_x"><failure message="boom"/></testcase>'
        '<testcase classname="elsewhere" name="test_y"/>'
        "</testsuite></testsuites>"
    )
    assert parse_junit(report.read_bytes(), ["tests/test_a.py", "tests/sub/test_b.py"]) == {
        "tests/test_a.py::TestGroup::test_m[1]": TestStatus.PASSED,
        "tests/sub/test_b.py::test_x": TestStatus.FAILED,
    }


def test_broken_report_raises():
    import pytest

    from validation.runs.junit import ReportError

    with pytest.raises(ReportError, match="not valid XML"):
        parse_junit(b"<testsuites><testcase", [])


NETWORK = """
import socket
import urllib.request


def test_refused():
    socket.create_connection(("127.0.0.1", 1), timeout=5)


def test_unresolvable():
    socket.getaddrinfo("no-such-host.invalid", 80)


def test_urllib():
    urllib.request.urlopen("http://127.0.0.1:1/", timeout=5)


def test_plain_failure():
    assert 1 == 2


def test_pass():
    pass
"""


def test_network_errors_name_the_tests_that_failed_for_lack_of_network(tmp_path):
    """A real pytest run: refused, unresolvable and urllib connections are named with their
    line; a plain assertion failure and a passing test are not."""
    report = _report(tmp_path, {"tests/test_net.py": NETWORK}, "tests/test_net.py")
    found = network_errors(report, ["tests/test_net.py"])
    assert set(found) == {
        "tests/test_net.py::test_refused",
        "tests/test_net.py::test_unresolvable",
        "tests/test_net.py::test_urllib",
    }
    assert "tests/test_net.py::test_pass" not in found
    assert "tests/test_net.py::test_plain_failure" not in found
    assert "ConnectionRefusedError" in found["tests/test_net.py::test_refused"]
    assert "gaierror" in found["tests/test_net.py::test_unresolvable"]
    assert "Connection refused" in found["tests/test_net.py::test_urllib"]


def test_network_errors_skip_xpass_and_unrelated_failures(tmp_path):
    report = tmp_path / "r.xml"
    report.write_text(
        "<testsuites><testsuite>"
        '<testcase classname="tests.test_a" name="test_dns">'
        '<failure message="socket.gaierror: [Errno -3] Temporary failure in name resolution">'
        "tb</failure></testcase>"
        '<testcase classname="tests.test_a" name="test_assert">'
        '<failure message="assert 1 == 2">E   assert 1 == 2</failure></testcase>'
        '<testcase classname="tests.test_a" name="test_x">'
        '<failure message="[XPASS(strict)] ConnectionError expected"/></testcase>'
        '<testcase classname="tests.test_a" name="test_http"><error message="fixture">'
        "E   urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='x')\n"
        "</error></testcase>"
        "</testsuite></testsuites>"
    )
    assert network_errors(report.read_bytes(), ["tests/test_a.py"]) == {
        "tests/test_a.py::test_dns": (
            "socket.gaierror: [Errno -3] Temporary failure in name resolution"
        ),
        "tests/test_a.py::test_http": (
            "E   urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='x')"
        ),
    }


OUTCOMES = """
import pytest


@pytest.mark.skip(reason="not on this platform")
def test_marked(): pass


@pytest.mark.skipif(True, reason="requires cdms2")
def test_skipif(): pass


def test_importorskip():
    pytest.importorskip("not_a_module_anywhere")


def test_skip_call():
    pytest.skip("x" * 400)


@pytest.mark.xfail(reason="known")
def test_xfail(): assert False


@pytest.mark.xfail(strict=True, reason="strict")
def test_xpass_strict(): pass


def test_assert():
    assert 1 == 2, "first line\\nsecond line"


@pytest.fixture
def broken(): raise RuntimeError("fixture broke")
def test_error(broken): pass


def test_pass(): pass
"""


def test_skip_reasons_and_failure_messages_of_a_real_pytest_run(tmp_path):
    """The reasons of pytest skips (not of xfails), on one line and cut to 300 characters;
    the first line of each failure's or error's message (not a strict XPASS's)."""
    report = _report(tmp_path, {"tests/test_out.py": OUTCOMES}, "tests/test_out.py")
    node = "tests/test_out.py::"
    reasons = skip_reasons(report, ["tests/test_out.py"])
    assert set(reasons) == {
        node + "test_marked", node + "test_skipif", node + "test_importorskip",
        node + "test_skip_call",
    }  # fmt: skip
    assert reasons[node + "test_marked"] == "not on this platform"
    assert reasons[node + "test_skipif"] == "requires cdms2"
    assert reasons[node + "test_importorskip"] == (
        "could not import 'not_a_module_anywhere': No module named 'not_a_module_anywhere'"
    )
    assert reasons[node + "test_skip_call"] == "x" * 300
    messages = failure_messages(report, ["tests/test_out.py"])
    assert set(messages) == {node + "test_assert", node + "test_error"}
    assert messages[node + "test_assert"] == "AssertionError: first line"
    assert messages[node + "test_error"] == 'failed on setup with "RuntimeError: fixture broke"'
