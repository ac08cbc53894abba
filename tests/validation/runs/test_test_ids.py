"""Canonical test ids: host paths become placeholders, in the launcher's run and after parsing;
ids that cannot be stored as they are get a named replacement; the raw id stays as evidence."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from builder.core.records import TestStatus
from validation.runs import test_ids
from validation.runs.junit import raw_ids
from validation.runs.runners import PYTEST_LAUNCHER, make_runner
from validation.runs.test_ids import MAX_CHARS, Places, canonical


def test_each_place_becomes_its_placeholder_the_longest_first():
    places = Places(
        [("/w/work", "<work>"), ("/w/work/envs/k1", "<env>"), ("/w/checkout", "<testbed>")]
    )
    assert canonical("t.py::test[/w/work/envs/k1/lib/a.dcm-/w/checkout/x]", places) == (
        "t.py::test[<env>/lib/a.dcm-<testbed>/x]"
    )
    assert canonical("t.py::test[/w/work/mirrors/r]", places) == "t.py::test[<work>/mirrors/r]"
    assert canonical("t.py::test[/w/work]", places) == "t.py::test[<work>]"


def test_a_place_is_replaced_only_as_a_whole_path():
    places = Places([("/w/checkout", "<testbed>")])
    for kept in ("t::x[/w/checkout2/a]", "t::x[/x/w/checkout/a]", "t::x[w/checkout]",
                 "t::x[/w/checkout.bak]"):  # fmt: skip
        assert canonical(kept, places) == kept
    assert canonical("t::x[/w/checkout-/w/checkout/a-1]", places) == "t::x[<testbed>-<testbed>/a-1]"


def test_generic_paths_stay_as_written_and_relative_or_empty_places_are_none():
    places = Places([("/tmp", "<tmp>"), ("/root", "<home>"), ("", "<run>"), ("rel", "<work>")])
    assert places.pairs == []
    assert canonical("t.py::test[/tmp/x-/root/y]", places) == "t.py::test[/tmp/x-/root/y]"


def test_the_standard_library_of_a_generic_prefix_is_still_a_place():
    pairs = test_ids.run_pairs("/testbed", "/opt/e", "/usr", "3.11", "/swt/home", "/swt/tmp")
    places = Places(pairs)
    assert canonical("t::x[/usr/lib/python3.11/os.py-/usr/bin/env]", places) == (
        "t::x[<python>/lib/python3.11/os.py-/usr/bin/env]"
    )


def test_a_place_reached_through_a_link_is_found_by_either_path(tmp_path):
    real = tmp_path / "real-env"
    real.mkdir()
    (tmp_path / "link-env").symlink_to(real)
    places = Places([(str(tmp_path / "link-env"), "<env>")])
    assert canonical(f"t::x[{real}/a]", places) == "t::x[<env>/a]"
    assert canonical(f"t::x[{tmp_path}/link-env/a]", places) == "t::x[<env>/a]"


def test_text_that_is_not_utf8_is_escaped_and_a_long_id_is_cut_with_its_hash():
    places = Places([])
    assert canonical("t::x[\udcff]", places) == "t::x[\\udcff]"
    long_a, long_b = "t::x[" + "a" * 5000 + "1]", "t::x[" + "a" * 5000 + "2]"
    cut_a, cut_b = canonical(long_a, places), canonical(long_b, places)
    assert len(cut_a) == MAX_CHARS and cut_a != cut_b
    assert cut_a.startswith("t::x[aaa") and cut_a.endswith(">") and "<sha256:" in cut_a
    assert canonical(cut_a, places) == cut_a  # idempotent


def test_the_sessions_places_reach_the_launcher_through_the_variable():
    pairs = [("/w/work", "<work>"), ("/w/run", "<run>")]
    value = test_ids.places_variable(pairs)
    assert test_ids.named_places({test_ids.PLACES_VARIABLE: value}) == pairs
    for bad in ("not json", '{"a": 1}', '[["/x", "<nope>"]]', "[1, 2]"):
        assert test_ids.named_places({test_ids.PLACES_VARIABLE: bad}) == []


PATH_IDS = """
import os
import sys
import sysconfig

import pytest

DATA = os.path.join(sysconfig.get_paths()["purelib"], "pytest", "__init__.py")


@pytest.mark.parametrize("where", [DATA, sys.prefix, os.getcwd() + "/data.txt", "/tmp/x"])
def test_where(where):
    pass


def test_plain():
    pass
"""


def _launched(project: Path, tools: Path, report: Path, extra=(), env=None):
    runner = make_runner("pytest")
    files = ["tests/test_p.py"]
    command = runner.command(sys.executable, files, str(report), list(extra), runtime=str(tools))
    done = subprocess.run(
        command, cwd=project, capture_output=True, text=True, timeout=120, env=env
    )
    results = runner.results(report.read_bytes(), files)
    assert results is not None, done.stdout + done.stderr
    return results[0], done.stdout


@pytest.mark.slow
def test_the_launcher_names_every_test_canonically_in_the_report_and_the_summary(tmp_path):
    """A data file of the environment, ``sys.prefix`` and the checkout in parametrize ids: the
    JUnit report and the ``-rA`` lines (what SWE-bench's harness parses) name the placeholders,
    the report keeps each raw id, and deselecting a canonical id leaves out exactly that test."""
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_p.py").write_text(PATH_IDS)
    tools = PYTEST_LAUNCHER.place(tmp_path / "tools")
    version = "{}.{}".format(*sys.version_info[:2])
    expected = {
        f"tests/test_p.py::test_where[<env>/lib/python{version}/site-packages/pytest/__init__.py]",
        "tests/test_p.py::test_where[<env>]",
        "tests/test_p.py::test_where[<testbed>/data.txt]",
        "tests/test_p.py::test_where[/tmp/x]",
        "tests/test_p.py::test_plain",
    }
    statuses, output = _launched(project, tools, tmp_path / "r.xml")
    assert set(statuses) == expected
    assert all(status is TestStatus.PASSED for status in statuses.values())
    assert "PASSED tests/test_p.py::test_where[<testbed>/data.txt]" in output
    assert str(project) not in output.replace(f"rootdir: {project}", "")
    raws = raw_ids((tmp_path / "r.xml").read_bytes(), ["tests/test_p.py"])
    assert (
        raws["tests/test_p.py::test_where[<env>]"] == f"tests/test_p.py::test_where[{sys.prefix}]"
    )
    assert raws["tests/test_p.py::test_where[<testbed>/data.txt]"] == (
        f"tests/test_p.py::test_where[{os.path.realpath(project)}/data.txt]"
    )
    left_out = make_runner("pytest").deselect_options(["tests/test_p.py::test_where[<env>]"])
    statuses, _ = _launched(project, tools, tmp_path / "d.xml", left_out)
    assert set(statuses) == expected - {"tests/test_p.py::test_where[<env>]"}


@pytest.mark.slow
def test_the_launcher_reads_the_sessions_own_places(tmp_path):
    """A place only the session knows (its work dir) comes in ``SWT_ID_PLACES``."""
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_p.py").write_text(
        "import pytest\n\n@pytest.mark.parametrize('p', ['/w/elsewhere/f'])\n"
        "def test_p(p):\n    pass\n"
    )
    tools = PYTEST_LAUNCHER.place(tmp_path / "tools")
    env = {**os.environ, test_ids.PLACES_VARIABLE: test_ids.places_variable([("/w", "<work>")])}
    statuses, _ = _launched(project, tools, tmp_path / "r.xml", env=env)
    assert set(statuses) == {"tests/test_p.py::test_p[<work>/elsewhere/f]"}
