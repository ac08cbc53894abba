"""Writes out the installed project's files that a checkout lacks, for the builder to place there.

Run by the environment's interpreter (any Python from 3.6 on, standard library only) in the
checkout, copied into the run (see ``generated.INSTALLED_FILES``):
``python _swt_installed_files.py OUT`` writes to OUT a JSON object:

- ``"files"``: a ``{"path", "data", "dist"}`` (the path in the checkout, the bytes
  base64-encoded, the distribution) for each installed file that lies in a top-level package or
  module the checkout has (at its root, in ``src/`` or ``lib/``) and is missing there, of a
  distribution that is the project's or may be (below);
- ``"candidates"``: for each distribution that may be the project's, every file of it that
  lies in the checkout's packages, as ``{path: git blob id}``.

A distribution installed from a local directory, not editable (PEP 610 ``direct_url.json``
with a ``file:`` URL) is the project's (its ``"dist"`` is null). One with no PEP 610 record at
all — what pip before 20.1 installed, a ``setup.py install`` egg-info with its
``installed-files.txt`` — may be: it is the project's when it was installed from the
environment commit's tree (:func:`built_from`), which the caller knows and this run does not.
An editable install, or one from another URL, is never the project's here.
"""

import base64
import csv
import hashlib
import json
import os
import sys
import sysconfig

ROOTS = ("src", "lib", "")
"""Where a checkout may keep its top-level packages, in the order they are looked for."""


def pep610(dist_info):
    """A distribution's PEP 610 record (``direct_url.json``), or None when it has none."""
    try:
        with open(os.path.join(dist_info, "direct_url.json"), encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError:
        return None
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def local_install(dist_info):
    """Whether the distribution was installed, not editable, from a local directory."""
    data = pep610(dist_info) or {}
    editable = (data.get("dir_info") or {}).get("editable")
    return str(data.get("url", "")).startswith("file:") and not editable


def recorded(dist_info):
    """The paths the distribution's RECORD lists (relative to its site-packages)."""
    try:
        with open(os.path.join(dist_info, "RECORD"), encoding="utf-8", newline="") as handle:
            return [row[0] for row in csv.reader(handle) if row]
    except OSError:
        return []


def egg_installed(site, egg_info):
    """The paths an egg-info's ``installed-files.txt`` lists (pip's record of a ``setup.py
    install``, relative to the egg-info), relative to ``site``; those outside it left out."""
    try:
        with open(os.path.join(egg_info, "installed-files.txt"), encoding="utf-8") as handle:
            lines = [line.strip() for line in handle]
    except OSError:
        return []
    paths = []
    for line in lines:
        if not line:
            continue
        path = os.path.relpath(os.path.normpath(os.path.join(egg_info, line)), site)
        if not path.startswith(os.pardir) and not os.path.isabs(path):
            paths.append(path.replace(os.sep, "/"))
    return paths


def distributions(site):
    """``[(name, project, paths)]`` of the distributions in ``site`` that are or may be the
    project's: ``project`` True for a PEP 610 local install, False for one with no PEP 610
    record; ``paths`` relative to ``site``."""
    found = []
    for entry in sorted(os.listdir(site)):
        folder = os.path.join(site, entry)
        if entry.endswith(".dist-info"):
            record = pep610(folder)
            if record is None:
                found.append((entry, False, recorded(folder)))
            elif local_install(folder):
                found.append((entry, True, recorded(folder)))
        elif entry.endswith(".egg-info") and os.path.isdir(folder):
            found.append((entry, False, egg_installed(site, folder)))
    return found


def placed(checkout, parts, roots=None):
    """Where the file of ``parts`` belongs in the checkout, or None when the checkout has no
    top-level package or module of its name (``roots``: a dict that keeps each name's root
    between calls)."""
    if not all(parts) or ".." in parts or parts[0].endswith((".dist-info", ".data", ".egg-info")):
        return None
    if "__pycache__" in parts or parts[-1].endswith(".pyc"):
        return None
    roots = {} if roots is None else roots
    if parts[0] not in roots:
        roots[parts[0]] = next(
            (r for r in ROOTS if os.path.lexists(os.path.join(checkout, r, parts[0]))), None
        )
    root = roots[parts[0]]
    return None if root is None else "/".join(([root] if root else []) + parts)


def site_dirs():
    paths = sysconfig.get_paths()
    return sorted({paths["purelib"], paths["platlib"]})


def git_blob(path):
    """The git blob id of the file at ``path``."""
    with open(path, "rb") as handle:
        data = handle.read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def listing(checkout):
    """``(missing, candidates)``: ``[(installed file, path in the checkout, dist or None)]`` of
    the files of the project's distribution (None) and of those that may be it (their name) the
    checkout lacks; and ``{dist: {path in the checkout: blob id}}`` of each that may be it."""
    found = []
    candidates = {}
    roots = {}
    for site in site_dirs():
        if not os.path.isdir(site):
            continue
        for name, project, paths in distributions(site):
            blobs = {}
            for path in paths:
                target = placed(checkout, path.split("/"), roots)
                source = os.path.join(site, path)
                if target is None or not os.path.isfile(source):
                    continue
                if not project:
                    blobs[target] = git_blob(source)
                if not os.path.lexists(os.path.join(checkout, target)):
                    found.append((source, target, None if project else name))
            if blobs:
                candidates[name] = blobs
    return found, candidates


def tree(listing):
    """Path → object id of each entry of ``listing``, the text ``git ls-tree -r -z`` printed
    (the builder's git and an image's, which :mod:`generated_placer` runs, both read it here)."""
    found = {}
    for entry in listing.split("\0"):
        info, _, path = entry.partition("\t")
        if path:
            found[path] = info.split()[-1]
    return found


def built_from(files, tracked):
    """Whether a distribution with no PEP 610 record, whose files in the checkout's packages
    are ``files`` (path → blob id), was installed from the tree ``tracked`` (path → blob id,
    the environment commit's): most of its files are that tree's, byte for byte. Not all: a
    checkout's line-ending filters (``.gitattributes``' ``eol``) change a few files' bytes
    on their way into the install. Another distribution that shares a top-level name with the
    checkout's packages (an older release, one that ships a ``tests`` package) is not."""
    same = sum(1 for path, blob in files.items() if tracked.get(path) == blob)
    return same * 2 > len(files)


def missing(checkout, tracked):
    """``[(installed file, path in the checkout)]`` of the project's files the checkout lacks,
    given the environment commit's tree ``tracked`` (path → blob id)."""
    found, candidates = listing(checkout)
    taken = {name for name, files in candidates.items() if built_from(files, tracked)}
    return [(source, target) for source, target, dist in found if dist is None or dist in taken]


def main(argv):
    found, candidates = listing(".")
    entries = []
    for source, target, dist in found:
        with open(source, "rb") as handle:
            data = base64.b64encode(handle.read()).decode("ascii")
        entries.append({"path": target, "data": data, "dist": dist})
        sys.stdout.write("missing from the checkout: " + target)
        sys.stdout.write("\n" if dist is None else " (of " + dist + ", no PEP 610 record)\n")
    with open(argv[0], "w", encoding="utf-8") as out:
        json.dump({"files": entries, "candidates": candidates}, out)


if __name__ == "__main__":
    main(sys.argv[1:])
