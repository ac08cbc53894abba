"""Which files a prompt shows: BM25 ranking by the issue, and the oracles."""

from builder.text.construction import ALL_TEXT
from builder.text.files import read_files
from builder.text.retrieval import Bm25Index, edited_paths, oracle
from tests.support.text_repo import text_fixture


def test_bm25_ranks_the_file_the_issue_is_about_first(tmp_path):
    fixture = text_fixture(tmp_path / "repo")
    index = Bm25Index(read_files(fixture.repo.path, fixture.commit), ALL_TEXT)

    ranked = index.rank(fixture.instance.problem_statement)

    assert ranked[0] == "calc/stats.py"
    assert "tests/test_stats.py" in ranked  # it mentions median too
    assert "calc/geometry.py" not in ranked  # shares no term with the issue
    assert index.rank(fixture.instance.problem_statement) == ranked  # the same every time


def test_equal_scores_are_ordered_by_path(tmp_path):
    fixture = text_fixture(tmp_path / "repo")
    same = "def area():\n    return 1\n"
    commit = fixture.repo.commit({"b/shape.py": same, "a/shape.py": same}, "twins")
    ranked = Bm25Index(read_files(fixture.repo.path, commit), ALL_TEXT).rank("area")
    assert ranked[:2] == ["a/shape.py", "b/shape.py"]


def test_an_empty_repository_or_query_ranks_nothing():
    assert Bm25Index([], ALL_TEXT).rank("median") == []


def test_oracles_take_the_existing_files_the_golden_patches_edit(tmp_path):
    instance = text_fixture(tmp_path / "repo").instance
    assert oracle(instance.patch, instance.test_patch, with_tests=False) == ["calc/stats.py"]
    # tests/test_more_stats.py is created by the golden tests: it has no text at the base
    assert oracle(instance.patch, instance.test_patch, with_tests=True) == [
        "calc/stats.py",
        "tests/test_stats.py",
    ]
    assert edited_paths("") == []
