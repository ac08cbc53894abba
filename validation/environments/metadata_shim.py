"""Shadows the project's installed metadata with the base commit's version, then execs a command.

Run by the environment's interpreter (any Python from 3.6 on, standard library only), copied into
the run (see ``metadata.SHIM``): ``python _swt_metadata_shim.py NAME VERSION DEST [COMMAND...]``
writes the shadow into DEST when the installed version differs, then execs COMMAND.
"""

import json
import os
import re
import sys
import sysconfig


def norm(text):
    """A distribution name as dist-info folder names spell it (PEP 503, underscores)."""
    return re.sub(r"[-_.]+", "_", text).lower()


def installed(name, roots=None):
    """The dist-info folder of ``name`` in site-packages (or ``roots``), or None."""
    if roots is None:
        paths = sysconfig.get_paths()
        roots = (paths["purelib"], paths["platlib"])
    for root in roots:
        if not os.path.isdir(root):
            continue
        for entry in sorted(os.listdir(root)):
            if entry.endswith(".dist-info") and norm(entry[:-10].split("-")[0]) == norm(name):
                return os.path.join(root, entry)
    return None


def local_install(found):
    """Whether the distribution was installed from a local directory (PEP 610 ``file:`` URL)."""
    try:
        with open(os.path.join(found, "direct_url.json"), encoding="utf-8") as handle:
            return json.load(handle).get("url", "").startswith("file:")
    except (OSError, ValueError):
        return False


def shadow(found, name, version, dest):
    """Write ``found``'s metadata with ``version`` under ``dest``; the version it replaced, or
    None when the installed one is ``version`` already (or declares none)."""
    with open(os.path.join(found, "METADATA"), encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    header = [i for i, line in enumerate(lines) if line.startswith("Version:")]
    if not header or lines[header[0]][8:].strip() == version:
        return None
    was = lines[header[0]][8:].strip()
    lines[header[0]] = "Version: " + version
    target = os.path.join(dest, norm(name) + "-" + version.replace("-", "_") + ".dist-info")
    if not os.path.isdir(target):
        part = f"{target}.part{os.getpid()}"
        os.makedirs(part)
        with open(os.path.join(part, "METADATA"), "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines))
        for extra in ("entry_points.txt", "top_level.txt"):
            if os.path.isfile(os.path.join(found, extra)):
                with open(os.path.join(found, extra), encoding="utf-8") as source:
                    text = source.read()
                with open(os.path.join(part, extra), "w", encoding="utf-8") as out:
                    out.write(text)
        os.rename(part, target)
    return was


def main(argv):
    name, version, dest = argv[:3]
    command = argv[3:]
    found = installed(name)
    if found and local_install(found):
        was = shadow(found, name, version, dest)
        if was is not None:
            sys.stderr.write(
                f"swt: package metadata of {name} as of the base commit: version {version} "
                f"(installed: {was})\n"
            )
    if command:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
