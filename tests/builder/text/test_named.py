"""The files an issue names: paths, tracebacks, dotted modules, identifiers defined once."""

from builder.text.files import SourceFile
from builder.text.named import (
    BM25_HITS,
    IDENTIFIER_FILES,
    SIZE_WEIGHT,
    NameIndex,
    fused_hits,
    is_package_code,
    issue_first,
    title,
)

FILES = [
    SourceFile("src/pkg/__init__.py", ""),
    SourceFile("src/pkg/core/expr.py", "class Expr:\n    def simplify_twice(self):\n        x\n"),
    SourceFile("src/pkg/io/reader.py", "def read_table():\n    pass\n\ndef common():\n    pass\n"),
    SourceFile("src/pkg/io/writer.py", "def common():\n    pass\n"),
    SourceFile("docs/conf.py", "project = 'pkg'\n"),
    SourceFile("src/pkg/clock.py", "def time():\n    pass\n\nclass Sphinx:\n    pass\n"),
    SourceFile("tests/test_expr.py", "def test_expr():\n    pass\n"),
]
INDEX = NameIndex(FILES)


def test_paths_and_traceback_frames_name_files_by_their_longest_tail():
    issue = (
        'Traceback:\n  File "/usr/lib/python3/site-packages/pkg/io/reader.py", line 3\n'
        "and C:\\work\\src\\pkg\\core\\expr.py too, and see conf.py"
    )
    assert INDEX.named(issue) == ["src/pkg/io/reader.py", "src/pkg/core/expr.py", "docs/conf.py"]


def test_dotted_modules_name_their_file():
    assert INDEX.named("from pkg.core.expr import Expr") == ["src/pkg/core/expr.py"]
    assert INDEX.named("pkg.io.reader.read_table() fails") == ["src/pkg/io/reader.py"]


def test_identifiers_name_a_file_only_when_one_file_defines_them():
    assert INDEX.named("calling simplify_twice breaks") == ["src/pkg/core/expr.py"]
    assert INDEX.named("common() returns None") == []  # two files define it
    assert INDEX.named("nothing here") == []


def test_identifiers_name_at_most_a_few_files():
    many = [SourceFile(f"m{n}.py", f"def only_here_{n}():\n    pass\n") for n in range(9)]
    named = NameIndex(many).named(" ".join(f"only_here_{n}" for n in range(9)))
    assert named == [f"m{n}.py" for n in range(IDENTIFIER_FILES)]


def test_an_identifier_names_its_file_only_when_the_issue_writes_it_as_code():
    # one file defines time() and Sphinx, but in prose they are English words
    assert INDEX.named("It takes a long time with Sphinx 4.2") == []
    assert INDEX.named("`time` is slow") == ["src/pkg/clock.py"]  # in backticks
    assert INDEX.named("calling time() hangs") == ["src/pkg/clock.py"]  # a call
    assert INDEX.named("clock.time hangs") == ["src/pkg/clock.py"]  # an attribute
    assert INDEX.named("building with Sphinx(...) fails") == ["src/pkg/clock.py"]
    # shaped as code, it needs no context: an underscore, or a capital inside the word
    assert INDEX.named("simplify_twice is wrong") == ["src/pkg/core/expr.py"]
    camel = NameIndex([SourceFile("a/frame.py", "class DataFrame:\n    pass\n")])
    assert camel.named("a DataFrame of floats") == ["a/frame.py"]


def test_package_code_is_neither_tests_nor_docs_examples_nor_root_files():
    assert is_package_code("src/pkg/io/reader.py")
    assert not is_package_code("tests/test_expr.py")
    assert not is_package_code("pkg/tests/helpers.py")
    assert not is_package_code("doc/conf.py")
    assert not is_package_code("examples/plot_things.py")
    assert not is_package_code("setup.py")


def _texts(sizes):
    return {path: "x" * size for path, size in sizes.items()}


def test_the_issue_aware_ranking_puts_named_code_first_then_bm25_s_code_then_the_rest():
    named = ["tests/test_expr.py", "src/pkg/io/reader.py", "src/pkg/core/expr.py"]
    ranked = ["src/pkg/core/expr.py", "tests/test_io.py", "src/pkg/io/writer.py", "doc/conf.py"]
    texts = _texts({path: 1000 for path in [*named, *ranked]})
    assert issue_first(named, ranked, texts) == [
        "src/pkg/core/expr.py", "src/pkg/io/reader.py",  # named: BM25's, then not ranked
        "src/pkg/io/writer.py",  # BM25's other code
        "tests/test_expr.py", "tests/test_io.py", "doc/conf.py",  # tests, docs: last
    ]  # fmt: skip


def test_a_large_file_yields_to_smaller_ones_bm25_ranks_close_behind():
    ranked = ["pkg/huge.py", "pkg/a.py", "pkg/b.py", "pkg/c.py", "pkg/d.py", "pkg/e.py"]
    texts = _texts({"pkg/huge.py": 100_000, **{p: 1000 for p in ranked[1:]}})
    # 100 times larger: ln(100) * 4 = 18.4 places; behind the five others here
    assert issue_first([], ranked, texts) == [*ranked[1:], "pkg/huge.py"]
    assert SIZE_WEIGHT == 4.0
    # twice as large: 2.8 places; it keeps its lead over the 3rd and later
    texts["pkg/huge.py"] = "x" * 2000
    assert issue_first([], ranked, texts)[:4] == ["pkg/a.py", "pkg/b.py", "pkg/huge.py", "pkg/c.py"]


def test_the_issue_aware_ranking_looks_past_the_construction_s_top_20():
    ranked = [f"pkg/m{n:03}.py" for n in range(BM25_HITS + 10)]
    texts = _texts({path: 1000 for path in ranked})
    assert issue_first([], ranked, texts) == ranked[:BM25_HITS]


def test_bm25_s_hits_are_the_issue_s_fused_with_its_title_s():
    """A long issue's template outweighs its title in one query; fused, the file the title
    is about comes first. Real BM25 (SWE-bench's construction) over small files."""
    from builder.text.construction import SWE_BENCH
    from builder.text.retrieval import Bm25Index

    files = [
        SourceFile("pkg/mock.py", "def mock_module():\n    # mocked imports of autodoc\n"),
        SourceFile("pkg/app.py", "# the application: build, extensions, version, python\n" * 3),
        SourceFile("pkg/cli.py", "# quickstart: build, extensions, version, python, os\n"),
    ]
    index = Bm25Index(files, SWE_BENCH)
    issue = (
        "Mocked base classes are documented wrong\n\n"
        + "Environment: OS linux, python version 3.9, build with extensions, version 4.2.\n" * 3
    )
    assert index.hits(issue)[-1] == "pkg/mock.py"  # the template's words win alone
    assert title(issue) == "Mocked base classes are documented wrong"
    fused = fused_hits(index.hits, issue)
    assert fused[0] == "pkg/mock.py" and set(fused) == set(index.hits(issue))
    # reciprocal rank fusion: a file first in one list and absent from the other scores 1/K
    lists = {"issue": ["a.py", "b.py", "c.py"], "title": ["c.py"]}
    fused = fused_hits(lambda query: lists["title" if query == "title" else "issue"], "title\nx")
    assert fused == ["c.py", "a.py", "b.py"]
    assert fused_hits(index.hits, "") == [] and title("\n\n  \n") == ""
