"""Local bare mirrors of the candidates' repositories and a git worktree per run, submodules
checked out at the commits the superproject records."""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import posixpath
import re
import shutil
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from builder.core.faults import InfrastructureError
from builder.core.files import inside
from builder.core.gitutil import GitError, git, git_env
from builder.core.mirror_repair import Repair, repair


class RepoUnavailable(InfrastructureError):
    """The repository, the commit or one of its submodules cannot be had, or a checkout of it
    cannot be made (``fault``: ``repository`` or ``checkout``)."""

    fault = "repository"


class ContentMissing(RepoUnavailable):
    """The mirror lacks the content of files at a commit, and the settings give no repair
    (``mirror_repair``): its checkouts would fail."""

    fault = "checkout"


class CommitNotFound(RepoUnavailable):
    """The repository answered (its clone or fetch succeeded) and has no such commit: what its
    host says of the commit (a force-pushed PR head, say), not a fault of the way to it."""


@dataclasses.dataclass(frozen=True)
class Submodule:
    """A submodule as a commit records it: ``.gitmodules`` and the gitlink at ``path``."""

    name: str
    path: str
    url: str
    commit: str


SUBMODULE_REFS = "refs/swt-submodules"
"""Where a mirror keeps the refs of its submodules' repositories (one folder per URL): their
commits live in the mirror itself, so any worktree of it can check them out."""

_GITHUB = re.compile(
    r"^(?:https?://|git://|ssh://git@|git@)(?:www\.)?github\.com[/:]"
    r"(?P<owner>[^/]+)/(?P<name>[^/]+?)(?:\.git)?/?$"
)


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock between threads and processes on this machine (flock on ``path``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def github_repo(url: str, superproject: str) -> str | None:
    """``owner/name`` of a submodule URL on GitHub; a relative URL (``../x.git``) is taken
    relative to the superproject ``owner/name`` on GitHub, as git does with its remote. None:
    elsewhere (a local path, another host)."""
    if url.startswith(("./", "../")):
        resolved = posixpath.normpath(posixpath.join(f"/{superproject}", url)).strip("/")
        owner, _, name = resolved.partition("/")
        return f"{owner}/{name.removesuffix('.git')}" if owner and name else None
    match = _GITHUB.match(url)
    return f"{match['owner']}/{match['name']}" if match else None


def submodules(mirror: Path, commit: str) -> list[Submodule]:
    """The submodules ``commit`` records: ``.gitmodules`` entries that have a gitlink."""
    if not git("ls-tree", commit, "--", ".gitmodules", cwd=mirror).strip():
        return []
    listed = git("config", "--blob", f"{commit}:.gitmodules", "--list", "-z", cwd=mirror)
    entries: dict[str, dict[str, str]] = {}
    for item in filter(None, listed.split("\0")):
        key, _, value = item.partition("\n")
        section, _, rest = key.partition(".")
        name, _, field = rest.rpartition(".")
        if section == "submodule" and name:
            entries.setdefault(name, {})[field] = value
    found = []
    for name, fields in sorted(entries.items()):
        if "path" not in fields or "url" not in fields:
            continue
        line = git("ls-tree", "-z", commit, "--", fields["path"], cwd=mirror).rstrip("\0")
        meta, _, _ = line.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[0] == "160000":
            found.append(Submodule(name, fields["path"], fields["url"], parts[2]))
    return found


def file_at(mirror: Path, commit: str, path: str) -> tuple[str, bytes] | None:
    """``path``'s git mode and bytes at ``commit`` in ``mirror``, a path inside a submodule
    read at the commit the superproject records for it (the mirror holds those commits); None
    where the commit has no such file."""
    for submodule in submodules(mirror, commit):
        prefix = submodule.path.rstrip("/") + "/"
        if path.startswith(prefix):
            return file_at(mirror, submodule.commit, path.removeprefix(prefix))
    line = git("ls-tree", "-z", commit, "--", path, cwd=mirror).rstrip("\0")
    meta, _, listed = line.partition("\t")
    parts = meta.split()
    if listed != path or len(parts) != 3 or parts[1] != "blob":
        return None
    shown = subprocess.run(
        ["git", "cat-file", "blob", parts[2]], cwd=mirror, capture_output=True, env=git_env()
    )
    if shown.returncode != 0:
        raise GitError(["cat-file", "blob", parts[2]], shown.returncode, shown.stderr.decode())
    return parts[0], shown.stdout


class RepoCache:
    """Bare mirrors under ``root``, cloned from the configured location or GitHub."""

    def __init__(self, root: Path, locations: Mapping[str, str] | None = None) -> None:
        self.root = Path(root)
        self.locations = dict(locations or {})

    def location(self, repo: str) -> str:
        return self.locations.get(repo, f"https://github.com/{repo}.git")

    def repair(
        self, repo: str, commits: Iterable[str], sources: Iterable[Path] = (), stub: bool = False
    ) -> Repair:
        """What the mirror of ``repo`` lacks at ``commits``, recovered from ``sources`` or
        stubbed (``mirror_repair.repair``), under the mirror's lock: its replacements serve
        every checkout of it."""
        path = inside(self.root, repo.replace("/", "__") + ".git")
        with file_lock(self.root / (path.name + ".lock")):
            return repair(path, commits, sources, stub)

    def mirror(self, repo: str, commit: str) -> Path:
        """A bare mirror of ``repo`` that contains ``commit`` (fetching once if it lacks it)
        and the commits of the submodules ``commit`` records (see :meth:`_submodule`)."""
        path = inside(self.root, repo.replace("/", "__") + ".git")
        with file_lock(self.root / (path.name + ".lock")):
            try:
                if not (path / "HEAD").is_file():
                    shutil.rmtree(path, ignore_errors=True)
                    partial = path.with_name(path.name + ".partial")
                    shutil.rmtree(partial, ignore_errors=True)
                    git("clone", "--quiet", "--mirror", self.location(repo), str(partial))
                    partial.rename(path)
                if not _has_commit(path, commit):
                    git("fetch", "--quiet", "origin", cwd=path)
            except GitError as error:
                raise RepoUnavailable(f"{repo}: {error}") from error
            if not _has_commit(path, commit):
                raise CommitNotFound(f"{repo}: commit {commit} not found")
        for submodule in submodules(path, commit):
            self._submodule(repo, path, submodule)
        return path

    def _submodule(self, repo: str, path: Path, submodule: Submodule) -> None:
        """Bring ``submodule``'s repository into the mirror at ``path`` (every ref, under
        :data:`SUBMODULE_REFS`), then its own submodules: from its own mirror in this cache when
        it is on GitHub (``locations`` apply), else from its URL. ``repo``: the superproject."""
        other = github_repo(submodule.url, repo)
        if not _has_commit(path, submodule.commit):
            said = f"{repo}: submodule {submodule.name} ({submodule.url}) at "
            said += submodule.commit[:12]
            try:
                source = self._submodule_source(repo, submodule, other)
                folder = hashlib.sha256(submodule.url.encode()).hexdigest()[:16]
                with file_lock(self.root / (path.name + ".lock")):
                    refspec = f"+refs/*:{SUBMODULE_REFS}/{folder}/*"
                    git("fetch", "--quiet", source, refspec, cwd=path)
            except (RepoUnavailable, GitError) as error:
                said += f" cannot be had: {error}"
                if submodule.url not in self.locations and other not in self.locations:
                    said += (
                        f"; no local copy of it is configured: name one in the config's "
                        f'[repos] as "{other or submodule.url}" = "PATH"'
                    )
                raise RepoUnavailable(said) from error
            if not _has_commit(path, submodule.commit):
                raise CommitNotFound(f"{said}: commit not found in the submodule's repository")
        for nested in submodules(path, submodule.commit):
            self._submodule(other or repo, path, nested)

    def _submodule_source(self, repo: str, submodule: Submodule, other: str | None) -> str:
        """Where ``submodule`` of ``repo`` is fetched from: a ``locations`` entry for its URL
        as ``.gitmodules`` writes it; the mirror of its GitHub ``owner/name`` when
        ``locations`` names that; the submodule's repository inside the superproject's local
        clone (``.git/modules/NAME``, where ``git submodule update --init`` keeps it); else the
        mirror of its GitHub repository, or its URL."""
        if submodule.url in self.locations:
            return self.locations[submodule.url]
        if other and other in self.locations:
            return str(self.mirror(other, submodule.commit))
        clone = self.locations.get(repo)
        if clone and Path(clone).is_dir():
            for kept in (Path(clone) / ".git" / "modules", Path(clone) / "modules"):
                if (kept / submodule.name / "HEAD").is_file():
                    return str(kept / submodule.name)
        return str(self.mirror(other, submodule.commit)) if other else submodule.url


@contextlib.contextmanager
def worktree(mirror: Path, commit: str, path: Path) -> Iterator[Path]:
    """A detached worktree of ``mirror`` at ``commit`` in ``path``, removed afterwards; each
    submodule (nested ones too) a worktree of the same mirror at the commit recorded for it,
    which the mirror must hold (:meth:`RepoCache.mirror` brings them in)."""
    lock = mirror.parent / (mirror.name + ".lock")
    try:
        with file_lock(lock):  # git's record of the worktrees: one change at a time
            _discard_worktree(mirror, path)  # a killed run may have left it, even locked
            git("worktree", "add", "--quiet", "--no-checkout", "--detach", str(path), commit,
                cwd=mirror)  # fmt: skip
        try:
            # its own index and files: written while other worktrees of the mirror are made
            git("reset", "--quiet", "--hard", commit, cwd=path)
            with file_lock(lock):
                _add_submodules(mirror, commit, path)
        except BaseException:
            with file_lock(lock):
                _discard_worktree(mirror, path)
            raise
    except GitError as error:  # e.g. an object missing from the mirror
        raise RepoUnavailable(
            f"checkout of {commit[:12]} from {mirror.name} failed: {error}", fault="checkout"
        ) from error
    try:
        yield path
    finally:
        with file_lock(lock):
            _discard_worktree(mirror, path)


def _add_submodules(mirror: Path, commit: str, root: Path) -> None:
    for submodule in submodules(mirror, commit):
        if not _has_commit(mirror, submodule.commit):
            raise RepoUnavailable(
                f"submodule {submodule.name} ({submodule.url}) at {submodule.commit[:12]} is "
                f"not in the mirror {mirror.name}"
            )
        target = inside(root, submodule.path)
        git("worktree", "add", "--quiet", "--detach", str(target), submodule.commit, cwd=mirror)
        _add_submodules(mirror, submodule.commit, target)


def _discard_worktree(mirror: Path, path: Path) -> None:
    """Remove the worktree at ``path`` and git's record of it (and of the submodules' worktrees
    inside it), whatever state it was left in."""
    git("worktree", "unlock", str(path), cwd=mirror, check=False)
    git("worktree", "remove", "--force", "--force", str(path), cwd=mirror, check=False)
    shutil.rmtree(path, ignore_errors=True)
    git("worktree", "prune", cwd=mirror)


def _has_commit(mirror: Path, commit: str) -> bool:
    return bool(git("cat-file", "-t", f"{commit}^{{commit}}", cwd=mirror, check=False).strip())
