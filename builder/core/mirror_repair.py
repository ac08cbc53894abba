"""A mirror that lacks the content of some files: find it, recover it, or stub it and say so.

A history can list a file without holding its bytes: a clone made with a size filter, an
archive that left its largest files out (astropy's data files at some base commits, pvlib's SAM
library). A checkout of such a commit fails with ``unable to read sha1 file``, which alone would
read as a fault of the machine and stop the build. This module tells those records apart before
any build (:func:`missing_content`), and repairs what it can:

- **Recovered**: a package's published wheels and sdists (a folder the user names,
  ``[validation] repair_from``) often carry the files the history lacks; identical bytes give the
  identical blob id, so a member whose blob the history lacks is written into it. Nothing else
  changes: the checkout is the commit's, byte for byte.
- **Stubbed**, only when the user asks (``[validation] stub_missing = true``): a blob still
  missing is replaced by an empty one in a replacement tree (``git replace``), so commit ids stay
  and checkouts work; the stubbed paths are listed in the record's ``run_metadata``
  (``stubbed_files``) and in the release card. A test that reads such a file fails, which can
  change a verdict: the listing says where.

Otherwise the record is dropped ``content_missing``, its evidence naming the commit and paths.
"""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
import tarfile
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from builder.core.gitutil import git, git_env

ARCHIVES = (".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")
"""What a repair folder's files may be: wheels, sdists and other zip or tar archives."""

MEMBER_LIMIT = 512 << 20
"""An archive member larger than this is not read (a repair folder is the user's, but an
archive's claimed sizes are not to be trusted)."""


@dataclasses.dataclass(frozen=True)
class Repair:
    """What a mirror lacked at some commits and what became of it."""

    recovered: dict[str, list[str]]  # commit → paths whose content an archive gave
    stubbed: dict[str, list[str]]  # commit → paths now empty files (``stub_missing``)
    missing: dict[str, list[str]]  # commit → paths still lacking content

    @property
    def complete(self) -> bool:
        """Every commit can be checked out."""
        return not any(self.missing.values())


def missing_content(git_dir: Path, commit: str) -> list[str]:
    """The paths of ``commit`` whose blob the history itself lacks (replacements ignored;
    a submodule's gitlink names another repository's commit and is left out)."""
    return [path for path, _ in _missing_entries(git_dir, commit)]


_COMPLETE: set[tuple[str, str]] = set()
"""(git dir, commit) pairs found holding every blob: a commit's tree never changes and a
reachable blob stays, so each is listed once per process (0.3 s on astropy's tree)."""


def _missing_entries(git_dir: Path, commit: str) -> list[tuple[str, str]]:
    if (str(git_dir), commit) in _COMPLETE:
        return []
    found = _listed_missing(git_dir, commit)
    if not found:
        _COMPLETE.add((str(git_dir), commit))
    return found


def _listed_missing(git_dir: Path, commit: str) -> list[tuple[str, str]]:
    listing = _original_git("ls-tree", "-r", "-z", commit, cwd=git_dir)
    entries = [
        (meta.split()[2], path)
        for meta, path in (line.split("\t", 1) for line in listing.split("\0") if line)
        if meta.split()[1] == "blob"
    ]
    if not entries:
        return []
    shas = "".join(sha + "\n" for sha, _ in entries)
    checked = _original_git("cat-file", "--batch-check", cwd=git_dir, input_text=shas)
    return [
        (path, sha)
        for (sha, path), row in zip(entries, checked.splitlines(), strict=True)
        if row.endswith(" missing")
    ]


def repair(
    git_dir: Path, commits: Iterable[str], sources: Iterable[Path] = (), stub: bool = False
) -> Repair:
    """Check ``commits`` in ``git_dir``; recover what the archives under ``sources`` hold;
    with ``stub``, stub the rest. The caller holds the mirror's lock: replacements are shared
    by every checkout of the mirror."""
    commits = sorted(set(commits))
    _drop_stale_replacements(git_dir)  # content written since (here or by hand) is used as it is
    lacking = {commit: _missing_entries(git_dir, commit) for commit in commits}
    wanted = {sha for entries in lacking.values() for _, sha in entries}
    found = recover_blobs(git_dir, sources, wanted) if wanted else set()
    recovered = {c: [p for p, sha in e if sha in found] for c, e in lacking.items()}
    still = {c: [(p, sha) for p, sha in e if sha not in found] for c, e in lacking.items()}
    if found:
        _drop_stale_replacements(git_dir)
    stubbed: dict[str, list[str]] = {}
    if stub:
        for commit, entries in still.items():
            if entries:
                _stub(git_dir, commit, [path for path, _ in entries])
                stubbed[commit] = [path for path, _ in entries]
        still = {commit: [] for commit in still}
    return Repair(
        recovered={c: p for c, p in recovered.items() if p},
        stubbed=stubbed,
        missing={c: [p for p, _ in e] for c, e in still.items() if e},
    )


def recover_blobs(git_dir: Path, sources: Iterable[Path], wanted: set[str]) -> set[str]:
    """Write into ``git_dir`` every archive member under ``sources`` whose blob id is in
    ``wanted``; the ids written."""
    written: set[str] = set()
    for data in _members(sources):
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        if blob in wanted and blob not in written:
            made = subprocess.run(
                ["git", "hash-object", "-w", "--stdin"], input=data, cwd=git_dir,
                capture_output=True, env=git_env(), check=False,
            )  # fmt: skip
            if made.returncode == 0 and made.stdout.decode().strip() == blob:
                written.add(blob)
            if written == wanted:
                break
    return written


def _members(sources: Iterable[Path]) -> Iterator[bytes]:
    """The bytes of every regular member of every archive under ``sources`` (in name order;
    an archive that cannot be read is passed over)."""
    for source in sources:
        source = Path(source)
        files = [source] if source.is_file() else sorted(source.rglob("*"))
        for path in files:
            if not path.is_file() or not path.name.endswith(ARCHIVES):
                continue
            try:
                yield from _archive_members(path)
            except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError, ValueError):
                continue


def _archive_members(path: Path) -> Iterator[bytes]:
    if path.name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if not info.is_dir() and info.file_size <= MEMBER_LIMIT:
                    yield archive.read(info)
        return
    with tarfile.open(path) as archive:
        for info in archive:
            if info.isfile() and info.size <= MEMBER_LIMIT:
                handle = archive.extractfile(info)
                if handle is not None:
                    yield handle.read()


def _stub(git_dir: Path, commit: str, paths: list[str]) -> None:
    """Replace each tree of ``commit`` holding one of ``paths`` by one whose entry is empty."""
    empty = git("hash-object", "-w", "--stdin", cwd=git_dir, input_text="").strip()
    by_parent: dict[str, set[str]] = {}
    for path in paths:
        parent, _, name = path.rpartition("/")
        by_parent.setdefault(parent, set()).add(name)
    for parent, names in sorted(by_parent.items()):
        tree = _original_git("rev-parse", f"{commit}:{parent}", cwd=git_dir).strip()
        rows = []
        for line in _original_git("ls-tree", "-z", tree, cwd=git_dir).split("\0"):
            if line:
                meta, entry = line.split("\t", 1)
                mode, kind, sha = meta.split()
                rows.append(f"{mode} {kind} {empty if kind == 'blob' and entry in names else sha}"
                            f"\t{entry}\0")  # fmt: skip
        fixed = git("mktree", "-z", "--missing", cwd=git_dir, input_text="".join(rows)).strip()
        git("replace", "-f", tree, fixed, cwd=git_dir)


def _drop_stale_replacements(git_dir: Path) -> None:
    """Take back the stubs of trees whose every blob the history now holds (recovered since)."""
    replaced = git("for-each-ref", "--format=%(refname:lstrip=2)", "refs/replace", cwd=git_dir)
    for tree in replaced.split():
        if _original_git("cat-file", "-t", tree, cwd=git_dir).strip() != "tree":
            continue
        rows = _original_git("ls-tree", "-z", tree, cwd=git_dir).split("\0")
        shas = "".join(r.split()[2] + "\n" for r in rows if r and r.split()[1] == "blob")
        checked = _original_git("cat-file", "--batch-check", cwd=git_dir, input_text=shas)
        if not any(row.endswith(" missing") for row in checked.splitlines()):
            git("replace", "-d", tree, cwd=git_dir)


def _original_git(*args: str, cwd: Path, input_text: str | None = None) -> str:
    """git with replacements ignored: what the history itself holds."""
    return git("--no-replace-objects", *args, cwd=cwd, input_text=input_text)
