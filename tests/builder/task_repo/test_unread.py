"""The tests the harness's parser cannot read: sympy's last test of each file, found from the
test files as the golden test patch leaves them, and left out of tests.json only."""

from __future__ import annotations

from builder.task_repo.release import Harness, dataset_names, read_task_repo, write_task_repo
from builder.task_repo.unread import last_test, sympy_unread
from tests.support.git import GitRepo
from tests.support.instances import make_instance

SOURCE = (
    "def helper():\n    pass\n\n\n@skip('x')\n"
    "def test_b():\n    pass\n\n\ndef test_a():\n    pass\n\n\ndef test_c():\n    pass\n"
)


def test_the_last_test_is_the_one_that_starts_last():
    assert last_test(SOURCE) == "test_c"
    assert last_test("def test_a():\n    pass\n") == "test_a"
    assert last_test("def helper():\n    pass\n") is None
    assert last_test("def (:\n") is None


def test_the_last_test_of_each_file_after_the_golden_test_patch_is_unread(tmp_path):
    repo = GitRepo(tmp_path / "repo")
    base = repo.commit({"pkg/tests/test_x.py": SOURCE, "pkg/tests/test_y.py": SOURCE})
    test_patch = repo.diff(
        {"pkg/tests/test_x.py": SOURCE + "\n\ndef test_new():\n    assert False\n"}
    )
    ids = ["pkg/tests/test_x.py::test_c", "pkg/tests/test_x.py::test_new",
           "pkg/tests/test_y.py::test_a"]  # fmt: skip
    unread = sympy_unread(repo.path, base, test_patch, ["pkg/tests/test_x.py"], ids)
    assert unread == ("pkg/tests/test_x.py::test_new",)  # test_c is not last any more


def test_unread_ids_leave_tests_json_only_and_the_import_gives_them_back(tmp_path):
    instance = make_instance(
        1,
        FAIL_TO_PASS=("s/tests/test_p.py::test_new",),
        PASS_TO_PASS=("s/tests/test_p.py::test_last", "s/tests/test_p.py::test_old"),
        run_metadata={"runner": "sympy"},
    )
    harness = Harness("eval\n", "FROM scratch\n", "parse_log_sympy",
                      unread=("s/tests/test_p.py::test_last",))  # fmt: skip
    splits = dataset_names("b", [("full", "test", [instance.instance_id])])
    out = tmp_path / "repo"
    write_task_repo(out, "b", "0.1.0", [instance], splits, {instance.instance_id: harness})
    read = read_task_repo(out)
    assert read.instances == [instance]
    tests = (out / "tasks" / instance.instance_id / "tests.json").read_text()
    assert '"test_old"' in tests and "test_last" not in tests and '"test_new"' in tests
    assert read.harness[instance.instance_id].unread == harness.unread
    again = tmp_path / "again"
    write_task_repo(again, read.name, read.version, read.instances, read.splits, read.harness)
    assert (again / "tasks" / instance.instance_id / "tests.json").read_text() == tests
