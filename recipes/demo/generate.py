"""The demo's repository history and its cases as SWE-bench-format records (deterministic)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

DEMO_REPO = "swt-demo/calc"
VERSION = "0.1"
_IDENTITY = {
    "GIT_AUTHOR_NAME": "Calc Maintainer",
    "GIT_AUTHOR_EMAIL": "maintainer@swt-demo.invalid",
    "GIT_COMMITTER_NAME": "Calc Maintainer",
    "GIT_COMMITTER_EMAIL": "maintainer@swt-demo.invalid",
}
_DEFAULT_DATE = "2024-01-01T00:00:00+0000"


@dataclass(frozen=True)
class DemoPaths:
    """Where the demo (`recipes.demo.make`) put its repository, records and GitHub fixtures."""

    repo: Path
    records: Path
    github_repo: Path
    github_fixtures: Path


@dataclass(frozen=True)
class Write:
    """Create or overwrite a file with the given text."""

    path: str
    content: str

    def apply(self, root: Path) -> None:
        target = root / self.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(self.content.encode("utf-8"))


@dataclass(frozen=True)
class Replace:
    """Replace the single occurrence of ``old`` in a file with ``new``."""

    path: str
    old: str
    new: str

    def apply(self, root: Path) -> None:
        target = root / self.path
        text = target.read_bytes().decode("utf-8")
        if text.count(self.old) != 1:
            raise ValueError(f"{self.path}: expected exactly one match for {self.old!r}")
        target.write_bytes(text.replace(self.old, self.new).encode("utf-8"))


Edit = Write | Replace


@dataclass(frozen=True)
class Commit:
    """One commit of the demo's linear ``main`` history."""

    message: str
    date: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Case:
    """One candidate: its issue, its edits and the validation outcome it is built to have.

    ``base``, ``patch_from`` and ``test_patch_from`` are indexes into :data:`HISTORY`; a
    ``*_from`` commit other than the base yields a well-formed diff that does not apply there.
    """

    number: int
    expected: str
    base: int
    created_at: str
    problem_statement: str
    hints_text: str
    patch: tuple[Edit, ...]
    test_patch: tuple[Edit, ...]
    patch_from: int | None = None
    test_patch_from: int | None = None
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()

    @property
    def instance_id(self) -> str:
        return f"{DEMO_REPO.replace('/', '__')}-{self.number}"


# ---------------------------------------------------------------------------------------------
# The demo project, commit by commit.

_PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "0.1.0"
description = "Small, dependency-free helpers for arithmetic, parsing and statistics."
readme = "README.md"
requires-python = ">=3.8"

[project.optional-dependencies]
test = ["pytest"]

[tool.setuptools]
packages = ["calc"]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

_README = """\
# calc

Small, dependency-free helpers for arithmetic, number parsing and descriptive
statistics.

## Development

    pip install -e ".[test]"
    pytest
"""

_GITIGNORE = """\
__pycache__/
*.egg-info/
.pytest_cache/
"""

_INIT = '''\
"""Small, dependency-free helpers for arithmetic, parsing and statistics."""

__version__ = "0.1.0.dev0"
'''

_ARITH = '''\
"""Basic arithmetic helpers."""


def add(a, b):
    """Return the sum of *a* and *b*."""
    return a + b


def subtract(a, b):
    """Return *a* minus *b*."""
    return a - b


def multiply(a, b):
    """Return the product of *a* and *b*."""
    return a * b


def divide(a, b):
    """Return *a* divided by *b*; raise ZeroDivisionError when *b* is zero."""
    if b == 0:
        raise ZeroDivisionError("division by zero")
    return a / b
'''

_TEST_ARITH = """\
import pytest

from calc.arith import add, divide, multiply, subtract


def test_add():
    assert add(2, 3) == 5
    assert add(-1, 1) == 0


def test_subtract():
    assert subtract(10, 4) == 6


def test_multiply():
    assert multiply(3, 4) == 12
    assert multiply(-2, 5) == -10


def test_divide():
    assert divide(7, 2) == 3.5


def test_divide_by_zero():
    with pytest.raises(ZeroDivisionError):
        divide(1, 0)
"""

_DOCS_INDEX = """\
# calc documentation

`calc` bundles a handful of small numeric helpers. It has no runtime
dependencies and supports Python 3.8 and newer.

## Modules

- `calc.arith`: add, subtract, multiply and divide.
"""

_STATS = '''\
"""Descriptive statistics for sequences of numbers."""

from collections import Counter


def mean(values):
    return sum(values) / len(values)


def median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def mode(values):
    counts = Counter(values)
    return counts.most_common(1)[0][0]
'''

_TEST_STATS = """\
from calc.stats import mean, median, mode


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_median_odd_length():
    assert median([3, 1, 2]) == 2


def test_mode():
    assert mode([1, 2, 2, 3]) == 2
"""

_PARSING = '''\
"""Parsing helpers for numbers and simple arithmetic expressions."""

OPERATORS = "+-*/()"


def parse_number(text):
    """Parse *text* as an int when possible, otherwise as a float."""
    text = text.strip()
    if not text:
        raise ValueError("cannot parse an empty string as a number")
    try:
        return int(text)
    except ValueError:
        return float(text)


def tokenize(expression):
    """Split an arithmetic *expression* into number and operator tokens."""
    tokens = []
    i = 0
    while i < len(expression):
        char = expression[i]
        if char == " ":
            i += 1
        elif char.isdigit() or char == ".":
            start = i
            while i < len(expression) and (expression[i].isdigit() or expression[i] == "."):
                i += 1
            tokens.append(expression[start:i])
        elif char in OPERATORS:
            tokens.append(char)
            i += 1
    return tokens
'''

_TEST_PARSING = """\
import pytest

from calc.parsing import parse_number, tokenize


def test_parse_int():
    assert parse_number("42") == 42
    assert isinstance(parse_number("42"), int)


def test_parse_float():
    assert parse_number(" 2.5 ") == 2.5


def test_parse_empty_raises():
    with pytest.raises(ValueError):
        parse_number("   ")


def test_tokenize():
    assert tokenize("12 + 3.5*(4-1)") == ["12", "+", "3.5", "*", "(", "4", "-", "1", ")"]
"""

_DOCS_USAGE = """\
# Usage

## Parsing numbers

```python
>>> from calc.parsing import parse_number
>>> parse_number("42")
42
>>> parse_number(" 2.5 ")
2.5
```

## Tokenizing expressions

```python
>>> from calc.parsing import tokenize
>>> tokenize("12 + 3.5*(4-1)")
['12', '+', '3.5', '*', '(', '4', '-', '1', ')']
```
"""

_STATS_DOCUMENTED = '''\
"""Descriptive statistics for sequences of numbers."""

from collections import Counter


def mean(values):
    """Return the arithmetic mean of *values*."""
    return sum(values) / len(values)


def median(values):
    """Return the middle value of *values* once sorted."""
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def mode(values):
    """Return the most common value of *values*."""
    counts = Counter(values)
    return counts.most_common(1)[0][0]
'''

_VARIANCE = '''

def variance(values):
    """Return the population variance of *values*."""
    centre = mean(values)
    return sum((value - centre) ** 2 for value in values) / len(values)


def stdev(values):
    """Return the population standard deviation of *values*."""
    return math.sqrt(variance(values))
'''

_USAGE_STATS = """
## Statistics

```python
>>> from calc.stats import mean, stdev
>>> mean([1, 2, 3, 4])
2.5
>>> stdev([2, 4, 4, 4, 5, 5, 7, 9])
2.0
```
"""

_MODE_END = "    return counts.most_common(1)[0][0]\n"
_STDEV_END = "    return math.sqrt(variance(values))\n"
_STATS_IMPORT = "from calc.stats import mean, median, mode\n"
_STATS_IMPORT_C6 = "from calc.stats import mean, median, mode, stdev, variance\n"
_CLAMP_AT_BOUNDS_END = "    assert clamp(10, 0, 10) == 10\n"
_POWER_ASSERT = "    assert power(2, 3) == 8\n"
_POWER_ASSERT_C5 = "    assert power(2, 3) == 8.0\n"

HISTORY: tuple[Commit, ...] = (
    Commit(  # 0
        "Initial project skeleton",
        "2024-01-08T09:00:00+0000",
        (
            Write(".gitignore", _GITIGNORE),
            Write("README.md", _README),
            Write("pyproject.toml", _PYPROJECT),
            Write("calc/__init__.py", _INIT),
            Write("calc/arith.py", _ARITH),
            Write("tests/test_arith.py", _TEST_ARITH),
            Write("docs/index.md", _DOCS_INDEX),
        ),
    ),
    Commit(  # 1
        "Add stats module with mean, median and mode",
        "2024-01-15T10:30:00+0000",
        (
            Write("calc/stats.py", _STATS),
            Write("tests/test_stats.py", _TEST_STATS),
            Replace(
                "docs/index.md",
                "multiply and divide.\n",
                "multiply and divide.\n- `calc.stats`: mean, median and mode.\n",
            ),
        ),
    ),
    Commit(  # 2
        "Add number parsing and an expression tokenizer",
        "2024-01-22T14:00:00+0000",
        (
            Write("calc/parsing.py", _PARSING),
            Write("tests/test_parsing.py", _TEST_PARSING),
            Write("docs/usage.md", _DOCS_USAGE),
            Replace(
                "docs/index.md",
                "median and mode.\n",
                "median and mode.\n- `calc.parsing`: number parsing and a tokenizer.\n\n"
                "See [usage](usage.md) for examples.\n",
            ),
        ),
    ),
    Commit(  # 3
        "Add power and clamp helpers",
        "2024-02-05T11:15:00+0000",
        (
            Replace("calc/arith.py", '"""\n\n\ndef add', '"""\n\nimport math\n\n\ndef add'),
            Replace(
                "calc/arith.py",
                "    return a / b\n",
                "    return a / b\n\n\n"
                "def power(base, exponent):\n"
                '    """Return *base* raised to *exponent*."""\n'
                "    return math.pow(base, exponent)\n\n\n"
                "def clamp(value, low, high):\n"
                '    """Limit *value* to the closed interval [low, high]."""\n'
                "    if low > high:\n"
                '        raise ValueError("low must not exceed high")\n'
                "    return max(low, min(value, high))\n",
            ),
            Replace(
                "tests/test_arith.py",
                "import add, divide, multiply, subtract\n",
                "import add, clamp, divide, multiply, power, subtract\n",
            ),
            Replace(
                "tests/test_arith.py",
                "        divide(1, 0)\n",
                "        divide(1, 0)\n\n\n"
                "def test_power():\n"
                "    assert power(2, 3) == 8\n"
                "    assert power(9, 0.5) == 3\n\n\n"
                "def test_clamp():\n"
                "    assert clamp(5, 0, 10) == 5\n"
                "    assert clamp(-3, 0, 10) == 0\n"
                "    assert clamp(42, 0, 10) == 10\n\n\n"
                "def test_clamp_rejects_inverted_bounds():\n"
                "    with pytest.raises(ValueError):\n"
                "        clamp(5, 10, 0)\n",
            ),
            Replace(
                "docs/index.md",
                "- `calc.arith`: add, subtract, multiply and divide.\n",
                "- `calc.arith`: add, subtract, multiply, divide, power and clamp.\n",
            ),
        ),
    ),
    Commit(  # 4
        "Document stats functions and tighten arith tests",
        "2024-02-19T16:45:00+0000",
        (
            Write("calc/stats.py", _STATS_DOCUMENTED),
            Replace("tests/test_arith.py", _POWER_ASSERT, _POWER_ASSERT_C5),
            Replace(
                "tests/test_arith.py",
                "        clamp(5, 10, 0)\n",
                "        clamp(5, 10, 0)\n\n\n"
                "def test_clamp_at_bounds():\n"
                "    assert clamp(0, 0, 10) == 0\n" + _CLAMP_AT_BOUNDS_END,
            ),
        ),
    ),
    Commit(  # 5
        "Add variance and stdev",
        "2024-03-01T09:20:00+0000",
        (
            Replace(
                "calc/stats.py",
                "from collections import Counter\n",
                "import math\nfrom collections import Counter\n",
            ),
            Replace("calc/stats.py", _MODE_END, _MODE_END + _VARIANCE),
            Replace("tests/test_stats.py", _STATS_IMPORT, _STATS_IMPORT_C6),
            Replace(
                "tests/test_stats.py",
                "    assert mode([1, 2, 2, 3]) == 2\n",
                "    assert mode([1, 2, 2, 3]) == 2\n\n\n"
                "def test_variance():\n"
                "    assert variance([2, 4, 4, 4, 5, 5, 7, 9]) == 4\n\n\n"
                "def test_stdev():\n"
                "    assert stdev([2, 4, 4, 4, 5, 5, 7, 9]) == 2\n",
            ),
            Replace(
                "docs/index.md",
                "mean, median and mode.\n",
                "mean, median, mode, variance, stdev.\n",
            ),
        ),
    ),
    Commit(  # 6
        "Release 0.1.0",
        "2024-03-12T13:00:00+0000",
        (
            Replace("calc/__init__.py", '"0.1.0.dev0"', '"0.1.0"'),
            Replace("docs/usage.md", "')']\n```\n", "')']\n```\n" + _USAGE_STATS),
            Replace(
                "README.md",
                "statistics.\n",
                "statistics.\n\nSee [the documentation](docs/index.md) for the module list and\n"
                "[usage examples](docs/usage.md).\n",
            ),
        ),
    ),
)

# ---------------------------------------------------------------------------------------------
# The candidates, one per validation outcome the demo exercises.

_PERCENTILE = '''

def percentile(values, p):
    """Return the *p*-th percentile of *values*, interpolating linearly between ranks."""
    if not 0 <= p <= 100:
        raise ValueError("p must be between 0 and 100")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    lower = int(rank)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (rank - lower)
'''

_TEST_PERCENTILE = """\
import pytest

from calc.stats import percentile


def test_percentile_of_odd_sample_is_median():
    assert percentile([5, 1, 4, 2, 3], 50) == 3


def test_percentile_bounds_are_min_and_max():
    assert percentile([3, 1, 2], 0) == 1
    assert percentile([3, 1, 2], 100) == 3


def test_percentile_interpolates_between_ranks():
    assert percentile([1, 2, 3, 4], 25) == 1.75


def test_percentile_rejects_out_of_range():
    with pytest.raises(ValueError):
        percentile([1, 2, 3], 101)
"""

_USAGE_SUMMARY = """
## Summaries

`summary()` reports the count, mean and standard deviation in one call; the
sample in `tests/data/sample.json` gives:

```python
>>> import json
>>> from calc.stats import summary
>>> summary(json.load(open("tests/data/sample.json"))["values"])
{'count': 8, 'mean': 5.0, 'stdev': 2.0}
```
"""


def _after(path: str, anchor: str, addition: str) -> Replace:
    """An edit inserting ``addition`` right after the unique ``anchor`` text of ``path``."""
    return Replace(path, anchor, anchor + addition)


def _tests(path: str, *names: str) -> tuple[str, ...]:
    return tuple(f"{path}::{name}" for name in names)


CASES: tuple[Case, ...] = (
    Case(
        number=7,
        expected="kept",
        base=1,
        created_at="2024-01-17T08:12:00Z",
        problem_statement=(
            "median() returns the wrong value for even-length inputs\n\n"
            "For a list with an even number of elements `calc.stats.median` returns the upper of "
            "the two middle values instead of their average. For example `median([4, 1, 3, 2])` "
            "returns `3`, but the median of 1, 2, 3 and 4 is `2.5`. Odd-length inputs are fine. "
            "This silently skews every report that takes the median of an even-sized sample, so "
            "it deserves a fix and a regression test."
        ),
        hints_text=(
            "The usual definition averages the two middle elements after sorting; "
            "`statistics.median` in the standard library does the same."
        ),
        patch=(
            Replace(
                "calc/stats.py",
                "    return ordered[len(ordered) // 2]\n",
                "    middle = len(ordered) // 2\n"
                "    if len(ordered) % 2:\n"
                "        return ordered[middle]\n"
                "    return (ordered[middle - 1] + ordered[middle]) / 2\n",
            ),
        ),
        test_patch=(
            _after(
                "tests/test_stats.py",
                "    assert median([3, 1, 2]) == 2\n",
                "\n\ndef test_median_even_length():\n"
                "    assert median([4, 1, 3, 2]) == 2.5\n"
                "    assert median([10, 20]) == 15\n",
            ),
        ),
        fail_to_pass=_tests("tests/test_stats.py", "test_median_even_length"),
        pass_to_pass=_tests(
            "tests/test_stats.py", "test_mean", "test_median_odd_length", "test_mode"
        ),
    ),
    Case(
        number=10,
        expected="NO_FAIL_TO_PASS",
        base=2,
        created_at="2024-01-24T19:03:00Z",
        problem_statement=(
            "parse_number should understand percentages\n\n"
            '`parse_number("50%")` raises `ValueError: could not convert string to float: '
            "'50%'`. Spreadsheet exports contain values like `12.5 %`; they should parse to the "
            "fraction, i.e. `0.125`."
        ),
        hints_text="",
        patch=(
            _after(
                "calc/parsing.py",
                "    text = text.strip()\n",
                '    if text.endswith("%"):\n        text = text[:-1].rstrip()\n',
            ),
        ),
        test_patch=(
            _after(
                "tests/test_parsing.py",
                '    assert parse_number(" 2.5 ") == 2.5\n',
                "\n\ndef test_parse_percent():\n"
                '    assert parse_number("50%") == 0.5\n'
                '    assert parse_number("12.5 %") == 0.125\n',
            ),
        ),
    ),
    Case(
        number=16,
        expected="TEST_PATCH_DOES_NOT_APPLY",
        base=3,
        test_patch_from=4,
        created_at="2024-02-20T10:00:00Z",
        problem_statement=(
            "power() returns a float for integer operands\n\n"
            "`power(2, 10)` returns `1024.0` instead of `1024`. Because it goes through "
            "`math.pow`, large integer powers also lose precision: `power(3, 40)` is off by 33. "
            "Integer inputs should give an exact integer result, as the `**` operator does."
        ),
        hints_text="",
        patch=(
            Replace("calc/arith.py", '"""\n\nimport math\n\n\ndef add', '"""\n\n\ndef add'),
            Replace(
                "calc/arith.py",
                "    return math.pow(base, exponent)\n",
                "    return base**exponent\n",
            ),
        ),
        test_patch=(
            Replace(
                "tests/test_arith.py",
                _POWER_ASSERT_C5,
                _POWER_ASSERT + "    assert isinstance(power(2, 3), int)\n",
            ),
            _after(
                "tests/test_arith.py",
                _CLAMP_AT_BOUNDS_END,
                "\n\ndef test_power_keeps_integers_exact():\n"
                "    assert power(2, 10) == 1024\n"
                "    assert isinstance(power(2, 10), int)\n"
                "    assert power(3, 40) == 3**40\n",
            ),
        ),
    ),
    Case(
        number=18,
        expected="PASS_TO_FAIL",
        base=4,
        created_at="2024-02-22T15:30:00Z",
        problem_statement=(
            "clamp() should accept bounds in either order\n\n"
            "`clamp(15, 10, 0)` raises `ValueError: low must not exceed high`. Our bounds come "
            "from two sliders that users can drag past each other, so every caller has to sort "
            "them first. It would be friendlier if clamp swapped inverted bounds itself."
        ),
        hints_text="",
        patch=(
            Replace(
                "calc/arith.py",
                '        raise ValueError("low must not exceed high")\n',
                "        low, high = high, low\n",
            ),
        ),
        test_patch=(
            _after(
                "tests/test_arith.py",
                "        clamp(5, 10, 0)\n",
                "\n\ndef test_clamp_swapped_bounds():\n"
                "    assert clamp(15, 10, 0) == 10\n"
                "    assert clamp(-5, 10, 0) == 0\n",
            ),
        ),
    ),
    Case(
        number=21,
        expected="TIMEOUT",
        base=4,
        created_at="2024-02-27T07:45:00Z",
        problem_statement=(
            "tokenize() hangs forever on tabs\n\n"
            'Calling `tokenize("1\\t+ 2")` never returns; the process sits at 100% CPU until '
            "it is killed. The loop only skips plain spaces, so any other character that is not "
            "a digit or an operator (tabs, newlines, letters) leaves the index where it is. We "
            "hit this when reading expressions from a TSV file. Whitespace should be skipped "
            "and unknown characters should raise a `ValueError` instead of looping."
        ),
        hints_text="`str.isspace()` covers tabs and newlines.",
        patch=(
            Replace("calc/parsing.py", '        if char == " ":\n', "        if char.isspace():\n"),
            _after(
                "calc/parsing.py",
                "            tokens.append(char)\n            i += 1\n",
                "        else:\n"
                '            raise ValueError(f"unexpected character {char!r} at position {i}")\n',
            ),
        ),
        test_patch=(
            _after(
                "tests/test_parsing.py",
                '"1", ")"]\n',
                "\n\ndef test_tokenize_skips_any_whitespace():\n"
                '    assert tokenize("1\\t+\\n2") == ["1", "+", "2"]\n\n\n'
                "def test_tokenize_rejects_unknown_characters():\n"
                "    with pytest.raises(ValueError):\n"
                '        tokenize("2 $ 3")\n',
            ),
        ),
    ),
    Case(
        number=23,
        expected="GOLDEN_PATCH_DOES_NOT_APPLY",
        base=3,
        patch_from=5,
        created_at="2024-03-02T12:00:00Z",
        problem_statement=(
            "mean([]) raises ZeroDivisionError\n\n"
            "`mean([])` fails with `ZeroDivisionError: division by zero`, which is confusing. "
            "It should raise a `ValueError` saying that at least one data point is required, "
            "like `statistics.mean` does."
        ),
        hints_text="",
        patch=(
            Replace(
                "calc/stats.py",
                '    """Return the arithmetic mean of *values*."""\n',
                '    """Return the arithmetic mean of *values*; ValueError if there are none."""\n'
                "    if not values:\n"
                '        raise ValueError("mean requires at least one data point")\n',
            ),
        ),
        test_patch=(
            Replace("tests/test_stats.py", _STATS_IMPORT, "import pytest\n\n" + _STATS_IMPORT),
            _after(
                "tests/test_stats.py",
                "    assert mean([1, 2, 3, 4]) == 2.5\n",
                "\n\ndef test_mean_of_empty_raises():\n"
                "    with pytest.raises(ValueError):\n"
                "        mean([])\n",
            ),
        ),
    ),
    Case(
        number=26,
        expected="kept",
        base=5,
        created_at="2024-03-06T17:20:00Z",
        problem_statement=(
            "Add a percentile() function\n\n"
            "It would be useful to have `calc.stats.percentile(values, p)` returning the p-th "
            "percentile (0 <= p <= 100) with linear interpolation between the closest ranks, "
            "the method numpy uses by default. An out-of-range `p` should raise `ValueError`. "
            "Right now every caller reimplements this on top of `sorted()`, often with "
            "off-by-one errors at the bounds."
        ),
        hints_text="",
        patch=(_after("calc/stats.py", _STDEV_END, _PERCENTILE),),
        test_patch=(Write("tests/test_percentile.py", _TEST_PERCENTILE),),
        fail_to_pass=_tests(
            "tests/test_percentile.py",
            "test_percentile_of_odd_sample_is_median",
            "test_percentile_bounds_are_min_and_max",
            "test_percentile_interpolates_between_ranks",
            "test_percentile_rejects_out_of_range",
        ),
    ),
    Case(
        number=31,
        expected="NO_TEST_FILES",
        base=6,
        created_at="2024-03-14T09:00:00Z",
        problem_statement=(
            "Add a summary() helper\n\n"
            "A one-call `summary(values)` returning count, mean and standard deviation would "
            "make the documentation examples much shorter."
        ),
        hints_text="",
        patch=(
            _after(
                "calc/stats.py",
                _STDEV_END,
                "\n\ndef summary(values):\n"
                '    """Return the count, mean and population standard deviation of *values*."""\n'
                '    return {"count": len(values), "mean": mean(values), "stdev": stdev(values)}\n',
            ),
        ),
        test_patch=(
            _after("docs/usage.md", "2.0\n```\n", _USAGE_SUMMARY),
            Write("tests/data/sample.json", '{"values": [2, 4, 4, 4, 5, 5, 7, 9]}\n'),
        ),
    ),
    Case(
        number=33,
        expected="MALFORMED_RECORD",
        base=6,
        created_at="2024-03-18T11:10:00Z",
        problem_statement=(
            "mode() hides ties\n\n"
            "`mode([1, 1, 2, 2])` returns 1 and silently drops 2. Please add `multimode()`."
        ),
        hints_text="",
        patch=(
            _after(
                "calc/stats.py",
                _MODE_END,
                "\n\ndef multimode(values):\n"
                '    """Return every most common value of *values*, in first-seen order."""\n'
                "    counts = Counter(values)\n"
                "    top = max(counts.values(), default=0)\n"
                "    return [value for value, count in counts.items() if count == top]\n",
            ),
        ),
        test_patch=(
            Replace(
                "tests/test_stats.py",
                _STATS_IMPORT_C6,
                "from calc.stats import mean, median, mode, multimode, stdev, variance\n",
            ),
            _after(
                "tests/test_stats.py",
                "    assert mode([1, 2, 2, 3]) == 2\n",
                "\n\ndef test_multimode_keeps_ties():\n"
                "    assert multimode([1, 1, 2, 2, 3]) == [1, 2]\n",
            ),
        ),
    ),
)

EXPECTED: dict[str, str] = {case.instance_id: case.expected for case in CASES}


# ---------------------------------------------------------------------------------------------
# Building it with git.


def _git(cwd: Path, *args: str, date: str = _DEFAULT_DATE) -> str:
    """Run git isolated from user/system config, with the fixed identity and ``date``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        _IDENTITY,
        GIT_AUTHOR_DATE=date,
        GIT_COMMITTER_DATE=date,
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_CONFIG_NOSYSTEM="1",
    )
    command = ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args]
    completed = subprocess.run(
        command, cwd=cwd, env=env, check=True, capture_output=True, encoding="utf-8"
    )
    return completed.stdout


def _build_history(repo: Path) -> list[str]:
    """Create the repository and commit :data:`HISTORY` on ``main``; return the commit SHAs."""
    repo.mkdir(parents=True)
    _git(repo, "init", "--quiet")
    shas = []
    for commit in HISTORY:
        for edit in commit.edits:
            edit.apply(repo)
        _git(repo, "add", "--all")
        _git(repo, "commit", "--quiet", "--message", commit.message, date=commit.date)
        shas.append(_git(repo, "rev-parse", "HEAD").strip())
    return shas


def _diff_at(repo: Path, commit: str, edits: tuple[Edit, ...]) -> str:
    """The unified diff of ``edits`` made in a scratch worktree detached at ``commit``."""
    with tempfile.TemporaryDirectory(prefix="swt-demo-") as scratch:
        worktree = Path(scratch) / "worktree"
        _git(repo, "worktree", "add", "--quiet", "--detach", str(worktree), commit)
        try:
            for edit in edits:
                edit.apply(worktree)
            _git(worktree, "add", "--intent-to-add", "--all")
            return _git(
                worktree, "diff", "--no-color", "--no-ext-diff", "--no-renames", "--full-index"
            )
        finally:
            _git(repo, "worktree", "remove", "--force", str(worktree))


def _record(repo: Path, case: Case, shas: list[str]) -> dict[str, str]:
    """The SWE-bench-format record of ``case``; a malformed one lacks ``base_commit``."""
    patch_from = shas[case.base if case.patch_from is None else case.patch_from]
    test_patch_from = shas[case.base if case.test_patch_from is None else case.test_patch_from]
    record = {
        "repo": DEMO_REPO,
        "instance_id": case.instance_id,
        "base_commit": shas[case.base],
        "patch": _diff_at(repo, patch_from, case.patch),
        "test_patch": _diff_at(repo, test_patch_from, case.test_patch),
        "problem_statement": case.problem_statement,
        "hints_text": case.hints_text,
        "created_at": case.created_at,
        "version": VERSION,
        "environment_setup_commit": shas[-1],
        "FAIL_TO_PASS": json.dumps(list(case.fail_to_pass)),
        "PASS_TO_PASS": json.dumps(list(case.pass_to_pass)),
    }
    if case.expected == "MALFORMED_RECORD":
        del record["base_commit"]
    return record


def write_repo_and_records(out_dir: Path) -> tuple[DemoPaths, list[str]]:
    """(Re)create ``out_dir/repo`` and ``records.jsonl``; the paths and the history's commits."""
    out_dir = Path(out_dir).resolve()
    paths = DemoPaths(
        repo=out_dir / "repo",
        records=out_dir / "records.jsonl",
        github_repo=out_dir / "github" / "calc.git",
        github_fixtures=out_dir / "github" / "fixtures.json",
    )
    if paths.repo.exists():
        shutil.rmtree(paths.repo)
    paths.records.unlink(missing_ok=True)
    shas = _build_history(paths.repo)
    lines = [
        json.dumps(_record(paths.repo, case, shas), ensure_ascii=False) + "\n"
        for case in sorted(CASES, key=lambda case: case.number)
    ]
    paths.records.write_bytes("".join(lines).encode("utf-8"))
    return paths, shas
