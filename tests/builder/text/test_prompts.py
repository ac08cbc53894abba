"""The prompts: SWT-Bench's sections in its order, worked examples the evaluation harness
applies as shown, and templates a user can replace."""

import re
import subprocess

import pytest

from builder.evaluate.strict.prediction_patch import PatchFormat, prepare
from builder.text import prompts
from builder.text.errors import TextError
from builder.text.files import SourceFile
from tests.support.text_repo import FILES

_BLOCK = re.compile(r"\[start of (\S+)\]\n(.*?)\n\[end of \1\]", re.DOTALL)


def _unnumbered(body: str) -> str:
    return "".join(line.split(" ", 1)[1] + "\n" for line in body.split("\n"))


def _apply(diff: str, path: str, before: str, tmp_path) -> str:
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_text(before)
    subprocess.run(["git", "apply", "-"], input=diff, text=True, cwd=tmp_path, check=True)
    return (tmp_path / path).read_text()


@pytest.mark.parametrize(
    ("style", "fence", "expected"),
    [("zsb", "```diff\n", PatchFormat.UNIFIED), ("zsp", "```custom-diff\n", PatchFormat.FUNCTION)],
)
def test_the_worked_example_turns_the_file_shown_before_into_the_one_shown_after(
    style, fence, expected, tmp_path
):
    prompt = prompts.render(prompts.template_source(style), "the issue", [], [])
    example = prompt[prompt.index("For example") :]
    (path, before), (same, after) = _BLOCK.findall(example)
    answer = example[example.index(fence, example.index("This diff")) :]
    answer = answer[: answer.index("```\n", len(fence)) + 4]
    before, after = _unnumbered(before), _unnumbered(after)

    prepared = prepare(answer, {path: before}.get)

    assert prepared.applicable, prepared.not_applicable
    assert prepared.format == expected and prepared.test_files == (path,) and same == path
    assert _apply(prepared.diff, path, before, tmp_path) == after


def test_a_prompt_has_swt_bench_s_sections_in_its_order():
    readme = SourceFile("README.md", "# calc\n")
    code = SourceFile("calc/stats.py", "x = 1\n")
    for style in prompts.STYLES:
        prompt = prompts.render(prompts.template_source(style), "the issue\n", [readme], [code])
        lines = prompt.split("\n")
        assert not lines[0].startswith("<") and lines[1] == "<issue>"  # one line of premise
        head = "\n".join(lines[1:16])
        assert head == (
            "<issue>\nthe issue\n\n</issue>\n\n<code>\n"
            "[start of README.md]\n1 # calc\n2 \n[end of README.md]\n"
            "[start of calc/stats.py]\n1 x = 1\n2 \n[end of calc/stats.py]\n</code>"
        )
        assert prompt.endswith("do not fix the issue itself.\n")
    zsp = prompts.template_source("zsp")
    assert "at the beginning (BOF) or at the end (EOF) of the file, nowhere else" in zsp


def test_answers_in_both_formats_apply_to_the_fixture_s_files():
    function_answer = (
        "```custom-diff\ndiff\ntests/test_stats.py\ninsert\nEOF\n"
        "def test_median_even():\n    assert median([1, 2, 3, 4]) == 2.5\nend diff\n```\n"
    )
    unified_answer = (
        "```diff\n--- a/tests/test_stats.py\n+++ b/tests/test_stats.py\n@@ -7,3 +7,7 @@\n"
        "\n def test_median_odd():\n     assert median([3, 1, 2]) == 2\n+\n+\n"
        "+def test_median_even():\n+    assert median([1, 2, 3, 4]) == 2.5\n```\n"
    )
    for answer, expected in ((function_answer, "function"), (unified_answer, "unified")):
        prepared = prepare(answer, FILES.get)
        assert prepared.applicable, prepared.not_applicable
        assert prepared.format.value == expected
        assert "+    assert median([1, 2, 3, 4]) == 2.5" in prepared.diff


def test_a_replacement_template_gives_exactly_its_text(tmp_path):
    (tmp_path / "zsb.jinja").write_text(
        "Premise.\n<issue>\n{{ issue }}\n</issue>\n\n<code>\n{{ readmes | code_text }}\n"
        "{{ files | code_text }}\n</code>\nPlease generate test cases.{% for f in files %}"
        " {{ f.path }}{% endfor %}\n"
    )
    source = prompts.template_source("zsb", tmp_path)
    prompt = prompts.render(source, "bug", [], [SourceFile("a.py", "x")])
    assert prompt == (
        "Premise.\n<issue>\nbug\n</issue>\n\n<code>\n\n[start of a.py]\n1 x\n[end of a.py]\n"
        "</code>\nPlease generate test cases. a.py\n"
    )
    with pytest.raises(TextError, match="zsp.jinja"):
        prompts.template_source("zsp", tmp_path)
    with pytest.raises(TextError, match="not one of zsb, zsp"):
        prompts.template_source("zs")
    with pytest.raises(TextError, match="undefined"):
        prompts.render("{{ nothing }}", "bug", [], [])
