"""How a run's checkout comes before the environment's copy of the project: a ``.pth`` file.

An environment installs the project as of its environment commit; a run tests the checkout of
its base commit, which must win over that copy. ``PYTHONPATH`` did it once, but a variable the
project's CI never set is visible to its tests: pylint's ``modify_sys_path`` drops the entry
after the first of ``PYTHONPATH``'s when it ends with ``:``, so a two-entry one left the working
directory on ``sys.path`` of ``python -m pylint`` (``test_do_not_import_files_from_local_directory``
imported the test's own ``hmac.py``). Instead the environment's site-packages holds
:data:`PTH`, which puts the checkout (its ``src/`` too, when it has one) and the run's metadata
shadow (``validation.environments.metadata``) just before site-packages: after the standard
library and after whatever ``PYTHONPATH`` a test sets, as an installed project would be, but
ahead of the installed copy. It holds literal paths, so a subprocess started with a scrubbed
environment still gets the checkout; runs see it at fixed paths (``/testbed``, ``/swt``) in
the sandbox and in containers, where each run has the file to itself. Without a sandbox the
environment is shared by concurrent runs and their checkouts lie at different paths: there the
file is :func:`from_variable` and reads the paths from :data:`VARIABLE`.
"""

from __future__ import annotations

from collections.abc import Sequence

VERSION = 1
"""Part of every result key: bump when what a run has on its import path changes."""

PTH = "_swt_checkout.pth"
"""The file's name in site-packages (``.pth`` files are read in name order; where it inserts
does not depend on that order)."""

VARIABLE = "SWT_CHECKOUT_PATH"
"""``sandbox = "none"``: the run's paths, ``os.pathsep``-separated, for :func:`from_variable`."""

_INSERT = (
    "_swt = [p for p in _swt if p and os.path.isdir(p) and p not in sys.path]; "
    "_at = [i for i, p in enumerate(sys.path) "
    "if os.path.basename(p.rstrip(os.sep)) in ('site-packages', 'dist-packages')]; "
    "_at = _at[0] if _at else len(sys.path); sys.path[_at:_at] = _swt"
)
"""The line's body (Python 2.7 and 3.x syntax): the existing paths not yet on ``sys.path`` go
before the first site-packages (the environment's: at ``.pth`` time ``sys.path`` holds
``PYTHONPATH``'s entries, the standard library and site-packages, not yet the script's
folder)."""


def run_paths(testbed: str, has_src: bool, metadata: str | None) -> list[str]:
    """The paths a run puts before site-packages, in order: the checkout, its ``src/`` (when
    the checkout has one) and the metadata shadow's folder (when the run has one)."""
    paths = [testbed]
    paths += [f"{testbed}/src"] if has_src else []
    paths += [metadata] if metadata else []
    return paths


def literal(paths: Sequence[str]) -> str:
    """The ``.pth`` text naming ``paths``."""
    return f"import os, sys; _swt = {list(paths)!r}; {_INSERT}\n"


def from_variable() -> str:
    """The ``.pth`` text reading the paths from :data:`VARIABLE` (none when it is unset)."""
    read = f"os.environ.get({VARIABLE!r}, '').split(os.pathsep)"
    return f"import os, sys; _swt = {read}; {_INSERT}\n"


__all__ = ["PTH", "VARIABLE", "VERSION", "from_variable", "literal", "run_paths"]
