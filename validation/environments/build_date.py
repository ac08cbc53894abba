"""Builds without today's date in the project's version.

setuptools' ``[egg_info] tag_date`` (in ``setup.cfg``) appends the day of the build to the
version (sphinx's ``3.1.2.dev20261123``; older setuptools wrote ``3.1.2.dev-20261123``, which
is no PEP 440 version, so uv refuses the built wheel and the environment fails). A date of the
build makes the environment differ from day to day, so the project's own build copy is built
with ``tag_date`` off: its version keeps ``tag_build`` (``3.1.2.dev``), as a release would.
"""

from __future__ import annotations

import re
from pathlib import Path

SETUP_CFG = "setup.cfg"

_SECTION = re.compile(r"^\s*\[(?P<name>[^\]]+)\]\s*$")
_TAG_DATE = re.compile(
    r"^(?P<key>\s*tag[_-]date\s*[=:]\s*)(?P<value>\S+)(?P<rest>.*)$", re.IGNORECASE
)
_TRUE = {"1", "true", "yes", "on"}


def without_build_date(text: str) -> str | None:
    """``setup.cfg``'s text with ``[egg_info] tag_date`` off, or None when it was not on."""
    lines = text.splitlines(keepends=True)
    section = ""
    changed = False
    for index, line in enumerate(lines):
        header = _SECTION.match(line)
        if header:
            section = header["name"].strip().lower().replace("-", "_")
            continue
        match = _TAG_DATE.match(line.rstrip("\r\n"))
        if section == "egg_info" and match and match["value"].lower() in _TRUE:
            ending = line[len(line.rstrip("\r\n")) :]
            lines[index] = f"{match['key']}0{match['rest']}{ending}"
            changed = True
    return "".join(lines) if changed else None


def drop_build_date(project: Path) -> bool:
    """Turn ``tag_date`` off in ``project``'s ``setup.cfg`` (a build copy); True if it was on."""
    path = project / SETUP_CFG
    if not path.is_file() or path.is_symlink():
        return False
    changed = without_build_date(path.read_text(encoding="utf-8", errors="surrogateescape"))
    if changed is None:
        return False
    path.write_text(changed, encoding="utf-8", errors="surrogateescape")
    return True
