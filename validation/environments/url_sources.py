"""Packages a project installs from a git URL, fetched at the environment's date.

A project's CI may install a package from a VCS URL (``pip install
git+https://github.com/pydicom/pydicom-data``, ``NAME @ git+…@REF#subdirectory=…``). Builds reach
only the package index, where a release of the same name can differ from what the URL gives
(pydicom's test data: two files whose hashes differ from the project's ``hashes.json``). So the
builder fetches the URL itself, on the host, as it fetches the repository: a bare clone in a
cache, the commit the URL named (a tag or commit as given, a branch or the default branch as of
the environment's date), and hands that commit's tree to the build, which installs it from a
directory (``EnvironmentSpec.url_sources``). When the URL cannot be reached, the index's release
stands in as before and the record's ``run_metadata`` says so with the reason.

The URL comes from files of a repository that may be hostile: only git URLs of the allowed
schemes are fetched (``https`` by default), with git's other protocols refused (no ``file``,
``ext`` or ``ssh`` through a redirect or a submodule), no prompt, no user or system config, and a
time limit. Nothing fetched runs on the host: the tree is built in the build's sandbox.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import re
import shutil
import subprocess
import tarfile
import threading
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from builder.core.errors import SwtError
from builder.core.gitutil import git_env
from builder.core.repos import file_lock

DEFAULT_SCHEMES = ("https",)
_REF = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/+-]*$")
TIMEOUT_S = 300.0
"""The most one fetch (a clone or an update of the cache) may take."""


class Unreachable(SwtError, RuntimeError):
    """The URL could not be fetched, or names nothing fetchable: the index's release stands in."""


@dataclasses.dataclass(frozen=True)
class GitUrl:
    """What a requirement's git URL names: the remote, a ref (``@REF``) and a subdirectory."""

    remote: str
    ref: str = ""
    subdirectory: str = ""


@dataclasses.dataclass(frozen=True)
class UrlSource:
    """A package's source at one commit of its git URL, in a bare clone on this machine."""

    name: str
    url: str
    commit: str
    git_dir: Path
    subdirectory: str = ""

    def described(self) -> str:
        """``URL`` at ``COMMIT`` (what ``run_metadata.url_sources`` records)."""
        return f"{self.url} at {self.commit}"


def parse(word: str) -> GitUrl:
    """The git URL of a requirement word (``git+URL[@REF][#…subdirectory=DIR]``, or ``NAME @``
    before it). Unreachable when it is no git URL (``hg+``, an archive's URL, …)."""
    _, at, rest = word.partition(" @ ") if " @ " in word else ("", "", word)
    text = rest.strip() if at else word.strip()
    if "@" in text.split("://", 1)[0]:  # NAME@git+… written without spaces
        text = text.split("@", 1)[1].strip()
    if not text.lower().startswith("git+"):
        raise Unreachable(f"not a git URL: {word}")
    location, _, fragment = text[len("git+") :].partition("#")
    subdirectory = parse_qs(fragment).get("subdirectory", [""])[0].strip("/")
    parts = urlsplit(location)
    path, ref = parts.path, ""
    if "@" in path:
        path, ref = path.rsplit("@", 1)
    remote = parts._replace(path=path, query="", fragment="").geturl()
    if not parts.scheme:
        raise Unreachable(f"not a git URL: {word}")
    if ".." in subdirectory.split("/"):
        raise Unreachable(f"subdirectory leaves the repository: {word}")
    if ref and not _REF.match(ref):  # never an option of git's (``@--upload-pack=…``)
        raise Unreachable(f"not a ref git is asked for: {ref!r}")
    return GitUrl(remote, ref, subdirectory)


class UrlSources:
    """Fetches git URLs into ``cache`` (one bare clone per remote, updated once per process)
    and finds the commit a URL names at a date. Safe to share between threads."""

    def __init__(
        self,
        cache: Path,
        schemes: Iterable[str] = DEFAULT_SCHEMES,
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        self.cache = Path(cache)
        self.schemes = tuple(s.lower() for s in schemes)
        self.timeout_s = timeout_s
        self._updated: dict[str, str] = {}  # remote -> "" (fetched) or why it could not be
        self._lock = threading.Lock()

    def source(self, name: str, word: str, date: str) -> UrlSource:
        """``name``'s source as ``word`` (its requirement's URL) names it, as of ``date``
        (``YYYY-MM-DD…``; empty: the newest). Unreachable when it cannot be had."""
        url = parse(word)
        scheme = urlsplit(url.remote).scheme.lower()
        if scheme not in self.schemes:
            allowed = ", ".join(self.schemes) or "none"
            raise Unreachable(f"{scheme} URLs are not fetched (allowed: {allowed})")
        if not urlsplit(url.remote).netloc:
            raise Unreachable(f"not a git URL with a host: {word}")
        git_dir = self._fetched(url.remote)
        commit = self._commit(git_dir, url, date)
        if url.subdirectory and not self._has_dir(git_dir, commit, url.subdirectory):
            raise Unreachable(f"{url.remote} at {commit[:12]} has no {url.subdirectory}/")
        return UrlSource(name, word, commit, git_dir, url.subdirectory)

    def _fetched(self, remote: str) -> Path:
        git_dir = self.cache / f"{hashlib.sha256(remote.encode()).hexdigest()[:16]}.git"
        with self._lock:
            known = self._updated.get(remote)
        if known is not None:
            if known:
                raise Unreachable(known)
            return git_dir
        self.cache.mkdir(parents=True, exist_ok=True)
        with file_lock(git_dir.with_suffix(".lock")):
            if (git_dir / "HEAD").is_file():
                args = ["--git-dir", str(git_dir), "fetch", "--quiet", "--prune", "--tags"]
                args += ["origin", "+refs/heads/*:refs/heads/*"]
            else:
                args = ["clone", "--quiet", "--bare", "--", remote, str(git_dir)]
            problem = self._git(args)
            if problem and not (git_dir / "HEAD").is_file():
                problem = f"{remote}: {problem}"
            elif problem:  # an earlier clone stands: what it holds is what was fetched then
                problem = ""
        with self._lock:
            self._updated[remote] = problem
        if problem:
            raise Unreachable(problem)
        return git_dir

    def _commit(self, git_dir: Path, url: GitUrl, date: str) -> str:
        ref = url.ref or "HEAD"
        if not url.ref or self._read(git_dir, "rev-parse", "--verify", "-q", f"refs/heads/{ref}"):
            # a branch (the default one when the URL names none) moves: taken as of the date
            before = [f"--before={date}"] if date else []
            commit = self._read(git_dir, "rev-list", "-1", *before, ref)
            if not commit:
                raise Unreachable(f"{url.remote}: no commit of {ref} before {date}")
            return commit
        if self._read(git_dir, "cat-file", "-t", ref) not in ("commit", "tag"):
            raise Unreachable(f"{url.remote}: no ref or commit {ref}")
        return self._read(git_dir, "rev-parse", f"{ref}^{{commit}}")

    def _has_dir(self, git_dir: Path, commit: str, path: str) -> bool:
        return self._read(git_dir, "cat-file", "-t", f"{commit}:{path}") == "tree"

    def _read(self, git_dir: Path, *args: str) -> str:
        completed = subprocess.run(
            ["git", "--git-dir", str(git_dir), *args],
            capture_output=True,
            text=True,
            env=_safe_env(self.schemes),
            timeout=self.timeout_s,
        )
        return completed.stdout.strip() if completed.returncode == 0 else ""

    def _git(self, args: list[str]) -> str:
        """Run a fetching git command; its error's last line, or empty when it worked."""
        try:
            completed = subprocess.run(
                ["git", *args],
                capture_output=True,
                text=True,
                env=_safe_env(self.schemes),
                timeout=self.timeout_s,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return f"no answer within {self.timeout_s:.0f} s"
        if completed.returncode == 0:
            return ""
        lines = [line for line in completed.stderr.splitlines() if line.strip()]
        return lines[-1].strip() if lines else f"git exited {completed.returncode}"


def _safe_env(schemes: tuple[str, ...]) -> dict[str, str]:
    """git's environment: no config, no prompt, only ``schemes`` as transports (a redirect or
    submodule to ``file``, ``ext`` or ``ssh`` is refused)."""
    return {**git_env(), "GIT_ALLOW_PROTOCOL": ":".join(schemes), "GIT_ASKPASS": "/bin/false"}


def extract(source: UrlSource, destination: Path) -> Path:
    """``source``'s tree (its subdirectory's, when it names one) written into ``destination``
    (made empty first); returns ``destination``."""
    tree = archive(source, "")
    if destination.exists():
        shutil.rmtree(destination)
    destination.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(tree)) as tar:
        tar.extractall(destination, filter="data")
    return destination


def archive(source: UrlSource, prefix: str) -> bytes:
    """``source``'s tree (its subdirectory's, when it names one) as a tar whose members are
    under ``prefix`` (a relative path; empty: at the top), for a container's ``put_archive``."""
    treeish = f"{source.commit}:{source.subdirectory}" if source.subdirectory else source.commit
    under = [f"--prefix={prefix.strip('/')}/"] if prefix.strip("/") else []
    completed = subprocess.run(
        ["git", "--git-dir", str(source.git_dir), "archive", "--format=tar", *under, treeish],
        capture_output=True,
        env=git_env(),
        check=False,
    )
    if completed.returncode != 0:
        error = completed.stderr.decode("utf-8", "replace").strip()
        raise Unreachable(f"{source.url}: git archive failed: {error}")
    return completed.stdout
