"""The files an issue names: paths, tracebacks, dotted modules, identifiers defined once."""

from builder.text.files import SourceFile
from builder.text.named import IDENTIFIER_FILES, NameIndex, issue_first

FILES = [
    SourceFile("src/pkg/__init__.py", ""),
    SourceFile("src/pkg/core/expr.py", "class Expr:\n    def simplify_twice(self):\n        x\n"),
    SourceFile("src/pkg/io/reader.py", "def read_table():\n    pass\n\ndef common():\n    pass\n"),
    SourceFile("src/pkg/io/writer.py", "def common():\n    pass\n"),
    SourceFile("docs/conf.py", "project = 'pkg'\n"),
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


def test_the_issue_aware_ranking_puts_named_code_first_in_bm25_s_order_and_tests_last():
    named = ["tests/test_expr.py", "src/pkg/io/reader.py", "src/pkg/core/expr.py"]
    ranked = ["src/pkg/core/expr.py", "tests/test_io.py", "src/pkg/io/writer.py"]
    assert issue_first(named, ranked) == [
        "src/pkg/core/expr.py", "src/pkg/io/reader.py",  # named, BM25's order, then the rest
        "src/pkg/io/writer.py",  # BM25's other hits
        "tests/test_expr.py", "tests/test_io.py",  # tests last
    ]  # fmt: skip
