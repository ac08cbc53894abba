"""Tests for recipes.patch_split, applying the split halves with real git."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from recipes.patch_split import (
    DEFAULT_TEST_PATTERNS,
    PathRules,
    SplitPatch,
    UnparsableDiff,
    split_patch,
)

# ---------------------------------------------------------------------------
# git helpers


def _git_env(home: Path) -> dict[str, str]:
    """An environment that makes git reproducible and blind to user configuration."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_CONFIG_NOSYSTEM="1",
        HOME=str(home),
        GIT_AUTHOR_NAME="Ada Author",
        GIT_AUTHOR_EMAIL="ada@example.com",
        GIT_AUTHOR_DATE="2024-01-02T03:04:05Z",
        GIT_COMMITTER_NAME="Cy Committer",
        GIT_COMMITTER_EMAIL="cy@example.com",
        GIT_COMMITTER_DATE="2024-01-02T03:04:05Z",
    )
    return env


@dataclass(frozen=True)
class _Git:
    """Runs git in one directory with a fixed environment."""

    cwd: Path
    env: dict[str, str]

    def __call__(self, *args: str, input_bytes: bytes | None = None) -> bytes:
        result = subprocess.run(
            ["git", *args],
            cwd=self.cwd,
            env=self.env,
            input=input_bytes,
            capture_output=True,
            check=False,
        )
        if result.returncode:
            raise AssertionError(
                f"git {' '.join(args)} failed ({result.returncode}): "
                f"{result.stderr.decode(errors='replace')}"
            )
        return result.stdout

    def text(self, *args: str) -> str:
        return self(*args).decode().strip()

    def at(self, path: Path) -> _Git:
        return _Git(path, self.env)


def _write(root: Path, rel: str, data: bytes | str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


LOGO_V1 = bytes(range(256)) * 2
LOGO_V2 = bytes(reversed(range(256))) + b"\x00changed"
FIXTURE_V1 = b"\x00\x01\x02fixture-v1\xff" * 40
FIXTURE_V2 = b"\x00\x01\x02fixture-v2\xfe" * 41
NEW_TEST_BLOB = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64)
LONG_TEXT = "".join(f"line {i}\n" for i in range(40))


def _base_files() -> dict[str, bytes | str]:
    return {
        "src/pkg/__init__.py": "",
        "src/pkg/core.py": "def add(a, b):\n    return a - b\n",
        "src/pkg/old_name.py": LONG_TEXT,
        "src/pkg/moved_and_edited.py": LONG_TEXT + "tail\n",
        "src/pkg/obsolete.py": "OLD = True\n",
        "src/pkg/emptied.py": "content that will go away\n",
        "src/pkg/empty.py": "",
        "src/pkg/no_newline.py": "X = 1",
        "src/pkg/latin1.txt": "caf\xe9 na\xefve\n".encode("latin-1"),
        "src/pkg/crlf.txt": "one\r\ntwo\r\n",
        "src/pkg/my file.py": "SPACE = 1\n",
        "src/pkg/café.py": "ACCENT = 1\n",
        "src/pkg/logo.png": LOGO_V1,
        "scripts/run.sh": "#!/bin/sh\necho run\n",
        "tests/test_core.py": "from pkg.core import add\n\ndef test_add():\n    assert add(1, 1)\n",
        "tests/helpers.py": LONG_TEXT,
        "tests/test_old.py": LONG_TEXT + "def test_x():\n    pass\n",
        "tests/test_gone.py": "def test_gone():\n    pass\n",
        "tests/data/fixture.bin": FIXTURE_V1,
        "tests/run_tests.sh": "#!/bin/sh\npytest\n",
    }


def _make_head(root: Path, git: _Git) -> None:
    _write(root, "src/pkg/core.py", "def add(a, b):\n    return a + b\n")
    git("mv", "src/pkg/old_name.py", "src/pkg/new_name.py")
    git("mv", "src/pkg/moved_and_edited.py", "src/pkg/moved.py")
    _write(root, "src/pkg/moved.py", LONG_TEXT + "tail edited\n")
    git("rm", "-q", "src/pkg/obsolete.py")
    _write(root, "src/pkg/emptied.py", "")
    _write(root, "src/pkg/empty.py", "now filled\n")
    _write(root, "src/pkg/no_newline.py", "X = 2")
    _write(root, "src/pkg/latin1.txt", "caf\xe9 na\xefve!\n".encode("latin-1"))
    _write(root, "src/pkg/crlf.txt", "one\r\nTWO\r\n")
    _write(root, "src/pkg/my file.py", "SPACE = 2\n")
    _write(root, "src/pkg/café.py", "ACCENT = 2\n")
    _write(root, "src/pkg/logo.png", LOGO_V2)
    _write(root, "src/pkg/added.py", "NEW = 1\n")
    _write(root, "src/pkg/new_empty.py", "")
    (root / "scripts/run.sh").chmod(0o755)
    _write(root, "tests/test_core.py", _base_files()["tests/test_core.py"] + "    assert 1\n")
    git("mv", "tests/helpers.py", "src/pkg/helpers.py")
    git("mv", "tests/test_old.py", "tests/test_renamed.py")
    git("rm", "-q", "tests/test_gone.py")
    _write(root, "tests/data/fixture.bin", FIXTURE_V2)
    _write(root, "tests/data/new.png", NEW_TEST_BLOB)
    _write(root, "tests/test_added.py", "def test_new():\n    assert True\n")
    _write(root, "tests/run_tests.sh", "#!/bin/sh\npytest -q\n")
    (root / "tests/run_tests.sh").chmod(0o755)


@dataclass(frozen=True)
class _Repo:
    git: _Git
    root: Path
    base: str
    head: str
    diff: str


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> _Repo:
    root = tmp_path_factory.mktemp("repo")
    git = _Git(root, _git_env(root))
    git("init", "-q", "-b", "main")
    for rel, data in _base_files().items():
        _write(root, rel, data)
    (root / "scripts/run.sh").chmod(0o644)
    (root / "tests/run_tests.sh").chmod(0o644)
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    base = git.text("rev-parse", "HEAD")
    _make_head(root, git)
    git("add", "-A")
    git("commit", "-q", "-m", "head")
    head = git.text("rev-parse", "HEAD")
    raw = git("diff", "--binary", "-M", base, head)
    return _Repo(git, root, base, head, raw.decode("utf-8", "surrogateescape"))


@pytest.fixture(scope="module")
def split(repo: _Repo) -> SplitPatch:
    return split_patch(repo.diff)


def _checkout(repo: _Repo, tmp_path: Path, name: str) -> _Git:
    work = tmp_path / name
    repo.git("worktree", "add", "-q", "--detach", str(work), repo.base)
    return repo.git.at(work)


def _apply(git: _Git, patch: str, *, check_only: bool = False) -> None:
    data = patch.encode("utf-8", "surrogateescape")
    git("apply", *(["--check"] if check_only else []), "-", input_bytes=data)


def _tree(git: _Git) -> str:
    git("add", "-A")
    return git.text("write-tree")


# ---------------------------------------------------------------------------
# the real diff


def test_the_fixture_diff_exercises_every_git_feature(repo: _Repo) -> None:
    for marker in (
        "GIT binary patch",
        "rename from ",
        "similarity index 100%",
        "old mode 100644",
        "new mode 100755",
        "deleted file mode",
        "new file mode",
        "\\ No newline at end of file",
        '"a/src/pkg/caf\\303\\251.py"',
        "\r\n",
        "\udce9",  # a latin-1 byte, carried through as a surrogate escape
    ):
        assert marker in repo.diff, marker


def test_classification_of_the_real_diff(split: SplitPatch) -> None:
    assert sorted(split.code_files) == sorted(
        [
            "scripts/run.sh",
            "src/pkg/added.py",
            "src/pkg/café.py",
            "src/pkg/core.py",
            "src/pkg/crlf.txt",
            "src/pkg/empty.py",
            "src/pkg/emptied.py",
            "src/pkg/helpers.py",
            "src/pkg/latin1.txt",
            "src/pkg/logo.png",
            "src/pkg/moved.py",
            "src/pkg/my file.py",
            "src/pkg/new_empty.py",
            "src/pkg/new_name.py",
            "src/pkg/no_newline.py",
            "src/pkg/obsolete.py",
        ]
    )
    assert sorted(split.test_files) == sorted(
        [
            "tests/data/fixture.bin",
            "tests/data/new.png",
            "tests/run_tests.sh",
            "tests/test_added.py",
            "tests/test_core.py",
            "tests/test_gone.py",
            "tests/test_renamed.py",
        ]
    )
    assert split.binary_code_files == ("src/pkg/logo.png",)
    assert sorted(split.binary_test_files) == ["tests/data/fixture.bin", "tests/data/new.png"]
    assert sorted(split.renamed) == [
        "src/pkg/helpers.py",
        "src/pkg/moved.py",
        "src/pkg/new_name.py",
        "tests/test_renamed.py",
    ]
    assert sorted(split.deleted) == ["src/pkg/obsolete.py", "tests/test_gone.py"]
    assert sorted(split.added) == [
        "src/pkg/added.py",
        "src/pkg/new_empty.py",
        "tests/data/new.png",
        "tests/test_added.py",
    ]


def test_file_lists_follow_the_diff_order(repo: _Repo, split: SplitPatch) -> None:
    order = [p for p in split.code_files + split.test_files]
    positions = {p: repo.diff.index(p.replace("é", "\\303\\251")) for p in order}
    assert list(split.code_files) == sorted(split.code_files, key=positions.__getitem__)
    assert list(split.test_files) == sorted(split.test_files, key=positions.__getitem__)


def test_halves_reproduce_every_section_exactly(repo: _Repo, split: SplitPatch) -> None:
    everything_code = split_patch(repo.diff, PathRules(test_patterns=("no-such-dir/",)))
    everything_test = split_patch(repo.diff, PathRules(test_patterns=("*",)))
    assert everything_code.patch == repo.diff
    assert everything_code.test_patch == ""
    assert everything_test.test_patch == repo.diff
    assert everything_test.patch == ""
    assert len(split.patch) + len(split.test_patch) == len(repo.diff)
    sections = split_patch(split.patch + split.test_patch, PathRules(("*",)))
    assert sorted(sections.test_files) == sorted(split.code_files + split.test_files)


def test_both_halves_apply_at_base_and_rebuild_head(
    repo: _Repo, split: SplitPatch, tmp_path: Path
) -> None:
    work = _checkout(repo, tmp_path, "both")
    _apply(work, split.patch, check_only=True)
    _apply(work, split.patch)
    _apply(work, split.test_patch, check_only=True)
    _apply(work, split.test_patch)
    assert _tree(work) == repo.git.text("rev-parse", f"{repo.head}^{{tree}}")
    assert work("diff", "--stat", repo.head) == b""


def test_halves_apply_in_either_order(repo: _Repo, split: SplitPatch, tmp_path: Path) -> None:
    work = _checkout(repo, tmp_path, "reverse")
    _apply(work, split.test_patch)
    _apply(work, split.patch)
    assert _tree(work) == repo.git.text("rev-parse", f"{repo.head}^{{tree}}")


@pytest.mark.parametrize("half", ["patch", "test_patch"])
def test_each_half_applies_alone_and_touches_only_its_files(
    repo: _Repo, split: SplitPatch, tmp_path: Path, half: str
) -> None:
    work = _checkout(repo, tmp_path, half)
    text = getattr(split, half)
    _apply(work, text, check_only=True)
    _apply(work, text)
    work("add", "-A")
    changed = work("diff", "--cached", "--name-only", "-z", "--no-renames", repo.base)
    changed_paths = {p.decode() for p in changed.split(b"\0") if p}
    unchanged = work("diff", "--cached", "--name-only", "-z", "--no-renames", repo.head)
    still_different = {p.decode() for p in unchanged.split(b"\0") if p}
    own = set(split.code_files if half == "patch" else split.test_files)
    assert own <= changed_paths
    assert not own & still_different  # every file of this half is now as in head
    other = set(split.test_files if half == "patch" else split.code_files)
    assert not other & changed_paths - own


def test_git_diff_without_binary_still_splits_but_flags_binaries(repo: _Repo) -> None:
    raw = repo.git("diff", "-M", repo.base, repo.head).decode("utf-8", "surrogateescape")
    assert "Binary files a/src/pkg/logo.png and b/src/pkg/logo.png differ" in raw
    result = split_patch(raw)
    assert result.binary_code_files == ("src/pkg/logo.png",)
    assert sorted(result.binary_test_files) == ["tests/data/fixture.bin", "tests/data/new.png"]
    assert result.patch + result.test_patch != ""
    assert len(result.patch) + len(result.test_patch) == len(raw)


def test_copies_count_as_added(repo: _Repo) -> None:
    raw = repo.git("diff", "-C", "-C", "--binary", repo.base, repo.head).decode(
        "utf-8", "surrogateescape"
    )
    copied = "diff --git a/src/pkg/core.py b/src/pkg/core_copy.py\n"
    section = (
        copied + "similarity index 100%\ncopy from src/pkg/core.py\ncopy to src/pkg/core_copy.py\n"
    )
    result = split_patch(raw + section)
    assert "src/pkg/core_copy.py" in result.added
    assert "src/pkg/core_copy.py" not in result.renamed
    assert result.patch.endswith(section)


# ---------------------------------------------------------------------------
# small hand-written diffs

MODIFY = (
    "diff --git a/src/a.py b/src/a.py\n"
    "index 1111111..2222222 100644\n"
    "--- a/src/a.py\n"
    "+++ b/src/a.py\n"
    "@@ -1,2 +1,2 @@\n"
    " keep\n"
    "-old\n"
    "+new\n"
)
TEST_MODIFY = MODIFY.replace("src/a.py", "tests/test_a.py")


def test_empty_and_blank_diffs_split_into_nothing() -> None:
    for text in ("", "\n", "  \n\n"):
        assert split_patch(text) == SplitPatch("", "", (), (), (), (), (), (), ())


def test_simple_split_keeps_order_and_text() -> None:
    result = split_patch(TEST_MODIFY + MODIFY)
    assert result.patch == MODIFY
    assert result.test_patch == TEST_MODIFY
    assert result.code_files == ("src/a.py",)
    assert result.test_files == ("tests/test_a.py",)


def test_last_section_without_final_newline_is_kept_verbatim() -> None:
    text = TEST_MODIFY + MODIFY.rstrip("\n")
    assert split_patch(text).patch == MODIFY.rstrip("\n")


def test_blank_preamble_is_dropped() -> None:
    assert split_patch("\n" + MODIFY).patch == MODIFY


def test_header_only_sections() -> None:
    mode = "diff --git a/bin/x b/bin/x\nold mode 100644\nnew mode 100755\n"
    rename = (
        "diff --git a/tests/a.py b/src/a.py\n"
        "similarity index 100%\nrename from tests/a.py\nrename to src/a.py\n"
    )
    empty = "diff --git a/tests/e.py b/tests/e.py\nnew file mode 100644\nindex 0000000..e69de29\n"
    result = split_patch(mode + rename + empty)
    assert result.patch == mode + rename
    assert result.test_patch == empty
    assert result.code_files == ("bin/x", "src/a.py")
    assert result.renamed == ("src/a.py",)
    assert result.added == ("tests/e.py",)


def test_renamed_path_with_spaces_uses_new_name() -> None:
    rename = (
        "diff --git a/old dir/x.py b/tests/new name.py\n"
        "similarity index 100%\nrename from old dir/x.py\nrename to tests/new name.py\n"
    )
    result = split_patch(rename)
    assert result.test_files == ("tests/new name.py",)
    assert result.renamed == ("tests/new name.py",)


def test_deleted_file_counts_under_its_old_name() -> None:
    deleted = (
        "diff --git a/tests/test_x.py b/tests/test_x.py\n"
        "deleted file mode 100644\nindex 3b18e51..0000000\n"
        "--- a/tests/test_x.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    )
    result = split_patch(deleted)
    assert result.test_files == ("tests/test_x.py",)
    assert result.deleted == ("tests/test_x.py",)


def test_quoted_path_is_unquoted() -> None:
    text = (
        'diff --git "a/tests/t\\303\\251st \\"q\\".py" "b/tests/t\\303\\251st \\"q\\".py"\n'
        "index 1111111..2222222 100644\n"
        '--- "a/tests/t\\303\\251st \\"q\\".py"\n'
        '+++ "b/tests/t\\303\\251st \\"q\\".py"\n'
        "@@ -1 +1 @@\n-a\n+b\n"
    )
    assert split_patch(text).test_files == ('tests/tést "q".py',)


# ---------------------------------------------------------------------------
# unparsable input


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("this is not a diff\n", "not a git diff"),
        ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "not a git diff"),
        ("From abc\nSubject: x\n\n" + MODIFY, "before the first"),
        (MODIFY[: -len("+new\n")], "shorter than expected"),  # truncated hunk
        (MODIFY + "+extra\n", "after the last hunk"),
        (MODIFY + "garbage\n", "after the last hunk"),
        (MODIFY.replace("@@ -1,2 +1,2 @@", "@@ -1,2 +1,2 @@\n?bad"), "Hunk diff line expected"),
        ("diff --git a/x b/x\nindex 1..2 100644\n@@ -1 +1 @@\n-a\n+b\n", "unexpected line"),
        ("diff --git a/x b/x\nsomething odd\n", "unexpected line 2"),
        ("diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n", "no hunks"),
        ("diff --git a/x b/x\nindex 1..2 100644\nGIT binary patch\n", "without data"),
        (
            "diff --git a/x b/x\nindex 1..2 100644\nGIT binary patch\nliteral 3\nKcmb<m s\n",
            "bad binary patch line 5",
        ),
    ],
)
def test_unparsable_diffs(text: str, message: str) -> None:
    with pytest.raises(UnparsableDiff, match=message):
        split_patch(text)


def test_unparsable_diff_is_a_value_error() -> None:
    assert issubclass(UnparsableDiff, ValueError)


def test_error_reports_the_line_in_the_whole_diff() -> None:
    with pytest.raises(UnparsableDiff, match=r"line 17 after the last hunk"):
        split_patch(MODIFY + MODIFY.replace("src/a.py", "src/b.py") + "oops\n")


# ---------------------------------------------------------------------------
# path rules


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_a.py",
        "tests/data/x.json",  # test path, non-Python: classification only
        "test/x.c",
        "src/pkg/testing/util.py",
        "src/pkg/tests/__init__.py",
        "src/test/java/FooTest.java",
        "test_top.py",
        "pkg/test_mod.py",
        "pkg/mod_test.py",
        "conftest.py",
        "src/conftest.py",
    ],
)
def test_default_rules_test_paths(path: str) -> None:
    assert PathRules().is_test(path)


@pytest.mark.parametrize(
    "path",
    [
        "src/pkg/contest.py",
        "src/pkg/testing.py",
        "src/pkg/tests.py",
        "src/pkg/test",  # a file called "test", not a directory
        "src/pkg/latest/x.py",
        "src/pkg/test_utils/helpers.py",
        "src/pkg/Tests/x.py",  # matching is case-sensitive
        "src/pkg/test_mod.pyc",
        "src/pkg/attest_test.pyx",
        "docs/testing.md",
        "setup.py",
    ],
)
def test_default_rules_code_paths(path: str) -> None:
    assert not PathRules().is_test(path)


def test_default_patterns_are_exposed() -> None:
    assert PathRules().test_patterns == DEFAULT_TEST_PATTERNS


def test_custom_patterns() -> None:
    rules = PathRules(test_patterns=("spec/", "*_spec.rb", "src/*/fixtures/*.json", "e2e/cases/"))
    assert rules.is_test("spec/models/user.rb")
    assert rules.is_test("lib/user_spec.rb")
    assert rules.is_test("src/a/b/fixtures/x.json")  # "*" crosses "/" in whole-path patterns
    assert not rules.is_test("fixtures/x.json")
    assert rules.is_test("e2e/cases/a/b.py")
    assert not rules.is_test("x/e2e/cases/a.py")  # whole-path patterns are anchored
    assert not rules.is_test("e2e/cases")
    assert not rules.is_test("tests/test_a.py")  # custom patterns replace the defaults


def test_rules_accept_a_list_and_are_hashable() -> None:
    rules = PathRules(test_patterns=["tests/"])  # type: ignore[arg-type]
    assert rules.test_patterns == ("tests/",)
    assert hash(rules) == hash(PathRules(("tests/",)))


@pytest.mark.parametrize("patterns", [("",), ("/",), (3,)])
def test_rules_reject_bad_patterns(patterns: tuple[object, ...]) -> None:
    with pytest.raises(ValueError, match="invalid test path pattern"):
        PathRules(test_patterns=patterns)  # type: ignore[arg-type]


def test_rules_reject_a_bare_string() -> None:
    with pytest.raises(TypeError):
        PathRules(test_patterns="tests/")  # type: ignore[arg-type]


def test_custom_rules_drive_the_split() -> None:
    result = split_patch(MODIFY + TEST_MODIFY, PathRules(("src/",)))
    assert result.test_files == ("src/a.py",)
    assert result.code_files == ("tests/test_a.py",)


def test_crlf_diffs_split_by_their_paths_and_keep_their_bytes() -> None:
    crlf = "".join(line + "\r\n" for line in (TEST_MODIFY + MODIFY).splitlines())
    result = split_patch(crlf)
    assert result.code_files == ("src/a.py",)
    assert result.test_files == ("tests/test_a.py",)
    assert result.test_patch + result.patch == crlf
    assert result.test_patch.endswith("\r\n") and "\r\n" in result.patch


def test_crlf_test_file_names_match_file_name_patterns() -> None:
    crlf = MODIFY.replace("src/a.py", "src/test_a.py").replace("\n", "\r\n")
    assert split_patch(crlf).test_files == ("src/test_a.py",)
