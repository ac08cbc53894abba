"""Builds of the project's own version: setuptools' egg_info tags off.

``setup.cfg``'s ``[egg_info] tag_build`` and ``tag_date`` append a suffix and the day of the
build to the version (sphinx: ``3.2.0`` becomes ``3.2.0.dev20261123``). The day makes the
environment differ from day to day, and setuptools of those years wrote versions that are no
PEP 440 version in a PEP 517 build (``3.1.2.dev-20261123``; the tag applied twice,
``3.2.0.dev0.dev``), so uv refuses the built wheel and the environment fails. The project's
build copy is built with both off: the version is the one the project declares, as its
release was.
"""

from __future__ import annotations

import re
from pathlib import Path

SETUP_CFG = "setup.cfg"

_SECTION = re.compile(r"^\s*\[(?P<name>[^\]]+)\]\s*$")
_TAG = re.compile(
    r"^(?P<key>\s*tag[_-](?P<which>date|build)\s*[=:])(?P<value>[^#;]*)(?P<rest>.*)$",
    re.IGNORECASE,
)
_FALSE = {"", "0", "false", "no", "off"}


def without_tags(text: str) -> str | None:
    """``setup.cfg``'s text with ``[egg_info]``'s ``tag_build`` empty and ``tag_date`` off, or
    None when neither was set."""
    lines = text.splitlines(keepends=True)
    section = ""
    changed = False
    for index, line in enumerate(lines):
        header = _SECTION.match(line)
        if header:
            section = header["name"].strip().lower().replace("-", "_")
            continue
        body = line.rstrip("\r\n")
        match = _TAG.match(body)
        if section != "egg_info" or not match:
            continue
        value = match["value"].strip()
        off = "0" if match["which"].lower() == "date" else ""
        if value.lower() in _FALSE or value == off:
            continue
        rest = f" {match['rest']}" if match["rest"] else ""
        lines[index] = f"{match['key']} {off}".rstrip() + rest + line[len(body) :]
        changed = True
    return "".join(lines) if changed else None


def drop_tags(project: Path) -> bool:
    """Turn the egg_info tags off in ``project``'s ``setup.cfg`` (a build copy); True if any
    was on."""
    path = project / SETUP_CFG
    if not path.is_file() or path.is_symlink():
        return False
    changed = without_tags(path.read_text(encoding="utf-8", errors="surrogateescape"))
    if changed is None:
        return False
    path.write_text(changed, encoding="utf-8", errors="surrogateescape")
    return True
