"""Counts how often a command runs the wanted lines, as SWT-Bench's ``trace.py --count`` does.

Run by the environment's interpreter (Python 3.6 syntax; the standard library only), copied into
the run as ``_swt_counter.py``::

    python [interpreter options] _swt_counter.py REPORT TARGETS_JSON ARGS...

``ARGS`` is what followed ``python`` (and its options) in the command: ``-m module args``,
``-c code args``, ``script args`` or ``- args`` (stdin). It runs in this process as ``python
ARGS`` would run it (``sys.argv``, ``sys.path[0]``, a fresh ``__main__``), and this process exits
with its exit status: a ``SystemExit``'s code as Python reports it; an uncaught exception prints
its traceback and exits 1 (a child process: as ``trace.py`` runs it, below). ``TARGETS_JSON``
maps repo-relative paths (relative to the working directory at start) to the line numbers
wanted in them; only a code object whose file name is absolute and normalized can be in one
(:meth:`Targets.find`).

The numbers are SWT-Bench's: their ``trace.py`` (stdlib ``trace`` with ``Trace(count=1,
trace=0)``) counts every ``line`` event of the included files, module import time included, and
reports per file with at least one event its *executable* lines (the static line table,
``trace._find_executable_linenos``: the line starts of every code object minus docstring lines)
with their counts, 0 for lines never run. With ``-m MODULE`` the module is found (its parent
packages imported) before counting starts, as ``trace.py`` finds it before it sets its trace
function: those packages' top-level lines are not counted. Only the golden patch's lines matter
and they are known before the run, so only they are counted:

- Python >= 3.12: ``sys.monitoring`` under a free tool id. ``PY_START`` events (global) find the
  code objects of target files as they first run; every other code object is switched off after
  its first start (``DISABLE``), so code outside the target files costs one event per code
  object, never a line event. A target code object holding a wanted line gets local ``LINE`` and
  ``JUMP`` events: a ``LINE`` marks the file traced and counts a wanted line, and a location of
  any other line is switched off after its first event. ``JUMP`` events add what
  ``sys.settrace`` (which stdlib ``trace`` uses; since 3.12 it is built on sys.monitoring)
  reports beyond ``LINE`` events: a ``line`` event on every backward jump within one line
  (one-line loops, comprehensions, generator expressions); other jumps are switched off. A
  target code object without wanted lines gets ``LINE`` events only while its file is not yet
  traced (its first one marks it), none after. Python 3.13 hides the ``LINE`` event of a code
  object's first line when it is the line of its ``RESUME`` (lambdas, one-line functions, class
  bodies) unless that ``RESUME`` is instrumented, as settrace's ``PY_START`` keeps it: such code
  objects keep their ``PY_START`` when that line is wanted. sys.monitoring events are global:
  every thread is counted.
- Python < 3.12: ``sys.settrace`` and ``threading.settrace`` (stdlib ``trace``'s own mechanism,
  made selective) with a global trace function that looks a frame's ``co_filename`` up (resolved
  to a real path once per file name): frames of other files get no local tracer; frames of a
  code object holding a wanted line get one counting wanted lines; frames of other code objects
  of a target file get one only while the file is not yet traced, which marks it at their first
  line and stops.

Counts are kept in ``itertools.count`` objects (``next`` on one is atomic under the GIL, so
threads lose no count). Counting stops when the command's ``python ARGS`` part ends (before the
interpreter's own exit: ``atexit`` handlers and threads still running then are not counted, as
in ``trace.py``), and the report is written then, once (in a ``finally``; an ``atexit`` backstop
writes it if that never ran; a forked child, whose tracer is stopped at the fork, never writes;
a command ending through ``os._exit`` or a signal leaves none, as with ``trace.py``).
Python child processes started through ``subprocess.Popen`` are followed, as ``trace.py``
follows them (it patches ``Popen.__init__``): a child whose program's name contains ``python``
runs under this counter too (:func:`child_command`, its rules for where the interpreter's
options end), with the parent's interpreter (``sys.executable``, as ``trace.py`` does), the same
report and targets, and the first process's working directory at start as the folder the
targets are under (``--child ROOT``). A child runs as ``trace.py`` runs one, which a test that
starts Python sees:

- it prints ``trace.py``'s options first (:func:`trace_arguments`), as ``trace.py`` prints them;
- its exit status is 0 when the program ends through ``SystemExit``, whatever its code
  (``trace.py``'s ``main`` catches it and returns); an uncaught exception prints its traceback
  and exits 1, an ``OSError`` with ``Cannot run file …`` as ``trace.py`` exits;
- ``-m`` and ``-c`` leave the counter's folder first on ``sys.path`` (``trace.py``'s there: the
  working directory is not on it), ``-m`` raises runpy's ``ImportError`` for a module it cannot
  find, ``-c`` leaves ``sys.argv`` the counter's, and a script's folder goes first as named
  (relative when the script is).

The first process keeps Python's own status, ``sys.path[0]`` and ``sys.argv`` (what SWT-Bench
reads of it is its output, and projects that are not installed stay importable from the
working directory; SWT-Bench installs every project). Every process adds its counts to the
report under a lock (:func:`merge_report`), as each ``trace.py`` process appends its results to
``coverage.cover`` and SWT-Bench sums them, but only as ``trace.py``'s would be read: when the
program ended normally or through ``SystemExit`` (any other exception leaves ``trace.py``'s
``main`` before it writes), and when the process ends in the first one's working directory
(``-C coverage.cover`` is relative: a child run in a temporary folder writes its counts where
nothing reads them). A child started through a shell (``shell=True``) gets its arguments
joined unquoted, as ``trace.py`` joins them, and fails to start under either. Not followed,
as with ``trace.py``: ``os.exec*``, ``os.spawn*``, ``multiprocessing`` workers (forked, or spawned
without ``Popen``), an interactive ``python -i`` and ``python -`` (stdin).

REPORT (JSON, written whole; a child's counts are added to it, file by file and line by line)::

    {"version": 1, "files": {path: {"executable": [wanted lines in the static line table],
                                    "counts": {"line": count}}}}

for every target file in which at least one line event happened (any line: "the file was
traced", which is when ``trace.py`` reports a file). ``counts`` holds the wanted lines that had
at least one line event (0 omitted; a wanted line outside the static table, e.g. a docstring
line, may be there: ``trace.py`` reports only ``executable`` ones). A file whose static table
cannot be computed (no source, a syntax error) gets an empty ``executable`` and ``error``.
``"replaced": true`` says the counter was not in place at the end: on Python < 3.12 the main
thread's trace function was another's (the command set its own, or ran coverage.py in this
process: from then on nothing was counted, as ``trace.py`` would lose it too); on 3.12+ our tool
id was freed and taken. sys.monitoring does not mind the command's ``sys.settrace``, which would
switch ``trace.py``'s counting off.
"""

import atexit
import fcntl
import functools
import io
import itertools
import json
import os
import re
import shlex
import sys
import threading
import types

VERSION = 1
"""The report's format."""
TOOL_NAME = "swt-counter"
"""Our name for the sys.monitoring tool id we take."""
TOOL_IDS = (3, 4, 5, 2, 0, 1)
"""sys.monitoring tool ids tried in order: the unnamed ones first, coverage.py's (1) last."""


class TargetFile:
    """A target file: its wanted lines' counters, and whether any of its lines ran."""

    __slots__ = ("path", "real", "wanted", "traced", "codes", "count_lines", "mark_traced")

    def __init__(self, path, real, lines):
        self.path = path
        """As named in TARGETS_JSON (repo-relative)."""
        self.real = real
        """Its real path (what code objects' file names are resolved to)."""
        self.wanted = {int(line): itertools.count() for line in lines}
        self.traced = False
        self.codes = {}
        """id(code) → (code, whether it holds a wanted line); the code object is kept, so no
        other takes its id (settrace, Python < 3.12)."""
        self.count_lines = self.mark_traced = None
        """The settrace local tracers of its frames: one counting wanted lines, one marking the
        file traced at a frame's first line and tracing it no further."""

    def counts(self):
        """Wanted line → how many line events it had (lines without one left out). Reads the
        counters: call it once."""
        counts = {}
        for line, counter in sorted(self.wanted.items()):
            number = next(counter)  # the number of events before this read
            if number:
                counts[line] = number
        return counts


class Targets:
    """The target files, found by a code object's file name (resolved once per name)."""

    def __init__(self, wanted, root):
        self.files = []
        by_real = {}
        for path, lines in sorted(wanted.items()):
            real = os.path.realpath(os.path.join(root, path))
            target = TargetFile(path, real, lines)
            self.files.append(target)
            by_real[real] = target
        self._by_real = by_real
        self.found = {}
        """``co_filename`` → its target file or None, for each name :meth:`find` resolved."""

    def find(self, filename):
        """The target file of a code object's ``co_filename``; None when it is none. Only an
        absolute, normalized name can be one: ``trace.py`` traces a frame whose module's
        ``__file__`` its include pattern (``/testbed/(a\\.py|…)``) matches whole, so a module
        imported through a relative ``sys.path`` entry (``sys.path.insert(0, "..")``, a script's
        folder given relative) or through ``..`` is never traced there. A symbolic link is
        resolved: where the run's folders are linked is this machine's layout, not theirs."""
        try:
            return self.found[filename]
        except KeyError:
            pass
        target = None
        if filename and os.path.isabs(filename) and os.path.normpath(filename) == filename:
            try:
                real = os.path.realpath(filename)
            except (OSError, ValueError):  # not a path (a NUL in it)
                real = None
            target = self._by_real.get(real)
        self.found[filename] = target
        return target


def _lines_of(code):
    """The lines of ``code``'s line table (those its line events can be on)."""
    if hasattr(code, "co_lines"):  # Python 3.10+
        return {line for _, _, line in code.co_lines() if line is not None}
    import dis

    return {line for _, line in dis.findlinestarts(code)}


def _holds_wanted(code, target):
    return not target.wanted.keys().isdisjoint(_lines_of(code))


def _line_at(code, offset):
    """The line of the instruction at ``offset`` in ``code`` (None: no line)."""
    for start, end, line in code.co_lines():
        if start <= offset < end:
            return line
    return None


class MonitoringCounter:
    """Counts with sys.monitoring (Python >= 3.12); see the module's docstring. Code objects are
    known by id (hashing one hashes its whole bytecode): those given local events are kept, so
    no other object takes their id."""

    def __init__(self, targets):
        self.targets = targets
        self.tool = None
        self.replaced = False
        self.started = {}  # id -> the code objects given local events
        self._kept = set()  # ids of those whose PY_START stays on (their first line is wanted)
        self._files = {}  # co_filename -> its target (target code objects' names only)
        self._jumps = {}  # (code id, from, to) -> the counter of a wanted line's same-line jump

    def start(self):
        """Take a free tool id and start; False when none is free."""
        monitoring = sys.monitoring
        for tool in TOOL_IDS:
            if monitoring.get_tool(tool) is not None:
                continue
            try:
                monitoring.use_tool_id(tool, TOOL_NAME)
            except ValueError:  # taken meanwhile
                continue
            self.tool = tool
            break
        else:
            return False
        events = monitoring.events
        self._disable = monitoring.DISABLE
        self._local = events.LINE | events.JUMP
        self._line = events.LINE
        monitoring.register_callback(self.tool, events.PY_START, self.py_start)
        monitoring.register_callback(self.tool, events.LINE, self._line_callback())
        monitoring.register_callback(self.tool, events.JUMP, self._jump_callback())
        monitoring.set_events(self.tool, events.PY_START)
        return True

    def stop(self):
        if self.tool is None:
            return
        monitoring = sys.monitoring
        self.replaced = monitoring.get_tool(self.tool) != TOOL_NAME  # freed and taken by another
        monitoring.set_events(self.tool, 0)
        for code in self.started.values():
            monitoring.set_local_events(self.tool, code, 0)
        events = monitoring.events
        for event in (events.PY_START, events.LINE, events.JUMP):
            monitoring.register_callback(self.tool, event, None)
        monitoring.free_tool_id(self.tool)
        self.tool = None

    def py_start(self, code, offset):
        if id(code) in self._kept:
            return None
        target = self.targets.find(code.co_filename)
        if target is None:
            return self._disable
        if id(code) not in self.started:
            self.started[id(code)] = code
            self._files[code.co_filename] = target
            if _holds_wanted(code, target):
                sys.monitoring.set_local_events(self.tool, code, self._local)
            elif not target.traced:  # its first line event marks the file traced
                sys.monitoring.set_local_events(self.tool, code, self._line)
        # Python 3.13 hides the LINE event of the first line when it is the RESUME's line,
        # unless the RESUME stays instrumented (settrace keeps it so)
        first = _line_at(code, offset + 2)  # the instruction after RESUME (no cache entries)
        if first is not None and first == _line_at(code, offset) and first in target.wanted:
            self._kept.add(id(code))
            return None
        return self._disable

    def _line_callback(self):
        files, disable = self._files, self._disable

        def line(code, number):  # the hot path: a wanted line's every event
            target = files[code.co_filename]
            counter = target.wanted.get(number)
            if counter is None:
                target.traced = True  # (a counted line shows it too: no need to mark it)
                return disable
            next(counter)

        return line

    def _jump_callback(self):
        jumps, first_jump = self._jumps, self._first_jump

        def jump(code, source, destination):  # the hot path: a wanted same-line jump
            counter = jumps.get((id(code), source, destination))
            if counter is None:
                return first_jump(code, source, destination)
            next(counter)

        return jump

    def _first_jump(self, code, source, destination):
        if destination > source:  # settrace reports backward jumps only
            return self._disable
        line = _line_at(code, destination)
        if line is None or line != _line_at(code, source):  # its LINE event counts it
            return self._disable
        counter = self._files[code.co_filename].wanted.get(line)
        if counter is None:
            return self._disable
        self._jumps[id(code), source, destination] = counter
        next(counter)
        return None


class SettraceCounter:
    """Counts with sys.settrace and threading.settrace (Python < 3.12)."""

    def __init__(self, targets):
        self.targets = targets
        self.replaced = False
        self._global = None
        self._stopped = []

    def start(self):
        find, found = self.targets.find, self.targets.found
        stopped = self._stopped
        unknown = object()
        for target in self.targets.files:
            target.count_lines, target.mark_traced = _local_tracers(target)

        def global_trace(frame, event, arg):
            # Called at every call, at any depth: on a known file it calls no Python function,
            # as stdlib trace's does not, so a test recursing to the limit raises its
            # RecursionError in its own code; raised here, it would turn tracing off for good.
            if stopped:  # a thread still running after the command's end (until shutdown)
                sys.settrace(None)
                return None
            code = frame.f_code
            target = found.get(code.co_filename, unknown)
            try:
                if target is unknown:
                    target = find(code.co_filename)
                if target is None:
                    return None
                entry = target.codes.get(id(code))
                if entry is None:
                    entry = target.codes[id(code)] = (code, _holds_wanted(code, target))
            except RecursionError:  # resolved at a later call, with room on the stack
                return None
            if entry[1]:
                return target.count_lines
            return None if target.traced else target.mark_traced

        self._global = global_trace
        threading.settrace(global_trace)
        sys.settrace(global_trace)
        return True

    def stop(self):
        """Tracing stops (the program's own trace function, if it set one, stays); threads
        still running stop at their next call."""
        if not self._stopped:
            self.replaced = sys.gettrace() is not self._global
        self._stopped.append(True)
        if sys.gettrace() is self._global:
            sys.settrace(None)
        if getattr(threading, "_trace_hook", self._global) is self._global:
            threading.settrace(None)


def _local_tracers(target):
    """(the tracer counting wanted lines, the one marking the file traced) of ``target``."""
    wanted = target.wanted

    def count_lines(frame, event, arg):
        if event == "line":
            target.traced = True
            counter = wanted.get(frame.f_lineno)
            if counter is not None:
                next(counter)
        return count_lines

    def mark_traced(frame, event, arg):
        if event == "line":
            target.traced = True
            frame.f_trace = None  # no more events in this frame (returning None keeps it)
            return None
        return mark_traced

    return count_lines, mark_traced


def make_counter(targets):
    """A started counter: sys.monitoring from Python 3.12 on (settrace when no tool id is
    free: what stdlib trace uses there too), settrace before."""
    if sys.version_info >= (3, 12):
        counter = MonitoringCounter(targets)
        if counter.start():
            return counter
    counter = SettraceCounter(targets)
    counter.start()
    return counter


# ---------------------------------------------------------------------------------------------
# The static line table, as stdlib trace computes it.


_trace_module = []


def _stdlib_trace():
    """The standard library's ``trace`` module (not a module of that name on the command's
    ``sys.path``, e.g. a repository's own ``trace.py``); None when it cannot be loaded."""
    if not _trace_module:
        _trace_module.append(_load_stdlib_trace())
    return _trace_module[0]


def _load_stdlib_trace():
    stdlib = os.path.dirname(os.path.abspath(os.__file__))
    path = os.path.join(stdlib, "trace.py")
    module = sys.modules.get("trace")
    if module is not None and os.path.abspath(getattr(module, "__file__", "") or "") == path:
        return module
    try:
        import importlib.util

        spec = importlib.util.spec_from_file_location("_swt_stdlib_trace", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    except Exception:  # any failure: our copy of its function
        return None


def _find_strings(filename, encoding=None):
    """stdlib trace's: line → 1 for every line of a string that is a statement (docstrings)."""
    import token
    import tokenize

    lines = {}
    previous = token.INDENT
    with open(filename, encoding=encoding) as handle:
        for kind, _, start, end, _ in tokenize.generate_tokens(handle.readline):
            if kind == token.STRING and previous == token.INDENT:
                for number in range(start[0], end[0] + 1):
                    lines[number] = 1
            previous = kind
    return lines


def _find_lines(code, strings):
    import dis
    import inspect

    lines = {}
    for _, number in dis.findlinestarts(code):
        if number not in strings:
            lines[number] = 1
    for constant in code.co_consts:
        if inspect.iscode(constant):
            lines.update(_find_lines(constant, strings))
    return lines


def find_executable_linenos(filename):
    """stdlib trace's ``_find_executable_linenos`` (a copy, for a stdlib without it)."""
    import tokenize

    with tokenize.open(filename) as handle:
        source = handle.read()
        encoding = handle.encoding
    code = compile(source, filename, "exec")
    return _find_lines(code, _find_strings(filename, encoding))


def executable_lines(filename):
    """(the static line table of ``filename`` as a set, None) or (an empty set, the error)."""
    module = _stdlib_trace()
    find = getattr(module, "_find_executable_linenos", None) or find_executable_linenos
    try:
        if not os.path.isfile(filename):
            raise OSError("no such file: " + filename)
        return set(find(filename)), None
    except Exception as error:  # a syntax error, an unreadable file
        return set(), f"{type(error).__name__}: {error}"


def report(targets, replaced=False):
    """The report's content (see the module's docstring)."""
    files = {}
    for target in targets.files:
        counts = target.counts()
        if not (target.traced or counts):  # a counted line ran: the file was traced
            continue
        table, error = executable_lines(target.real)
        entry = {
            "executable": sorted(line for line in target.wanted if line in table),
            "counts": {str(line): number for line, number in counts.items()},
        }
        if error is not None:
            entry["error"] = error
        files[target.path] = entry
    result = {"version": VERSION, "files": files}
    if replaced:
        result["replaced"] = True
    return result


def merged(first, second):
    """Two reports as one: per file, the union of the executable lines and the sum of the
    counts; replaced when either was."""
    files = {path: dict(entry) for path, entry in first.get("files", {}).items()}
    for path, entry in second.get("files", {}).items():
        if path not in files:
            files[path] = dict(entry)
            continue
        into = files[path]
        into["executable"] = sorted(set(into["executable"]) | set(entry["executable"]))
        counts = dict(into["counts"])
        for line, number in entry["counts"].items():
            counts[line] = counts.get(line, 0) + number
        into["counts"] = counts
        if "error" in entry:
            into.setdefault("error", entry["error"])
    result = {"version": VERSION, "files": files}
    if first.get("replaced") or second.get("replaced"):
        result["replaced"] = True
    return result


def merge_report(path, data):
    """Adds ``data`` to the report at ``path`` (written whole), under an exclusive lock on
    ``path.lock``: the processes of one command each add their own counts."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        os.makedirs(folder)
    with open(path + ".lock", "a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            with open(path) as handle:
                earlier = json.load(handle)
        except (OSError, ValueError):
            earlier = {}
        write_json(path, merged(earlier, data) if earlier else data)


_PY_ARG = re.compile(r"([^-].+)|-$|(--)$|-([a-z]+)?(c|m)(.+)?", re.IGNORECASE)
"""Where a Python command's own arguments start, as ``trace.py``'s subprocess patch reads it:
a script, ``-`` (stdin), ``--`` then a script, or ``-c``/``-m`` (after flags in one cluster,
with its value attached or next)."""
_INTERACTIVE = re.compile(r"-[A-Za-z]*?i[A-Za-z]*$")
_OPTIONS_WITH_VALUE = ("-X", "-W", "--check-hash-based-pycs")


def child_command(args, prefix):
    """The argument list a Python child runs under the counter (``prefix``: this script and its
    own arguments, inserted after the interpreter's options), or None when it is not wrapped:
    not a program named ``python…``, interactive (``-i``), stdin (``-``) or nothing to run.
    The interpreter is this process's (``sys.executable``), as ``trace.py`` makes it."""
    if not args or "python" not in os.path.basename(str(args[0])):
        return None
    options, mode, script = [], [], None
    rest = iter(args[1:])
    for arg in rest:
        if _INTERACTIVE.match(arg):
            return None
        match = _PY_ARG.match(arg)
        if match:
            file, double_dash, cluster, letter, value = match.groups()
            if file:
                script = file
            elif double_dash:
                script = next(rest, None)
            elif letter:
                if cluster:
                    options.append("-" + cluster)
                mode = ["-" + letter, value or next(rest, None)]
            break
        options.append(arg)
        if arg in _OPTIONS_WITH_VALUE:
            options.append(next(rest, None))
    if script:
        return [sys.executable, *options, *prefix, script, *rest]
    if mode and mode[-1] is not None:
        return [sys.executable, *options, *prefix, *mode, *rest]
    return None


def follow_children(prefix):
    """Python children started through ``subprocess.Popen`` run under the counter
    (:func:`child_command`); a command given as a string is split and, with ``shell=True``,
    joined again with spaces, as ``trace.py`` does: its arguments reach the shell unquoted,
    so such a child fails to start under either (``trace.py``'s include pattern holds
    parentheses and ``|``, the counter's targets JSON quotes)."""
    import subprocess

    original = subprocess.Popen.__init__

    @functools.wraps(original)
    def init(self, args, *more, **kwargs):
        given = shlex.split(args) if isinstance(args, str) else args
        wrapped = None
        if isinstance(given, (list, tuple)):
            wrapped = child_command([str(arg) for arg in given], prefix)
            if wrapped is not None and isinstance(args, str) and kwargs.get("shell"):
                wrapped = " ".join(wrapped)
        original(self, args if wrapped is None else wrapped, *more, **kwargs)

    subprocess.Popen.__init__ = init


def write_json(path, data):
    """``data`` as JSON to ``path``, whole or not at all."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        os.makedirs(folder)
    part = f"{path}.{os.getpid()}.part"
    with open(part, "w") as handle:
        json.dump(data, handle, sort_keys=True)
    os.replace(part, path)


# ---------------------------------------------------------------------------------------------
# Running ``python ARGS`` in this process.


def _fresh_main():
    """A new, empty ``__main__`` module in ``sys.modules`` (as Python starts with)."""
    import builtins

    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    return main


def _trace_globals(file, package=None, loader=None, spec=None):
    """The namespace ``trace.py``'s ``main`` runs a program in: a plain dict (``exec`` adds the
    builtins), not a ``__main__`` module; ``__file__`` is ``"<string>"`` for ``-c``."""
    names = {"__name__": "__main__", "__file__": file, "__package__": package, "__cached__": None}
    if spec is not None:
        names.update(__loader__=loader, __spec__=spec)
    return names


def _set_path0(entry):
    """``sys.path[0]`` as Python sets it for the command (it set it to this script's folder),
    unless Python was told not to add one (-I, -P, PYTHONSAFEPATH)."""
    if getattr(sys.flags, "safe_path", False) or sys.flags.isolated:
        return
    here = os.path.dirname(os.path.realpath(__file__))
    if sys.path and os.path.realpath(sys.path[0] or ".") == here:
        sys.path[0] = entry
    else:
        sys.path.insert(0, entry)


def _option_value(args, flag):
    """(the value of ``-c``/``-m`` given as ``-cVALUE`` or ``-c VALUE``, the arguments after)."""
    if args[0] != flag:
        return args[0][len(flag) :], args[1:]
    if len(args) < 2:
        raise SystemExit(f"Argument expected for the {flag} option")
    return args[1], args[2:]


def _find_module_first(args, child=False):
    """Find the module of ``-m MODULE`` before counting starts, as ``trace.py`` does
    (``runpy._get_module_details`` in its ``main``, before ``runctx`` sets its trace function):
    importing its parent packages runs their modules' top-level lines uncounted (``-m pytest``
    imports ``_pytest``'s modules). Returns what :func:`run` needs, found once: the module's
    details, or the error to raise once counting has started. The first process looks from
    the working directory, as ``python -m`` does, and reports a module it cannot find as Python
    reports it; a child looks from ``sys.path`` as ``trace.py`` leaves it (its own folder
    first, not the working directory) and raises runpy's ``ImportError``, as ``trace.py``
    does."""
    import runpy

    module, _ = _option_value(args, "-m")
    if child:
        try:
            return runpy._get_module_details(module)
        except Exception as error:
            return error
    _set_path0(os.getcwd() if sys.version_info >= (3, 7) else "")

    class NotFound(Exception):
        """A module ``-m`` cannot find (runpy's ``_Error``: an error raised inside its
        packages is not one, and goes on as it is); it never leaves this process."""

    try:
        return runpy._get_module_details(module, NotFound)
    except NotFound as error:  # as runpy's _run_module_as_main reports it
        return SystemExit(f"{sys.executable}: {error}")
    except Exception as error:
        return error


def run(args, module_found=None, child=False):
    """Run ``python ARGS`` in this process (see the module's docstring); ``module_found`` is
    what :func:`_find_module_first` found for ``-m``, when it was called before counting. A
    ``child`` runs it as ``trace.py`` runs a program: ``sys.path[0]`` stays the counter's folder
    for ``-m`` and ``-c`` (``trace.py``'s folder there), a script's folder is put there as
    given (``os.path.dirname``, relative when the script was named relative) and the script
    compiled under the name it was given; ``-c`` leaves ``sys.argv`` the counter's own; and the
    program runs in a plain namespace (:func:`_trace_globals`) while ``sys.modules["__main__"]``
    stays the counter's module (``unittest.main()`` in a child script finds no test there, as
    under ``trace.py``)."""
    import runpy

    if not args:
        raise SystemExit("usage: _swt_counter.py REPORT TARGETS_JSON (-m mod | -c cmd | file) ...")
    head = args[0]
    if head.startswith("-m"):
        _, rest = _option_value(args, "-m")
        found = _find_module_first(args, child) if module_found is None else module_found
        if isinstance(found, BaseException):
            raise found
        _, spec, code = found
        sys.argv = [spec.origin] + rest
        if child:
            exec(code, _trace_globals(code.co_filename, spec.parent, spec.loader, spec))
            return
        main = _fresh_main()
        main.__dict__.update(__name__="__main__", __file__=spec.origin, __cached__=spec.cached,
                             __doc__=None, __loader__=spec.loader, __package__=spec.parent,
                             __spec__=spec)  # fmt: skip
        # run from here, as trace.py runs it from runctx: its frames are ours in number, so a
        # test reaching the recursion limit meets it at the same depth under both
        exec(code, main.__dict__)
    elif head.startswith("-c") or head == "-":
        if head == "-":
            source, rest, name = sys.stdin.read(), args[1:], "<stdin>"
        else:
            (source, rest), name = _option_value(args, "-c"), "<string>"
        if child:
            exec(compile(source, name, "exec", dont_inherit=True), _trace_globals("<string>"))
            return
        sys.argv = [head[:2]] + rest
        _set_path0("")
        main = _fresh_main()
        import importlib.machinery

        main.__loader__ = importlib.machinery.BuiltinImporter
        exec(compile(source, name, "exec", dont_inherit=True), main.__dict__)
    elif head.startswith("-"):
        raise SystemExit(f"interpreter options go before _swt_counter.py, not in ARGS: {head!r}")
    else:
        sys.argv = list(args)
        if child:
            _set_path0(os.path.dirname(head))
            code = compile(_read_source(head), head, "exec", dont_inherit=True)
            exec(code, _trace_globals(head))
            return
        path = os.path.abspath(head) if sys.version_info >= (3, 9) else head  # as Python does
        if os.path.isdir(head) or (not head.endswith(".py") and _is_zip(head)):  # __main__.py
            _set_path0(path)
            _fresh_main()
            runpy._run_module_as_main("__main__", alter_argv=False)
            return
        _set_path0(os.path.dirname(os.path.realpath(head)))
        main = _fresh_main()
        import importlib.machinery

        main.__file__ = path
        main.__cached__ = None
        main.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
        exec(compile(_read_source(path), path, "exec", dont_inherit=True), main.__dict__)


def _read_source(path):
    """A script's bytes, read as Python reads the file it runs (``io.open_code`` from 3.8)."""
    opener = getattr(io, "open_code", None) or (lambda name: open(name, "rb"))
    with opener(path) as handle:
        return handle.read()


def _is_zip(path):
    import zipfile

    try:
        return os.path.isfile(path) and zipfile.is_zipfile(path)
    except OSError:
        return False


def _trimmed(tb):
    """A traceback without this script's frames (Python's own shows only the command's)."""
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return tb


_RE_SPECIAL = "()[]{}?*+-|^$\\.&~# \t\n\r\v\f"
"""What ``re.escape`` escapes (Python 3.7 on, where SWT-Bench's harness builds its pattern)."""


def trace_arguments(root, wanted):
    """What ``trace.py`` prints first in every process it runs (``print(args)``, its own
    options): the counting options and the include pattern of the target files under
    ``root``, as SWT-Bench's harness writes it."""
    escaped = ("".join("\\" + c if c in _RE_SPECIAL else c for c in path) for path in wanted)
    pattern = root.rstrip("/") + "/(" + "|".join(escaped) + ")"
    return ["--count", "-C", "coverage.cover", "--include-pattern", pattern]


def _where_read(root):
    """Whether this process's working directory is ``root``, where the report is read:
    ``trace.py`` writes ``-C coverage.cover`` relative to the working directory of each process
    at its end, and SWT-Bench reads the first process's (``cd /testbed``, then
    ``cat coverage.cover``). A child that ends elsewhere (``cwd=`` a temporary folder, as
    pytest's ``testdir.run`` gives) writes where nothing reads it: its counts are lost."""
    try:
        return os.path.realpath(os.getcwd()) == os.path.realpath(root)
    except OSError:  # the folder was removed: trace.py cannot open its file there either
        return False


def main(argv):
    """Count ``python ARGS`` (see the module's docstring); the command's exit status (a
    child's: ``trace.py``'s, see the module's docstring)."""
    root, child = os.getcwd(), False
    if argv[:1] == ["--child"] and len(argv) > 1:
        root, argv, child = argv[1], argv[2:], True
    if len(argv) < 3:
        raise SystemExit("usage: _swt_counter.py [--child ROOT] REPORT TARGETS_JSON ARGS...")
    report_path, wanted, args = os.path.abspath(argv[0]), json.loads(argv[1]), argv[2:]
    targets = Targets(wanted, root)
    pid = os.getpid()
    finished = []

    def finish(write=True):
        """Stop counting and write the report (a forked child only stops): once. Written only
        when the program ended normally or through ``SystemExit`` (``trace.py`` writes its
        results after ``runctx`` returns or its ``SystemExit`` is caught; any other exception
        leaves its ``main`` first), and only here when the process ends in ``root``."""
        if finished:
            return
        finished.append(True)
        counter.stop()
        if os.getpid() != pid or not write or not _where_read(root):
            return
        try:
            merge_report(report_path, report(targets, counter.replaced))
        except Exception as error:  # no report (read as none); the exit status stays the command's
            sys.stderr.write(f"_swt_counter.py: no report written: {error!r}\n")

    if child:
        print(trace_arguments(root, wanted))
    follow_children([os.path.abspath(__file__), "--child", root, report_path, argv[1]])
    module_found = _find_module_first(args, child) if args[0].startswith("-m") else None
    counter = make_counter(targets)
    if hasattr(os, "register_at_fork"):  # a forked child's counts are never written
        os.register_at_fork(after_in_child=counter.stop)
    atexit.register(finish)
    try:
        run(args, module_found, child)
    except SystemExit:
        finish()
        if child:  # trace.py's main: `except SystemExit: pass`, then it returns
            return 0
        raise
    except BaseException as error:
        finish(write=False)
        if isinstance(error, KeyboardInterrupt):
            raise
        if child and isinstance(error, OSError):  # trace.py's main: sys.exit("Cannot run…")
            sys.stderr.write(f"Cannot run file {sys.argv[0]!r} because: {error}\n")
            return 1
        kind, error, tb = sys.exc_info()
        tb = _trimmed(tb)
        sys.excepthook(kind, error.with_traceback(tb), tb)  # it prints the error's traceback
        return 1
    finish()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
