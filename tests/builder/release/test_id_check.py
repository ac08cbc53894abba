"""Test ids that look like data of the machine that ran them, flagged before a release."""

from builder.release.id_check import SHOWN, flagged_ids, looks_like_host_data, warning
from tests.support.instances import make_instance


def test_host_paths_and_machine_id_tokens_are_flagged_placeholders_shared_and_url_paths_not():
    """flask's routing tests hold URL paths (``/foo/bar``) in their ids: no host data."""
    assert looks_like_host_data("t.py::test[/root/.cache/x]") == "an absolute path under /root"
    assert looks_like_host_data("t.py::test[a-/srv/data/x]") == "an absolute path under /srv"
    assert "32-hex" in looks_like_host_data("t.py::test[0f" + "a" * 30 + "]")
    fine = ["t.py::test[<home>/x/y]", "t.py::test[/tmp/x]", "t.py::test[/usr/lib/x]",
            "t.py::test[/foo/-/bar-/foo/bar]", "t.py::test[/parent-/child-None-None]",
            "t.py::test[a/b/c]", "t.py::test[" + "a" * 40 + "]", "t.py::Test::test_x"]  # fmt: skip
    assert [looks_like_host_data(test_id) for test_id in fine] == [None] * len(fine)


def test_flagged_ids_are_in_instance_and_id_order_and_the_warning_counts_the_rest():
    ids = tuple(f"t.py::test[/home/u{n:02}/x]" for n in range(SHOWN + 2))
    found = flagged_ids([make_instance(2, PASS_TO_PASS=ids), make_instance(1)])
    assert [test_id for _, test_id, _ in found] == sorted(ids)
    lines = warning(found).splitlines()
    assert lines[0].startswith(f"warning: {SHOWN + 2} test id(s) look like data of the machine")
    assert lines[-1] == "  … and 2 more" and len(lines) == SHOWN + 2
    assert warning([]) == ""
