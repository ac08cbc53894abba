"""Tests for recipes.linking: which issues a pull request's text closes."""

from __future__ import annotations

import pytest

from recipes.linking import CLOSING_KEYWORDS, closing_references

REPO = "octo-org/octo-repo"


@pytest.mark.parametrize("keyword", CLOSING_KEYWORDS)
def test_every_keyword_closes_a_local_reference(keyword: str) -> None:
    assert closing_references(f"{keyword} #7", REPO) == [7]


@pytest.mark.parametrize("keyword", ["FIXES", "Fixes", "fIxEs", "RESOLVED", "Close"])
def test_keywords_are_case_insensitive(keyword: str) -> None:
    assert closing_references(f"{keyword} #7", REPO) == [7]


@pytest.mark.parametrize(
    "text",
    ["Fixes: #3", "fixes:  #3", "Resolves:\t#3", "closes\t#3", "This PR fixes #3."],
)
def test_colon_and_whitespace_variants(text: str) -> None:
    assert closing_references(text, REPO) == [3]


@pytest.mark.parametrize(
    "text",
    [
        "#3",  # no keyword
        "see #3",  # not a closing keyword
        "prefixes #3",  # keyword only as a word suffix
        "unfixed #3",
        "fixesx #3",  # keyword only as a word prefix
        "fix_es #3",
        "fixes#3",  # no whitespace
        "Fixes:#3",  # whitespace is required after the colon too
        "fixes\n#3",  # the reference must be on the keyword's line
        "fixes # 3",
        "fixes #0",  # issue numbers start at 1
        "fixes #03",
        "fixes #3abc",  # not a reference at all
        "fixes issue #3",  # a word between keyword and reference
        "fixes x#3",
    ],
)
def test_non_references(text: str) -> None:
    assert closing_references(text, REPO) == []


def test_longer_number_is_not_read_as_a_prefix() -> None:
    assert closing_references("fixes #12", REPO) == [12]
    assert 1 not in closing_references("fixes #12", REPO)


def test_trailing_punctuation_ends_the_number() -> None:
    assert closing_references("(fixes #12), closes #13; resolves #14!", REPO) == [12, 13, 14]


def test_same_repo_qualified_reference() -> None:
    assert closing_references("fixes octo-org/octo-repo#21", REPO) == [21]


def test_qualified_reference_compares_repo_case_insensitively() -> None:
    assert closing_references("Fixes Octo-Org/OCTO-repo#21", REPO) == [21]
    assert closing_references("fixes octo-org/octo-repo#21", "Octo-Org/Octo-Repo") == [21]


@pytest.mark.parametrize(
    "text",
    [
        "fixes other-org/octo-repo#21",
        "fixes octo-org/other-repo#21",
        "fixes octo-org/octo-repo-2#21",
        "fixes octo-org/octo-rep#21",
        "fixes xocto-org/octo-repo#21",
    ],
)
def test_other_repo_reference_is_ignored(text: str) -> None:
    assert closing_references(text, REPO) == []


def test_issue_url_reference() -> None:
    text = "Resolves https://github.com/octo-org/octo-repo/issues/99"
    assert closing_references(text, REPO) == [99]


@pytest.mark.parametrize(
    "text",
    [
        "Resolves HTTPS://GitHub.com/Octo-Org/Octo-Repo/issues/99",
        "resolves http://github.com/octo-org/octo-repo/issues/99",
        "resolves https://github.com/octo-org/octo-repo/issues/99.",
        "resolves https://github.com/octo-org/octo-repo/issues/99#issuecomment-1",
        "resolves https://github.com/octo-org/octo-repo/issues/99?x=1",
    ],
)
def test_issue_url_variants(text: str) -> None:
    assert closing_references(text, REPO) == [99]


@pytest.mark.parametrize(
    "text",
    [
        "fixes https://github.com/octo-org/octo-repo/pull/99",  # a pull request, not an issue
        "fixes https://github.com/octo-org/octo-repo/pulls/99",
        "fixes https://github.com/other/octo-repo/issues/99",  # other repository
        "fixes https://gitlab.com/octo-org/octo-repo/issues/99",  # other host
        "fixes https://github.com/octo-org/octo-repo/issues/99/x",  # not the issue page
        "fixes https://github.com/octo-org/octo-repo/issues/990x",
        "fixes https://github.com/octo-org/octo-repo/issues/",
        "fixes https://api.github.com/repos/octo-org/octo-repo/issues/99",
    ],
)
def test_url_non_references(text: str) -> None:
    assert closing_references(text, REPO) == []


def test_enterprise_web_host() -> None:
    text = "fixes https://ghe.example.com/octo-org/octo-repo/issues/5"
    assert closing_references(text, REPO) == []
    assert closing_references(text, REPO, web_hosts=("ghe.example.com",)) == [5]
    assert closing_references(text, REPO, web_hosts=["GHE.example.com", "github.com"]) == [5]


def test_web_host_with_port_and_no_hosts() -> None:
    text = "fixes https://ghe.example.com:8443/octo-org/octo-repo/issues/5 and fixes #6"
    assert closing_references(text, REPO, web_hosts=("ghe.example.com:8443",)) == [5, 6]
    assert closing_references(text, REPO, web_hosts=("ghe.example.com",)) == [6]
    assert closing_references(text, REPO, web_hosts=()) == [6]


def test_only_the_first_reference_after_a_keyword_counts() -> None:
    # GitHub itself only honours the reference right after the keyword.
    assert closing_references("fixes #1, #2 and #3", REPO) == [1]
    assert closing_references("fixes #1, fixes #2 and closes #3", REPO) == [1, 2, 3]


def test_results_are_deduplicated_in_order_of_first_appearance() -> None:
    text = (
        "Closes #9. Also fixes https://github.com/octo-org/octo-repo/issues/4\n"
        "and resolves octo-org/octo-repo#9 and fixes #4 and fixes #1"
    )
    assert closing_references(text, REPO) == [9, 4, 1]


def test_html_comment_is_ignored() -> None:
    assert closing_references("<!-- fixes #1 --> fixes #2", REPO) == [2]


def test_multiline_html_comment_is_ignored() -> None:
    text = "Summary\n<!--\nTemplate: write 'Fixes #123' here\n-->\nFixes #45\n"
    assert closing_references(text, REPO) == [45]


def test_unclosed_html_comment_hides_the_rest() -> None:
    assert closing_references("fixes #1 <!-- fixes #2\nfixes #3", REPO) == [1]


def test_removing_a_comment_does_not_glue_keyword_to_reference() -> None:
    assert closing_references("fixes<!-- x -->#1", REPO) == []
    assert closing_references("fixes <!-- x -->#1", REPO) == [1]


def test_fenced_code_block_is_ignored() -> None:
    text = "Fixes #1\n\n```python\n# fixes #2\n```\nfixes #3\n~~~\nfixes #4\n~~~\n"
    assert closing_references(text, REPO) == [1, 3]


def test_fence_closes_only_with_same_character_and_enough_length() -> None:
    text = "````\n```\nfixes #1\n~~~~\nfixes #2\n````\nfixes #3\n"
    assert closing_references(text, REPO) == [3]


def test_unclosed_fence_runs_to_the_end() -> None:
    assert closing_references("fixes #1\n```\nfixes #2\n", REPO) == [1]


def test_indented_fence_up_to_three_spaces() -> None:
    assert closing_references("   ```\nfixes #1\n   ```\nfixes #2", REPO) == [2]


def test_backtick_fence_info_may_not_contain_backticks() -> None:
    # "```a`b```" is an inline code span, not a fence; the next line is prose.
    assert closing_references("```a`b```\nfixes #5", REPO) == [5]


def test_inline_code_is_ignored() -> None:
    assert closing_references("Use `fixes #1` to link; this fixes #2", REPO) == [2]
    assert closing_references("this fixes `#1`", REPO) == []
    assert closing_references("``fixes `#1` here`` fixes #3", REPO) == [3]


def test_unmatched_backtick_is_literal() -> None:
    assert closing_references("a ` b fixes #8", REPO) == [8]


def test_inline_code_does_not_cross_paragraphs() -> None:
    text = "a `b\n\nfixes #8 c` d"
    assert closing_references(text, REPO) == [8]


def test_crlf_line_endings() -> None:
    text = "Fixes #1\r\n```\r\nfixes #2\r\n```\r\nCloses #3\r\n"
    assert closing_references(text, REPO) == [1, 3]


def test_empty_text() -> None:
    assert closing_references("", REPO) == []


@pytest.mark.parametrize("repo", ["octo-org", "a/b/c", "/x", "x/"])
def test_malformed_repo_is_rejected(repo: str) -> None:
    with pytest.raises(ValueError, match="owner/name"):
        closing_references("fixes #1", repo)
