"""Mutants of the golden patch's lines: each operator, only the patch's lines, deterministic."""

import ast

from builder.evaluate.strict.mutation import mutants, same_bytecode, select, statement_lines

SOURCE = '''"""Docs."""


def clamp(value, low=0, high=10):
    """Keep value within [low, high]."""
    if value < low and not strict():
        return low
    total = value * 2 + 1
    flag = True
    name = "x"
    log(f"value {value}")
    return total % high


def untouched(a):
    return a == 1
'''


def by_line(found):
    return {(m.line, m.operator, m.description.split(": ", 1)[1]) for m in found}


def test_each_operator_on_the_patch_lines_only():
    found = mutants("m.py", SOURCE, lines=range(6, 13))
    assert by_line(found) == {
        (6, "comparison", "value < low → value >= low"),
        (6, "boolean", "value < low and not strict() → value < low or not strict()"),
        (6, "boolean", "not strict() → strict()"),
        (7, "return", "return low → return None"),
        (8, "arithmetic", "value * 2 + 1 → value * 2 - 1"),
        (8, "arithmetic", "value * 2 → value / 2"),
        (8, "constant", "2 → 3"),
        (8, "constant", "1 → 2"),
        (8, "statement", "total = value * 2 + 1 → pass"),
        (9, "constant", "True → False"),
        (9, "statement", "flag = True → pass"),
        (10, "constant", "\"x\" → ''"),
        (10, "statement", 'name = "x" → pass'),
        (11, "statement", 'log(f"value {value}") → pass'),
        (12, "arithmetic", "total % high → total * high"),
        (12, "return", "return total % high → return None"),
    }
    assert not any(m.line >= 15 for m in mutants("m.py", SOURCE, lines=range(1, 13)))


def test_a_mutant_changes_only_its_span_and_stays_valid_python():
    for mutant in mutants("m.py", SOURCE, lines=range(1, 17)):
        ast.parse(mutant.text)
        changed = [
            n
            for n, (a, b) in enumerate(
                zip(SOURCE.splitlines(), mutant.text.splitlines(), strict=True), 1
            )
            if a != b
        ]
        assert changed == [mutant.line], mutant.description
    comparison = next(m for m in mutants("m.py", SOURCE, [16]) if m.operator == "comparison")
    assert comparison.text == SOURCE.replace("return a == 1", "return a != 1")


def test_no_mutant_equals_the_original_and_invalid_files_give_none():
    assert mutants("m.py", "def f():\n    return None\n", [2]) == []
    assert mutants("m.py", "def f(:\n", [1]) == []


def test_non_ascii_columns_are_respected():
    text = 'label = "é" if x == 1 else "ü"\n'
    texts = {m.text for m in mutants("m.py", text, [1])}
    assert 'label = "é" if x != 1 else "ü"\n' in texts


def test_selection_is_deterministic_and_spread():
    found = mutants("m.py", SOURCE, lines=range(1, 17))
    assert select(found, 100) == found
    chosen = select(found, 4)
    assert len(chosen) == 4 and chosen == select(found, 4)
    assert chosen[0] == found[0] and chosen[-1] != found[0]
    assert select(found, 0) == []
    assert mutants("m.py", SOURCE, range(1, 17)) == found  # the same input, the same order


def test_a_mutant_that_compiles_to_the_same_bytecode_is_marked():
    text = "def f(x):\n    ...\n    if False:\n        x = 1\n    return x + 1\n"
    marked = {m.description: m.same_bytecode for m in mutants("m.py", text, [2, 3, 4, 5])}
    assert marked["line 2: ... → pass"]  # a constant statement compiles to nothing
    assert marked["line 4: x = 1 → pass"]  # dead code
    assert not marked["line 5: x + 1 → x - 1"] and not marked["line 3: False → True"]


def test_same_bytecode_ignores_positions_but_not_values_or_types():
    assert same_bytecode("x = (1 +\n  2)\n", "x = (1 + 2)\n")  # folded alike, positions differ
    assert not same_bytecode("x = 1\n", "x = 1.0\n")
    assert not same_bytecode("x = 0\n", "x = False\n")
    assert not same_bytecode("def f():\n    return a\n", "def f():\n    return b\n")
    assert not same_bytecode("return 1\n", "return 1\n")  # not a module: nothing to compare


def test_only_lines_of_statements_are_executable():
    executable = statement_lines(SOURCE, range(1, 17))
    assert executable == {4, 6, 7, 8, 9, 10, 11, 12, 15, 16}  # no docstring, no blank line
    commented = "def f(\n    a,  # why\n):\n    # a comment\n    return a\n"
    assert statement_lines(commented, range(1, 6)) == {1, 2, 3, 5}
    assert statement_lines("def f(:\n", [1]) == {1}  # not Python: every line


def test_lines_are_those_ast_numbers_despite_form_feeds_and_line_separators():
    text = 'X = "a\u2028b"\n\x0c\ndef f(a):\n    return a == 1\n'
    (comparison,) = [m for m in mutants("m.py", text, [4]) if m.operator == "comparison"]
    assert comparison.text == text.replace("a == 1", "a != 1")
