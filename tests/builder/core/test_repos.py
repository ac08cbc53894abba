"""Mirrors and worktrees with submodules: checked out at the recorded commit, or named when not."""

from __future__ import annotations

import shutil
import threading

import pytest

from builder.core.gitutil import git
from builder.core.repos import (
    RepoCache,
    RepoUnavailable,
    file_at,
    github_repo,
    submodules,
    worktree,
)
from tests.support.git import GitRepo
from tests.support.submodules import with_submodule


def test_github_submodule_mirrored_in_the_same_cache_and_checked_out_at_its_commit(tmp_path):
    main, helpers, commit, recorded = with_submodule(
        tmp_path, "https://github.com/astro/helpers.git"
    )
    cache = RepoCache(
        tmp_path / "cache", {"astro/main": str(main.path), "astro/helpers": str(helpers.path)}
    )
    mirror = cache.mirror("astro/main", commit)
    assert (tmp_path / "cache" / "astro__helpers.git" / "HEAD").is_file()  # its own mirror
    (submodule,) = submodules(mirror, commit)
    assert (submodule.name, submodule.path, submodule.commit) == ("helpers", "helpers", recorded)
    path = tmp_path / "run" / "repo"
    with worktree(mirror, commit, path) as tree:
        assert (tree / "helpers" / "ah.py").read_text() == "VERSION = 1\n"
        assert git("rev-parse", "HEAD", cwd=tree / "helpers").strip() == recorded
        assert git("status", "--porcelain", cwd=tree) == ""  # as the commit records it
    assert not path.exists()
    assert git("worktree", "list", "--porcelain", cwd=mirror).count("worktree ") == 1


def test_local_submodule_url_and_nested_submodules(tmp_path):
    inner = GitRepo(tmp_path / "inner")
    inner_commit = inner.commit({"deep.txt": "deep\n"})
    main, helpers, _, _ = with_submodule(tmp_path)
    helpers.git("-c", "protocol.file.allow=always", "submodule", "add", "-q",
                str(inner.path), "inner")  # fmt: skip
    nested = helpers.commit({}, "nest inner")
    main.git("-C", "helpers", "fetch", "-q", "origin")
    main.git("-C", "helpers", "checkout", "-q", nested)
    commit = main.commit({}, "record nested helpers")
    mirror = RepoCache(tmp_path / "cache", {"o/main": str(main.path)}).mirror("o/main", commit)
    with worktree(mirror, commit, tmp_path / "run") as tree:
        assert (tree / "helpers" / "inner" / "deep.txt").read_text() == "deep\n"
        assert git("rev-parse", "HEAD", cwd=tree / "helpers" / "inner").strip() == inner_commit


def test_a_submodule_that_cannot_be_had_is_named(tmp_path):
    main, _, commit, _ = with_submodule(tmp_path, str(tmp_path / "gone"))
    shutil.rmtree(main.path / ".git" / "modules")  # a clone whose submodules were never fetched
    cache = RepoCache(tmp_path / "cache", {"o/main": str(main.path)})
    with pytest.raises(RepoUnavailable, match=r"o/main: submodule helpers \(.*gone\)") as raised:
        cache.mirror("o/main", commit)
    # the user's way out: where a local copy would be named
    assert f'name one in the config\'s [repos] as "{tmp_path / "gone"}" = "PATH"' in str(
        raised.value
    )
    # a mirror made elsewhere, without the submodule's commits: the worktree names it
    bare = tmp_path / "bare.git"
    git("clone", "--quiet", "--mirror", str(main.path), str(bare))
    with pytest.raises(RepoUnavailable, match="submodule helpers .* is not in the mirror"):
        with worktree(bare, commit, tmp_path / "run"):
            pass
    assert not (tmp_path / "run").exists()


def test_a_recorded_commit_missing_from_the_submodule_repository_is_named(tmp_path):
    main, helpers, commit, recorded = with_submodule(
        tmp_path, "https://github.com/astro/helpers.git"
    )
    rewritten = GitRepo(tmp_path / "rewritten")  # the helpers repository without that commit
    rewritten.commit({"ah.py": "other\n"})
    cache = RepoCache(
        tmp_path / "cache", {"astro/main": str(main.path), "astro/helpers": str(rewritten.path)}
    )
    with pytest.raises(RepoUnavailable, match=f"submodule helpers .* at {recorded[:12]}"):
        cache.mirror("astro/main", commit)


@pytest.mark.parametrize(
    ("url", "repo"),
    [
        ("https://github.com/astropy/astropy-helpers.git", "astropy/astropy-helpers"),
        ("git@github.com:astropy/astropy-helpers.git", "astropy/astropy-helpers"),
        ("git://github.com/o/n", "o/n"),
        ("../astropy-helpers.git", "astropy/astropy-helpers"),
        ("./sub", "astropy/astropy/sub"),
        ("https://gitlab.com/o/n.git", None),
        ("/srv/git/n.git", None),
    ],
)
def test_github_repo_of_a_submodule_url(url, repo):
    assert github_repo(url, "astropy/astropy") == repo


def test_a_file_is_read_at_a_commit_a_submodule_s_at_the_commit_recorded_for_it(tmp_path):
    main, helpers, commit, _ = with_submodule(tmp_path)
    main.write({"bin/run": "#!/bin/sh\n"})
    (main.path / "bin" / "run").chmod(0o755)
    executable = main.commit({}, "an executable")
    cache = RepoCache(tmp_path / "cache", {"astro/main": str(main.path)})
    mirror = cache.mirror("astro/main", executable)
    assert file_at(mirror, commit, "setup.py") == ("100644", b"import ah\n")
    assert file_at(mirror, executable, "bin/run") == ("100755", b"#!/bin/sh\n")
    assert file_at(mirror, commit, "helpers/ah.py") == ("100644", b"VERSION = 1\n")  # not 2
    assert file_at(mirror, commit, "bin/run") is None  # not yet at that commit
    assert file_at(mirror, commit, "helpers") is None  # a folder (the gitlink), no file


def test_worktrees_of_one_mirror_are_made_at_the_same_time_each_at_its_commit(tmp_path):
    """Their files are written outside the mirror's lock: each is still its own commit, whole,
    and git's record of the worktrees stays right."""
    repo = GitRepo(tmp_path / "repo")
    commits = [repo.commit({f"f{i}.py": f"V = {n}\n" for i in range(50)}) for n in range(4)]
    mirror = RepoCache(tmp_path / "cache", {"o/r": str(repo.path)}).mirror("o/r", commits[-1])
    seen: dict[int, tuple[str, str]] = {}

    def check(n: int) -> None:
        with worktree(mirror, commits[n], tmp_path / "runs" / str(n) / "repo") as tree:
            texts = {(tree / f"f{i}.py").read_text() for i in range(50)}
            seen[n] = (
                texts.pop() if len(texts) == 1 else repr(texts),
                git("status", "--porcelain", cwd=tree),
            )

    threads = [threading.Thread(target=check, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {n: (f"V = {n}\n", "") for n in range(4)}
    assert git("worktree", "list", "--porcelain", cwd=mirror).count("worktree ") == 1


def test_a_submodule_comes_from_the_local_clone_repos_names_for_its_superproject(tmp_path):
    """astropy's astropy_helpers: ``[repos]`` names a local clone of the main repository only;
    the submodule's github.com URL is not reached, its repository is read from the clone."""
    main, _, commit, recorded = with_submodule(tmp_path, "https://github.com/astro/helpers.git")
    assert (main.path / ".git" / "modules" / "helpers" / "HEAD").is_file()
    cache = RepoCache(tmp_path / "cache", {"astro/main": str(main.path)})
    mirror = cache.mirror("astro/main", commit)
    assert not (tmp_path / "cache" / "astro__helpers.git").exists()  # never cloned from GitHub
    with worktree(mirror, commit, tmp_path / "run" / "repo") as tree:
        assert git("rev-parse", "HEAD", cwd=tree / "helpers").strip() == recorded


def test_repos_may_name_a_submodule_by_its_url(tmp_path):
    url = "https://gitlab.example.org/astro/helpers.git"  # not GitHub: no owner/name key
    main, helpers, commit, recorded = with_submodule(tmp_path, url)
    cache = RepoCache(
        tmp_path / "cache", {"astro/main-copy": str(main.path), url: str(helpers.path)}
    )
    mirror = cache.mirror("astro/main-copy", commit)
    with worktree(mirror, commit, tmp_path / "run" / "repo") as tree:
        assert (tree / "helpers" / "ah.py").read_text() == "VERSION = 1\n"
