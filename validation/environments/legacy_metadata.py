"""Reads a distribution's metadata that uv refuses, leniently, into uv's ``dependency-metadata``.

Releases of before PEP 440 carry version bounds that are no PEP 440 version: pandas up to 0.24.2
requires ``pytz (>=2011k)``. The pip of their era compared such bounds as legacy versions; uv
(as pip since 24.1) refuses the whole metadata, skips every release that has it, and a dated
resolution of 2019 that needs pandas finds none at all. The install step (``RETRY`` in
``environment.py``) installs the release uv named with ``--no-deps`` into a folder of its own,
and this script reads that folder's ``*.dist-info/METADATA``: each bound that is no PEP 440
version is read as its leading release number (``>=2011k`` as ``>=2011``, ``>=3.`` as ``>=3``),
a bound with none is left out (its requirement stays, unbounded), everything else is kept as
written. The result is appended to a uv configuration file as a ``[[dependency-metadata]]``
entry for the name and version uv named only (never what the file names), and each rewritten
requirement is said on stdout, which goes to the build log.

Run by the environment's interpreter (any Python from 3.6 on, standard library only):
``python -c SOURCE FOLDER CONFIG NAME==VERSION``.
"""

import glob
import json
import os
import re
import sys

_RELEASE = r"[0-9]+(?:\.[0-9]+)*"
PEP440 = re.compile(
    r"^v?(?:[0-9]+!)?" + _RELEASE + r"(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?"
    r"(?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?(?:[-_.]?dev[-_.]?[0-9]*)?"
    r"(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$",
    re.IGNORECASE,
)
"""A version as PEP 440 allows it to be written (its appendix's pattern)."""
_CLAUSE = re.compile(r"(~=|===|==|!=|<=|>=|<|>)\s*([^\s,;()]+)")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*$", re.DOTALL)


def lenient_clause(operator, version):
    """``operator version`` as uv can read it: as written when it is a PEP 440 bound, its
    leading release number otherwise, None when it has none."""
    if operator == "===":
        return operator + version
    wildcard = operator in ("==", "!=") and version.endswith(".*")
    if PEP440.match(version[:-2] if wildcard else version):
        return operator + version
    release = re.match(r"v?(" + _RELEASE + ")", version)
    return operator + release.group(1) if release else None


def lenient_specifiers(text):
    """A specifier list (``>=2011k, <3``, parenthesised or not) as uv can read it, or None
    when every bound in it is; ``""`` when no bound is left."""
    clauses = _CLAUSE.findall(text)
    read = [lenient_clause(operator, version) for operator, version in clauses]
    if all(new == operator + version for new, (operator, version) in zip(read, clauses)):
        return None
    return ",".join(new for new in read if new)


def lenient_requirement(requirement):
    """A ``Requires-Dist`` value as uv can read it, or None when it reads it as written."""
    head, marker = requirement, ""
    if ";" in requirement:
        head, marker = requirement.split(";", 1)
    parsed = _NAME.match(head)
    if parsed is None or parsed.group(3).startswith("@"):  # no name, or a URL: as written
        return None
    name, extras, specifiers = parsed.groups()
    new = lenient_specifiers(specifiers)
    if new is None:
        return None
    marker = marker.strip()
    return name + (extras or "") + new + ("; " + marker if marker else "")


def _fields(text):
    """The header fields of a METADATA file (the body, its description, left out)."""
    fields = []
    for line in text.split("\n"):
        if not line.strip():
            break
        if line[:1] in (" ", "\t") and fields:  # a continuation line
            fields[-1] = (fields[-1][0], fields[-1][1] + " " + line.strip())
        elif ":" in line:
            key, value = line.split(":", 1)
            fields.append((key.strip().lower(), value.strip()))
    return fields


def entry(metadata, name, version):
    """The ``[[dependency-metadata]]`` entry (TOML text) of a METADATA file's text for release
    ``name`` ``version`` (the one uv named, whatever the file says), and what was rewritten
    (``(written, read)`` pairs)."""
    fields = _fields(metadata)
    values = dict(fields)
    rewritten = []
    requires = []
    for key, value in fields:
        if key != "requires-dist":
            continue
        new = lenient_requirement(value)
        if new is not None:
            rewritten.append((value, new))
        requires.append(value if new is None else new)
    lines = ["[[dependency-metadata]]"]
    lines.append("name = " + json.dumps(name, ensure_ascii=False))
    lines.append("version = " + json.dumps(version, ensure_ascii=False))
    lines.append("requires-dist = " + json.dumps(requires, ensure_ascii=False))
    python = values.get("requires-python", "")
    if python:
        new = lenient_specifiers(python)
        if new is not None:
            rewritten.append(("Requires-Python: " + python, "Requires-Python: " + new))
            python = new
        if python:
            lines.append("requires-python = " + json.dumps(python, ensure_ascii=False))
    extras = [value for key, value in fields if key == "provides-extra"]
    if extras:
        lines.append("provides-extras = " + json.dumps(extras, ensure_ascii=False))
    return "\n".join(lines) + "\n", rewritten


def main(folder, config, release):
    name, version = release.split("==", 1)
    found = sorted(glob.glob(os.path.join(folder, "*.dist-info", "METADATA")))
    if not found:
        sys.stderr.write(f"swt: no METADATA in {folder}\n")
        return 1
    with open(found[0], encoding="utf-8", errors="replace") as handle:
        text, rewritten = entry(handle.read(), name, version)
    with open(config, "a", encoding="utf-8") as handle:
        handle.write("\n" + text)
    for written, read in rewritten:
        print(f"# legacy metadata: {release}: {written!r} read as {read!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3]))
