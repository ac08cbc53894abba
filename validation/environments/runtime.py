"""Toolkit code run by a test environment's interpreter: package files copied into runs by hash."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import shutil
import tempfile
from importlib import resources
from pathlib import Path

OLDEST_PYTHON = "3.6"
"""The oldest Python an environment may have: runtime files keep to its syntax and stdlib
(pyproject.toml lints them with ruff's oldest target, py37, and no rewrite past 3.6)."""


@dataclasses.dataclass(frozen=True)
class RuntimeFiles:
    """Files of a package that an environment's interpreter runs, under their names in a run.

    They are real modules of the toolkit (linted, unit-tested in the builder's process), which
    import only the standard library and what the environment has (coverage.py). A run gets
    copies in a folder named by their :attr:`digest`: a command names the script and the hash
    of what it ran, never holds its source, and result keys that include the digest change
    whenever a file does.
    """

    package: str
    """The package holding the files (found through importlib.resources)."""
    files: tuple[tuple[str, str], ...]
    """(name in a run, file name in the package); the first one is the script commands run."""

    @functools.cached_property
    def contents(self) -> dict[str, bytes]:
        """Name in a run → the file's bytes, as installed with the toolkit."""
        root = resources.files(self.package)
        return {name: root.joinpath(source).read_bytes() for name, source in self.files}

    @functools.cached_property
    def digest(self) -> str:
        """sha256 of the names and bytes (16 hex digits): the run folder's name, a key part."""
        hasher = hashlib.sha256()
        for name, data in sorted(self.contents.items()):
            hasher.update(f"{name}\0{len(data)}\0".encode())
            hasher.update(data)
        return hasher.hexdigest()[:16]

    @property
    def script(self) -> str:
        """The name of the file commands run (the others are modules it uses)."""
        return self.files[0][0]

    def entries(self, root: str) -> dict[str, bytes]:
        """The files' paths under ``root`` (in the digest's folder) and their bytes."""
        return {f"{root}/{self.digest}/{name}": data for name, data in self.contents.items()}

    def place(self, root: Path) -> Path:
        """Copies in ``root/<digest>`` (written whole or not at all, once); that folder."""
        folder = root / self.digest
        if folder.is_dir():
            return folder
        root.mkdir(parents=True, exist_ok=True)
        part = Path(tempfile.mkdtemp(dir=root, prefix=f".{self.digest}."))
        part.chmod(0o755)  # mkdtemp's 0700 would hide them from a run under another user
        for name, data in self.contents.items():
            (part / name).write_bytes(data)
        try:
            os.rename(part, folder)
        except OSError:
            shutil.rmtree(part)
            if not folder.is_dir():  # not a concurrent placement of the same files
                raise
        return folder


__all__ = ["OLDEST_PYTHON", "RuntimeFiles"]
