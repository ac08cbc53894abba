"""Small real wheels written on the spot: a local index for resolutions that need no network."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from collections.abc import Sequence
from pathlib import Path


def write_wheel(
    folder: Path, name: str, version: str, requires: Sequence[str] = (), module: str = ""
) -> Path:
    """A pure-Python wheel of ``name`` ``version`` in ``folder`` requiring ``requires``, with one
    module (``module``, default the name with underscores) holding ``VERSION``."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = name.replace("-", "_")
    module = module or stem
    info = f"{stem}-{version}.dist-info"
    metadata = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    metadata += [f"Requires-Dist: {requirement}" for requirement in requires]
    files = {
        f"{module}.py": f"VERSION = {version!r}\n",
        f"{info}/METADATA": "\n".join(metadata) + "\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: swt-tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = [f"{path},sha256={_digest(text)},{len(text.encode())}" for path, text in files.items()]
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    path = folder / f"{stem}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in files.items():
            archive.writestr(member, text)
    return path


def _digest(text: str) -> str:
    raw = hashlib.sha256(text.encode()).digest()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
