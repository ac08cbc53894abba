"""Hostile text: patterns run over a megabyte of it in well under a second, an over-long problem
statement still gives a prompt, and a prompt template cannot reach the host."""

import time

import pytest

from builder.core.config import LiteConfig
from builder.core.records import TestStatus
from builder.release.lite import check_instance
from builder.text import prompts
from builder.text.errors import TextError
from builder.text.named import NameIndex
from builder.text.tokens import token_counter
from tests.support.instances import make_instance
from validation.runs.parsers import django, unittest

MEGABYTE = 1_000_000
BOUND_S = 2.0
"""Generous: each case takes milliseconds; Python's backtracking took minutes to hours."""

TEXTS = {
    "no_whitespace": "a" * MEGABYTE,  # the Lite rule's \S+\.(?:png|…): about 50 minutes
    "dotted_words": "a." * (MEGABYTE // 2),  # \b[\w.-]+/… from every word boundary
    "open_image_links": "![" * (MEGABYTE // 2),  # !\[[^\]]*\]\( from every opening
    "dashed_words": "-a" * (MEGABYTE // 2),  # a bare name.py, from every boundary
}


@pytest.mark.parametrize("shape", sorted(TEXTS))
def test_the_lite_rules_take_a_megabyte_without_whitespace_in_linear_time(shape):
    instance = make_instance(problem_statement=TEXTS[shape])
    started = time.monotonic()
    check = check_instance(instance, LiteConfig())
    assert time.monotonic() - started < BOUND_S
    assert "problem_too_short" in check.broken  # one word: the rules did run over it


@pytest.mark.parametrize("shape", ["dashed_words", "dotted_words", "no_whitespace"])
def test_the_files_an_issue_names_are_found_in_linear_time(shape):
    index = NameIndex([])
    text = TEXTS[shape][: MEGABYTE // 4]  # 20,000 characters took 15 s before, 250,000 hours
    started = time.monotonic()
    assert index.named(text) == []
    assert time.monotonic() - started < BOUND_S


@pytest.mark.parametrize("parser", [django, unittest], ids=["django", "unittest"])
def test_a_run_s_megabyte_line_of_word_characters_is_parsed_in_linear_time(parser):
    # test output is the run's own: a header pattern tried from every place of the line took
    # minutes for 200,000 characters
    log = "ok\n" + "a" * MEGABYTE + "\ntest_x (tests.test_a.T) ... ok\n"
    started = time.monotonic()
    parsed = parser.parse(log, ["tests/test_a.py"])
    assert time.monotonic() - started < BOUND_S
    assert list(parsed.tests.values()) == [TestStatus.PASSED]


def test_a_twenty_megabyte_problem_statement_is_cut_with_a_note():
    statement = "word " * 4_000_000
    shown = prompts.shown_issue(statement)
    assert len(shown) < prompts.ISSUE_CHARS + 200
    assert f"its first {prompts.ISSUE_CHARS} of {len(statement)} characters are shown" in shown
    text = prompts.render(prompts.template_source("zsb"), shown, [], [])
    assert token_counter("cl100k_base")(text) > 40_000


def test_a_text_over_the_tokenizers_million_characters_is_counted():
    # bpe_openai refuses a text of 1,000,000 characters ("Input too long to encode safely")
    assert token_counter("cl100k_base")("word " * 399_999 + "word") == 400_000


TEMPLATES = {
    "cycler_globals": "{{ cycler.__init__.__globals__.os.system('touch {marker}') }}",
    "self_globals": (
        "{{ self.__init__.__globals__.__builtins__.__import__('os').system('touch {marker}') }}"
    ),
    "class_walk": (
        "{% for c in ''.__class__.__mro__[1].__subclasses__() %}"
        "{% if c.__name__ == 'Popen' %}{{ c(['touch', '{marker}']) }}{% endif %}{% endfor %}"
    ),
}


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_a_prompt_template_cannot_run_a_host_command(tmp_path, name):
    marker = tmp_path / "ran"
    source = TEMPLATES[name].replace("{marker}", str(marker))
    with pytest.raises(TextError, match="prompt template"):
        prompts.render(source, "issue", [], [])
    assert not marker.exists()


def test_compare_reads_a_megabyte_skip_reason_of_dotted_words_in_linear_time():
    # "<module> is not installed" was tried from every dot of a dotted run: 20,000 characters
    # took 15 s (skip reasons of runs are cut at 300 characters, outcomes of other sources not)
    from builder.compare.causes import missing_module

    started = time.monotonic()
    assert missing_module("a." * (MEGABYTE // 2)) == ""
    assert time.monotonic() - started < BOUND_S
    assert missing_module("because scipy.sparse is not installed") == "scipy.sparse"


@pytest.mark.parametrize(
    "log",
    ["test_" * (MEGABYTE // 5), "_\n_ " + "a.py:" * (MEGABYTE // 5) + "\n"],
    ids=["test-words", "py-colons"],
)
def test_swt_benchs_sympy_parser_reads_a_megabyte_of_a_runs_output_in_linear_time(log):
    # their patterns, run as patterns, took 2 minutes (200,000 characters of test_test_…) and
    # over a minute (a failure-header line of 200,000 characters of a.py:a.py:…)
    from builder.evaluate.swt.parsers import parse_sympy

    started = time.monotonic()
    parse_sympy(log)
    assert time.monotonic() - started < BOUND_S


@pytest.mark.parametrize(
    "log",
    ["test_a (b) " * (MEGABYTE // 11), "FAIL: " + "test_a (b) " * (MEGABYTE // 11),
     "test_a (b)...x " * (MEGABYTE // 15), "test." * (MEGABYTE // 5)],
    ids=["names", "failure-header", "names-and-dots", "dotted-words"],
)  # fmt: skip
def test_swt_benchs_django_parser_reads_a_megabyte_of_a_runs_output_in_linear_time(log):
    # their pattern, run as a pattern, held an evaluation for minutes on 220,000 characters of
    # test_a (b) (it backtracks from every test name to the end of the log)
    from builder.evaluate.swt.parsers import parse_django

    started = time.monotonic()
    parse_django(log)
    assert time.monotonic() - started < BOUND_S
