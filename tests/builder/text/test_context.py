"""The repository context: whole numbered files chosen in rank order within a token budget."""

import pytest

from builder.text.construction import ALL_TEXT
from builder.text.context import code_text, numbered, select
from builder.text.files import SourceFile, read_files
from builder.text.retrieval import Bm25Index
from builder.text.tokens import token_counter
from tests.support.text_repo import text_fixture

COUNT = token_counter("cl100k_base")


def _count(path: str, block: str) -> int:
    return COUNT(block)


def test_files_are_shown_as_swe_bench_numbers_them():
    # create_instance.py's add_lines: split at \n, so a final newline gives an empty last line
    assert numbered("a.py", "x = 1\n\ny = 2\n") == (
        "[start of a.py]\n1 x = 1\n2 \n3 y = 2\n4 \n[end of a.py]"
    )
    files = [SourceFile("b.py", "b"), SourceFile("a.py", "a")]
    assert code_text(files) == (
        "[start of b.py]\n1 b\n[end of b.py]\n[start of a.py]\n1 a\n[end of a.py]"
    )
    assert code_text([]) == ""


def test_lines_are_counted_at_newlines_only():
    # str.splitlines() would also split at \f, \x1c-\x1e, \x85, U+2028/9 and \r
    text = "a\fb\x1cc\x85d\u2028e\rf\ng\n"
    assert numbered("data.py", text) == (
        "[start of data.py]\n1 a\fb\x1cc\x85d\u2028e\rf\n2 g\n3 \n[end of data.py]"
    )


def test_a_file_that_does_not_fit_is_skipped_and_later_ones_may_fit():
    texts = {"big.py": "x = 1\n" * 200, "small.py": "y = 2\n", "mid.py": "z = 3\n" * 5}
    budget = COUNT(numbered("small.py", texts["small.py"])) + 40
    shown = select(["big.py", "small.py", "mid.py"], texts, budget, _count)
    assert shown.paths[0] == "small.py"
    assert "big.py" not in shown.paths
    assert shown.tokens <= budget


def test_unknown_and_repeated_paths_are_skipped():
    shown = select(["gone.py", "a.py", "a.py"], {"a.py": "x\n"}, 100, _count)
    assert shown.paths == ("a.py",)


@pytest.mark.parametrize("budget", [1, 30, 60, 120, 200, 400, 27000])
def test_the_budget_is_never_exceeded(tmp_path, budget):
    fixture = text_fixture(tmp_path / "repo")
    files = read_files(fixture.repo.path, fixture.commit)
    texts = {file.path: file.text for file in files}
    ranked = Bm25Index(files, ALL_TEXT).rank(fixture.instance.problem_statement)

    shown = select(ranked, texts, budget, _count)

    shown_files = [SourceFile(path, texts[path]) for path in shown.paths]
    assert shown.tokens == sum(COUNT(numbered(p, texts[p])) + 1 for p in shown.paths)
    assert COUNT(code_text(shown_files)) <= budget
    if budget == 27000:
        assert shown.paths == tuple(ranked)  # everything fits
