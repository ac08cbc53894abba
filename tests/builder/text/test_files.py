"""The indexable files of a commit, read from a repository without a checkout."""

import pytest

from builder.core.gitutil import GitError
from builder.text.files import MAX_FILE_BYTES, excluded_by_path, read_files, read_tree
from tests.support.text_repo import FILES, LATIN1, text_fixture


def test_regular_text_files_are_read_at_the_commit_and_the_rest_left_out(tmp_path):
    fixture = text_fixture(tmp_path / "repo")
    fixture.repo.commit({"calc/stats.py": "changed later\n"}, "after the base")
    (fixture.repo.path / "link.py").symlink_to("calc/io.py")
    fixture.repo.commit({}, "a symlink")

    files = {file.path: file.text for file in read_files(fixture.repo.path, fixture.commit)}

    assert files["calc/stats.py"] == FILES["calc/stats.py"]  # the base commit's text
    assert "tests/test_stats.py" in files  # tests are indexed
    assert "README.md" in files
    for left_out in ("vendor/sortedlib.py", "web/app.min.js", "data/values.bin", LATIN1):
        assert left_out not in files
    assert "link.py" not in read_files(fixture.repo.path, "HEAD")  # no symlink, at any commit
    assert [f.path for f in read_files(fixture.repo.path, fixture.commit)] == sorted(files)


def test_a_file_over_the_size_limit_is_left_out(tmp_path):
    fixture = text_fixture(tmp_path / "repo")
    head = fixture.repo.commit({"big.py": "x = 1\n" * (MAX_FILE_BYTES // 6 + 1)}, "big")
    assert "big.py" not in {file.path for file in read_files(fixture.repo.path, head)}


@pytest.mark.parametrize(
    ("path", "excluded"),
    [
        ("src/pkg/_vendor/idna/core.py", True),
        ("third_party/x.py", True),
        ("node_modules/a/index.js", True),
        ("static/app.min.js", True),
        ("proto/api_pb2.py", True),
        ("package-lock.json", True),
        ("src/vendor.py", False),  # a file named vendor is not a vendored dir
        ("tests/test_vendor.py", False),
        ("src/pkg/core.py", False),
    ],
)
def test_the_path_rule(path, excluded):
    assert excluded_by_path(path) is excluded


def test_an_unknown_commit_raises_git_error(tmp_path):
    fixture = text_fixture(tmp_path / "repo")
    with pytest.raises(GitError):
        read_files(fixture.repo.path, "0" * 40)


def test_a_blob_the_mirror_lacks_is_named_and_the_rest_read(tmp_path):
    fixture = text_fixture(tmp_path / "repo")
    blob = fixture.repo.git("rev-parse", f"{fixture.commit}:calc/stats.py").strip()
    (fixture.repo.path / ".git/objects" / blob[:2] / blob[2:]).unlink()

    tree = read_tree(fixture.repo.path, fixture.commit)

    assert tree.missing == ["calc/stats.py"]
    assert "calc/io.py" in {file.path for file in tree.files}
    assert "calc/stats.py" not in {file.path for file in tree.files}
