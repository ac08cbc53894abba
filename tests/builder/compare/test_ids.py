"""Comparison keys of pytest ids: SWE-bench's cut at the first space and its reduction of a
path-valued parametrize id to the path's last component, on both sides; the collisions the
reduction makes named as ``cut_collision`` with evidence that says how the ids became one."""

from __future__ import annotations

from builder.compare import causes
from builder.compare.ids import duplicate_index, our_key, reference_key, short_path_option
from builder.compare.instance import compare_labels
from tests.support.instances import make_instance

STDIN = "tests/test_self.py::TestRunTC::test_stdin"
"""pylint's test whose parametrize ids are absolute paths in our runs (pylint-4661's lists)."""


def test_a_path_parametrize_id_matches_the_references_last_component() -> None:
    ours = make_instance(
        FAIL_TO_PASS=(f"{STDIN}[/testbed/tests/mymodule.py-mymodule-/testbed/tests/mymodule.py]",),
        PASS_TO_PASS=("tests/test_self.py::TestRunTC::test_version",),
    )
    labels = compare_labels(
        ours,
        {
            "FAIL_TO_PASS": (f"{STDIN}[/mymodule.py]",),
            "PASS_TO_PASS": ("tests/test_self.py::TestRunTC::test_version",),
        },
    )
    assert labels["FAIL_TO_PASS"]["exact"] and labels["PASS_TO_PASS"]["exact"]


def test_the_reduction_follows_swe_benchs_rule_and_is_idempotent() -> None:
    ours = f"{STDIN}[/testbed/a/b.py-b-/testbed/a/b.py]"
    assert our_key(ours, "pytest") == reference_key(ours, "pytest") == f"{STDIN}[/b.py]"
    assert short_path_option(f"{STDIN}[/b.py]") == f"{STDIN}[/b.py]"
    for kept in (
        f"{STDIN}[//server/share/b.py]",  # two slashes: left alone
        f"{STDIN}[/testbed/*.py]",  # a glob: left alone
        f"{STDIN}[relative/b.py]",  # not absolute
        STDIN,  # no parametrize id
    ):
        assert short_path_option(kept) == kept
    # a canonical id's path (the placeholder of the run's checkout or environment) is a path
    canonical = f"{STDIN}[<testbed>/a/b.py-b-<testbed>/a/b.py]"
    assert our_key(canonical, "pytest") == f"{STDIN}[/b.py]"
    env = "test_read[<env>/lib/python3.9/site-packages/data_store/data/SC_rgb.dcm-x]"
    assert short_path_option(env) == "test_read[/SC_rgb.dcm-x]"
    # the cut at the first space comes first: what is left has no closing bracket
    assert our_key(f"{STDIN}[/a/b c.py]", "pytest") == f"{STDIN}[/a/b"
    # other runners' ids are not pytest ids
    assert reference_key("test_x (/a/b.T)", "django") == "test_x (/a/b.T)"


UNPARSE = "tests/test_pycode_ast.py::test_unparse"
"""sphinx's test with the case ``1234`` twice: ids ``[1234-12340]`` and ``[1234-12341]`` under
pytest 7 and earlier, ``[1234-1234_0]`` and ``[1234-1234_1]`` under pytest 8."""


def test_a_duplicate_ids_index_matches_whatever_pytest_wrote_it() -> None:
    ours = make_instance(
        FAIL_TO_PASS=("tests/test_pycode_ast.py::test_new",),
        PASS_TO_PASS=(f"{UNPARSE}[1234-12340]", f"{UNPARSE}[1234-12341]", f"{UNPARSE}[a-a0]"),
    )
    reference = {
        "FAIL_TO_PASS": ("tests/test_pycode_ast.py::test_new",),
        "PASS_TO_PASS": (f"{UNPARSE}[1234-1234_0]", f"{UNPARSE}[1234-1234_1]", f"{UNPARSE}[a-a0]"),
    }
    labels = compare_labels(ours, reference)
    assert labels["PASS_TO_PASS"]["exact"], labels["PASS_TO_PASS"]
    assert our_key(f"{UNPARSE}[1234-12340]", "pytest") == f"{UNPARSE}[1234-12340]"
    assert reference_key(f"{UNPARSE}[1234-1234_1]", "pytest") == f"{UNPARSE}[1234-12341]"
    for kept in (
        f"{UNPARSE}[a_0]",  # pytest 8 adds no underscore after a letter: a case's own id
        f"{UNPARSE}[1_0-x]",  # not at the end of the parametrize id
        f"{UNPARSE}[1234-12340]",  # idempotent
        "tests/test_x.py::test_1_0",  # no parametrize id
    ):
        assert duplicate_index(kept) == kept


def test_ids_one_once_their_paths_are_reduced_are_a_named_cut_collision() -> None:
    first, second = f"{STDIN}[/testbed/a/m.py]", f"{STDIN}[/testbed/b/m.py]"
    ours = make_instance(FAIL_TO_PASS=(first,), PASS_TO_PASS=(second,))
    labels = compare_labels(ours, {"FAIL_TO_PASS": (), "PASS_TO_PASS": (f"{STDIN}[/m.py]",)})
    (extra,) = labels["FAIL_TO_PASS"]["extra"]
    assert extra["cause"] == causes.CUT_COLLISION
    assert extra["evidence"].startswith(
        f"2 of our tests are '{STDIN}[/m.py]' once the path of their parametrize id is cut to "
        "its last component ("
    )
    assert "up to their first space" not in extra["evidence"]
    assert extra["evidence"].endswith("listed in its PASS_TO_PASS")
    assert labels["PASS_TO_PASS"]["exact"]
