"""In-environment runtime files copied into a fresh importable package, to vary their bytes."""

from __future__ import annotations

import itertools
from pathlib import Path

from validation.environments.runtime import RuntimeFiles

_packages = itertools.count()


def copied(files: RuntimeFiles, tmp_path: Path, monkeypatch, append: str = "") -> RuntimeFiles:
    """``files`` copied into a new importable package (``append`` added to every file)."""
    name = f"_swt_runtime_copy{next(_packages)}"
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    for run_name, source in files.files:
        (package / source).write_bytes(files.contents[run_name] + append.encode())
    monkeypatch.syspath_prepend(str(tmp_path))
    return RuntimeFiles(name, files.files)
