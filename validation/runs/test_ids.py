"""Test ids that do not depend on where a run took place: host paths in an id become placeholders.

A test id may hold a path: a parametrize id made from a data file of the environment
(``test_read[/work/envs/KEY/lib/python3.9/site-packages/data/a.dcm]``), from ``sys.prefix``, the
checkout or the run's home. Stored as it is, it writes the builder's directories into every
split, and two builds of the same records in two work dirs differ. :func:`canonical` replaces
each such path by a fixed placeholder (:data:`PLACEHOLDERS`); the pytest launcher applies it to
every node id inside the run (so the JUnit report, the ``-rA`` summary, deselection and a task
repo's ``eval.sh`` all name the canonical id), and the builder applies it after parsing any
runner's report with the session's own paths (``validation.measured_run``).

Run by a test environment's interpreter too (Python 3.6 syntax, the standard library only): the
pytest launcher imports it from its own folder (``runners.PYTEST_LAUNCHER``).
"""

import hashlib
import json
import os
import re
import sys
import sysconfig

VERSION = 1
"""Part of every validation result key: bump when the canonical form of an id changes."""

PLACES_VARIABLE = "SWT_ID_PLACES"
"""The run's own places (a JSON list of ``[path, placeholder]``) that the process cannot find
itself (the run dir, the work dir), set by the session for the launcher."""

TESTBED, ENV, PYTHON, RUN, HOME, TMP, WORK = (
    "<testbed>", "<env>", "<python>", "<run>", "<home>", "<tmp>", "<work>",
)  # fmt: skip
PLACEHOLDERS = (TESTBED, ENV, PYTHON, RUN, HOME, TMP, WORK)
"""The checkout, the environment's prefix (``sys.prefix``), the interpreter's own prefix
(``sys.base_prefix``; its standard library as ``<python>/lib/pythonX.Y``), the run dir, the
run's ``$HOME`` and temp dir, and the builder's work dir."""

GENERIC = frozenset(
    ["/", "/bin", "/etc", "/home", "/lib", "/opt", "/root", "/srv", "/tmp", "/usr", "/usr/lib",
     "/usr/local", "/var", "/var/tmp"]
)  # fmt: skip
"""Paths that are the same on every machine (a container's ``HOME=/root``, ``TMPDIR=/tmp``, an
interpreter in ``/usr``): never replaced, so a literal ``/tmp/x`` parameter stays as written."""

MAX_CHARS = 1000
"""The longest id stored; a longer one keeps its first characters and a hash of the whole
(:func:`canonical`)."""


def _boundaries(path):
    """The pattern of ``path`` as a whole path in an id: not the end of a longer path, nor
    followed by more of a name (a letter, digit, ``_`` or ``.``). A ``-`` may follow: pytest
    joins the parts of a parametrize id with it."""
    return r"(?<![\w./])" + re.escape(path) + r"(?![\w.])"


class Places:
    """Paths of one run and their placeholders; the longest path is tried first."""

    def __init__(self, pairs):
        found = {}
        for path, placeholder in pairs:
            if not path or not os.path.isabs(path):
                continue
            for variant in (os.path.normpath(path), os.path.realpath(path)):
                if variant not in GENERIC and variant not in found:
                    found[variant] = placeholder
        self.pairs = sorted(found.items(), key=lambda pair: (-len(pair[0]), pair[0]))
        self._pattern = (
            re.compile("|".join(_boundaries(path) for path, _ in self.pairs))
            if self.pairs
            else None
        )
        self._by_path = dict(self.pairs)

    def replace(self, text):
        """``text`` with each of the places in it replaced by its placeholder."""
        if self._pattern is None or "/" not in text:
            return text
        return self._pattern.sub(lambda match: self._by_path[match.group(0)], text)


def canonical(test_id, places):
    """The id as stored: ``places`` replaced (:class:`Places`), text that is not UTF-8 (a lone
    surrogate) as backslash escapes, and an id over :data:`MAX_CHARS` cut to its first
    characters followed by ``…<sha256:16 hex digits of the whole>``."""
    text = places.replace(test_id)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if len(text) > MAX_CHARS:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        suffix = "\u2026<sha256:" + digest + ">"
        text = text[: MAX_CHARS - len(suffix)] + suffix
    return text


def run_pairs(testbed, prefix, base_prefix, python_version, home, tmp):
    """The places every run has, as ``(path, placeholder)``: ``python_version`` (``X.Y``) names
    the standard library's folder under the interpreter's prefix, kept even where the prefix is
    generic (``/usr/lib/python3.11`` → ``<python>/lib/python3.11``)."""
    stdlib = "python" + python_version
    pairs = [(testbed, TESTBED), (prefix, ENV), (home, HOME), (tmp, TMP)]
    if base_prefix:
        pairs += [(base_prefix, PYTHON)]
        pairs += [(os.path.join(base_prefix, "lib", stdlib), PYTHON + "/lib/" + stdlib)]
    return pairs


def process_places(environ=None):
    """The places of the running process: its working directory (the checkout), ``sys.prefix``,
    the interpreter's prefix and standard library, ``$HOME``, the temp dir, and those the session
    named in :data:`PLACES_VARIABLE`."""
    environ = os.environ if environ is None else environ
    base = getattr(sys, "real_prefix", None) or getattr(sys, "base_prefix", sys.prefix)
    version = "{}.{}".format(*sys.version_info[:2])
    pairs = run_pairs(
        os.getcwd(), sys.prefix, base, version, environ.get("HOME", ""),
        environ.get("TMPDIR", ""),
    )  # fmt: skip
    stdlib = sysconfig.get_paths().get("stdlib")
    if stdlib:
        pairs.append((stdlib, PYTHON + "/lib/python" + version))
    return Places(pairs + named_places(environ))


def named_places(environ):
    """The session's places from :data:`PLACES_VARIABLE` (none when unset or not a JSON list of
    pairs)."""
    try:
        named = json.loads(environ.get(PLACES_VARIABLE, "[]"))
    except ValueError:
        return []
    if not isinstance(named, list):
        return []
    return [
        (pair[0], pair[1])
        for pair in named
        if isinstance(pair, list) and len(pair) == 2 and pair[1] in PLACEHOLDERS
    ]


def places_variable(pairs):
    """The value of :data:`PLACES_VARIABLE` naming ``pairs``."""
    return json.dumps([[path, placeholder] for path, placeholder in pairs])
