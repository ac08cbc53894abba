"""A patch's own tests: new files whole, changed files by the definitions touched."""

from validation.test_changes import changed_definitions, generated

OLD = """import pytest


def test_kept():
    assert True


class TestBox:
    def test_a(self):
        assert 1

    def test_b(self):
        assert 2
"""


def test_added_and_changed_definitions_are_found():
    new = (
        OLD.replace("assert 2", "assert 2 == 2")
        + "\n\n@pytest.mark.parametrize('x', [1])\ndef test_new(x):\n    assert x\n"
    )
    assert changed_definitions(OLD, new) == {"TestBox", "TestBox.test_b", "test_new"}


def test_a_decorator_change_touches_its_function_and_a_deletion_its_place():
    new = OLD.replace("def test_kept", "@pytest.mark.slow\ndef test_kept")
    assert changed_definitions(OLD, new) == {"test_kept"}
    grown = OLD.replace("assert 1\n", "assert 1\n        assert 1.5\n")
    assert changed_definitions(grown, OLD) == {"TestBox", "TestBox.test_a"}


def test_new_or_broken_files_count_whole():
    assert changed_definitions(None, "def test_x():\n    pass\n") is None
    assert changed_definitions(OLD, OLD + "def (:\n") is None


def test_ids_are_matched_by_file_class_and_name_including_parameters():
    ids = [
        "tests/test_box.py::test_kept",
        "tests/test_box.py::TestBox::test_a",
        "tests/test_box.py::TestBox::test_b",
        "tests/test_box.py::test_new[1]",
        "tests/test_box.py::test_new[2]",
        "tests/test_other.py::test_kept",
        "tests/test_new_file.py::test_anything",
    ]
    changes = {
        "tests/test_box.py": {"TestBox.test_b", "test_new"},
        "tests/test_new_file.py": None,
    }
    assert generated(ids, changes) == [
        "tests/test_box.py::TestBox::test_b",
        "tests/test_box.py::test_new[1]",
        "tests/test_box.py::test_new[2]",
        "tests/test_new_file.py::test_anything",
    ]
    whole_class = {"tests/test_box.py": {"TestBox"}}
    assert generated(ids, whole_class) == [
        "tests/test_box.py::TestBox::test_a",
        "tests/test_box.py::TestBox::test_b",
    ]


def test_changed_lines_are_numbered_as_ast_numbers_them():
    old = '"""A\u2028module."""\n\x0c\ndef test_a():\n    pass\n\n\ndef test_b():\n    pass\n'
    assert changed_definitions(old, old.replace("    pass\n", "    assert 1\n", 1)) == {"test_a"}
