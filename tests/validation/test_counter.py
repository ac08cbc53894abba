"""Execution counts of wanted lines (counter.py) against stdlib trace's, on real interpreters;
the command wrappers and interpreter options (counted and measured runs)."""

import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from validation.coverage import RUNTIME, measured_command, rcfile, read_report
from validation.coverage import counter as counter_module
from validation.coverage.counts import (
    COUNTER,
    LineCounts,
    counted_command,
    read_counts,
    split_interpreter_options,
)

MODULE = '''\
"""Module docstring."""


def loop(n):
    """A docstring line: not executable."""
    total = 0
    for i in range(n):
        total += i
    return total


def twice(x):
    return x * 2


def never():
    return 0


square = lambda x: x * x  # noqa: E731
squares = [square(i) for i in range(3)]
'''
LOOP_BODY, DEF_LOOP, DOCSTRING, TWICE_BODY, NEVER_BODY = 8, 4, 5, 13, 17
MAIN = "from pkg.mod import loop, twice\n\nloop(3)\ntwice(1)\ntwice(2)\n"
ALL_LINES = list(range(1, MODULE.count("\n") + 1))
TARGETS = {"pkg/mod.py": ALL_LINES, "pkg/__init__.py": [1], "pkg/other.py": [1, 2]}

# stdlib trace on the same program: what SWT-Bench's trace.py counts (Trace(count=1, trace=0))
REFERENCE = """\
import json, os, sys, trace
script, out = sys.argv[1], sys.argv[2]
path = os.path.abspath(script)
sys.argv = [script]
sys.path[0] = os.path.dirname(path)
with open(path) as handle:
    code = compile(handle.read(), path, "exec")
main = {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__}
tracer = trace.Trace(count=1, trace=0)
tracer.runctx(code, main, main)
root = os.getcwd() + os.sep
counts = {}
for (name, line), number in tracer.results().counts.items():
    if name.startswith(root):
        counts.setdefault(os.path.relpath(name), {})[str(line)] = number
tables = {name: sorted(n for n in trace._find_executable_linenos(name) if n) for name in counts}
with open(out, "w") as handle:
    json.dump({"counts": counts, "tables": tables}, handle)
"""


def _interpreter(version: str) -> str:
    """The venv's Python ("venv") or pyenv's newest of ``version``; skips when there is none."""
    if version == "venv":
        return sys.executable
    found = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python")))
    if not found:
        pytest.skip(f"no Python {version} interpreter (~/.pyenv/versions/{version}.*)")
    return found[-1]


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "mod.py").write_text(MODULE)
    (root / "pkg" / "other.py").write_text("def unused():\n    return 1\n")
    (root / "main.py").write_text(MAIN)
    return root


@pytest.fixture
def counted(tmp_path, repo):
    """Runs ``command`` under the counter in ``repo``: (the completed process, its counts)."""
    runtime = str(COUNTER.place(tmp_path / "tools"))
    report = tmp_path / "counts.json"

    def run(command, targets=None, **kwargs):
        report.unlink(missing_ok=True)
        wrapped = counted_command(command, runtime, str(report), targets or TARGETS)
        done = subprocess.run(
            wrapped, cwd=repo, capture_output=True, text=True, timeout=120, **kwargs
        )
        data = report.read_bytes() if report.exists() else None
        return done, read_counts(data)

    return run


def _reference(python: str, repo: Path, script: str = "main.py") -> dict:
    out = repo.parent / "reference.json"
    done = subprocess.run(
        [python, "-c", REFERENCE, script, str(out)], cwd=repo, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def _as_trace(reference: dict, targets: dict) -> LineCounts:
    """What stdlib trace reports, restricted to the wanted lines as the counter reports them."""
    executable, counts = {}, {}
    for path, numbers in reference["counts"].items():
        if path not in targets:
            continue
        table = set(reference["tables"][path])
        executable[path] = frozenset(line for line in targets[path] if line in table)
        counts[path] = {line: numbers.get(str(line), 0) for line in sorted(executable[path])}
    return LineCounts(executable, counts)


# ---------------------------------------------------------------------------------------------
# Counts: the same as stdlib trace's, on every interpreter found.


@pytest.mark.parametrize("version", ["venv", "3.6", "3.8", "3.12", "3.13"])
def test_counts_equal_stdlib_traces(counted, repo, version):
    """A loop line run 3 times, a function called twice, a def line run at import, a docstring
    line (not executable), a line never run (executable, 0), a lambda and a comprehension (where
    sys.monitoring and settrace differ); a file never imported and an empty one."""
    python = _interpreter(version)
    done, counts = counted([python, "main.py"])
    assert done.returncode == 0, done.stderr
    assert counts == _as_trace(_reference(python, repo), TARGETS)
    assert "pkg/other.py" not in counts.executable  # never imported: not traced
    mod = counts.counts["pkg/mod.py"]
    assert mod[LOOP_BODY] == 3 and mod[TWICE_BODY] == 2 and mod[DEF_LOOP] == 1
    assert mod[NEVER_BODY] == 0 and NEVER_BODY in counts.executable["pkg/mod.py"]
    assert DOCSTRING not in counts.executable["pkg/mod.py"]


@pytest.mark.parametrize("version", ["venv", "3.12", "3.13"])
def test_counts_of_a_few_wanted_lines_are_theirs_alone(counted, repo, version):
    """Only some lines wanted (the others switched off on sys.monitoring): the same counts."""
    python = _interpreter(version)
    wanted = {"pkg/mod.py": [DOCSTRING, LOOP_BODY, 20, 21, NEVER_BODY]}  # 20-21: lambda, listcomp
    done, counts = counted([python, "main.py"], wanted)
    assert done.returncode == 0, done.stderr
    assert counts == _as_trace(_reference(python, repo), wanted)


def test_threads_are_counted(counted, repo):
    (repo / "threads.py").write_text(
        "import threading\n\nfrom pkg.mod import twice\n\n"
        "barrier = threading.Barrier(4)\n\n\n"
        "def work():\n    barrier.wait()\n    for i in range(500):\n        twice(i)\n\n\n"
        "threads = [threading.Thread(target=work) for _ in range(4)]\n"
        "for thread in threads:\n    thread.start()\nfor thread in threads:\n    thread.join()\n"
    )
    done, counts = counted([sys.executable, "threads.py"])
    assert done.returncode == 0, done.stderr
    assert counts.counts["pkg/mod.py"][TWICE_BODY] == 2000


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
@pytest.mark.parametrize("version", ["venv", "3.6", "3.13"])
def test_a_forked_child_leaves_the_report_to_its_parent(counted, repo, version):
    """A child that forks off and ends normally (through the counter's ``finally``) neither
    writes the report nor adds to it: a fork is not followed, as with ``trace.py``."""
    (repo / "forker.py").write_text(
        "import os\n\nfrom pkg.mod import twice\n\npid = os.fork()\nif pid == 0:\n"
        "    twice(1)\n    twice(2)\nelse:\n    os.waitpid(pid, 0)\n    twice(3)\n"
    )
    done, counts = counted([_interpreter(version), "forker.py"])
    assert (done.returncode, done.stderr) == (0, "")
    assert counts.counts["pkg/mod.py"][TWICE_BODY] == 1


SPAWNER = """\
import subprocess
import sys

from pkg.mod import twice

twice(0)
subprocess.run([sys.executable, "-c", "from pkg.mod import twice; twice(1); twice(2)"], check=True)
subprocess.run([sys.executable, "child.py"], check=True, cwd="sub")
"""


@pytest.mark.parametrize("version", ["venv", "3.6", "3.13"])
def test_python_children_are_counted_where_trace_py_writes_them(counted, repo, version):
    """As ``trace.py`` follows them: a ``-c`` child in the same working directory adds its counts
    to the report; a script child run in another directory (and the grandchild it starts there)
    writes ``trace.py``'s relative ``coverage.cover`` where SWT-Bench never reads it, so their
    counts are not in the report."""
    (repo / "spawner.py").write_text(SPAWNER)
    (repo / "sub").mkdir()
    (repo / "sub" / "child.py").write_text(
        "import subprocess, sys\nfrom pkg.mod import twice\n"
        "twice(3)\nsubprocess.run([sys.executable, '-c', "
        "'from pkg.mod import twice; twice(4)'])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(repo)}
    done, counts = counted([_interpreter(version), "spawner.py"], env=env)
    assert done.returncode == 0, done.stderr
    # spawner 1, -c child 2 (child.py 1 and its grandchild 1 written in sub/, not read)
    assert counts.counts["pkg/mod.py"][TWICE_BODY] == 3
    assert counts.counts["pkg/mod.py"][DEF_LOOP] == 2  # each process imported the module once
    # each child printed trace.py's options first
    options = str(counter_module.trace_arguments(str(repo), sorted(TARGETS)))
    assert done.stdout.splitlines() == [options] * 3


CHILDREN = """\
import subprocess
import sys

def child(*args, **kwargs):
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, **kwargs)
    print(repr((done.returncode, done.stdout.splitlines()[1:], done.stderr.strip())))

child("-c", "import sys, pkg.mod; pkg.mod.twice(1); sys.exit(3)")
child("-c", "import pkg.mod; pkg.mod.twice(1); raise ValueError('boom')")
child("no_such_script.py")
child("-m", "local_module", cwd="sub")
child("-c", "import sys, os; print(sys.path[0] == os.getcwd(), sys.argv[1])", "x")
child("-c", "import sys; print(sys.path[0])", cwd="sub")
child("unit.py")
child("-c", "print(__file__)")
"""

UNIT = """\
import unittest


class Case(unittest.TestCase):
    def test_fails(self):
        self.fail("ran")


if __name__ == "__main__":
    unittest.main()
"""


def test_a_child_runs_as_trace_py_runs_it(counted, repo, tmp_path):
    """What a test sees of a Python child under ``trace.py``: ``SystemExit(3)`` exits 0 (its
    ``main`` catches it) and its counts are written; an uncaught error exits 1 and its counts
    are lost; a script that cannot be opened exits 1 with ``Cannot run file``; a module in the
    working directory is not found by ``-m`` and ``-c`` does not see the working directory on
    ``sys.path`` (``trace.py``'s folder is first there) nor its own ``sys.argv``; a script runs
    in a plain namespace, so ``unittest.main()`` finds no test in ``__main__`` (the tracer's
    module), and ``-c`` code has ``__file__`` ``<string>``."""
    (repo / "children.py").write_text(CHILDREN)
    (repo / "unit.py").write_text(UNIT)
    (repo / "sub").mkdir()
    (repo / "sub" / "local_module.py").write_text("print('found')\n")
    env = {**os.environ, "PYTHONPATH": str(repo)}
    done, counts = counted([sys.executable, "children.py"], env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    exit_3, uncaught, no_script, module, code, in_sub, unit, file = map(eval, lines)
    assert exit_3[:2] == (0, [])
    assert uncaught[0] == 1 and uncaught[2].endswith("ValueError: boom")
    assert no_script[0] == 1 and "Cannot run file" in no_script[2]
    assert no_script[2].endswith("No such file or directory: 'no_such_script.py'")
    assert module[0] == 1 and module[2].endswith("No module named local_module")
    assert code[:2] == (0, ["False --child"])
    assert in_sub[:2] == (0, [str(COUNTER.place(tmp_path / "tools"))])  # the counter's folder
    assert unit[0] == 0 and unit[2].startswith("---") and "Ran 0 tests" in unit[2], unit
    assert file[:2] == (0, ["<string>"])
    assert counts.counts["pkg/mod.py"][TWICE_BODY] == 1  # the SystemExit child's, not the error's


def test_a_first_process_that_ends_elsewhere_or_by_an_error_leaves_no_counts(counted, repo):
    """``trace.py`` writes after the program returns or exits, in its working directory then:
    a program ending in another directory, or by an uncaught exception, leaves none to read."""
    (repo / "elsewhere").mkdir()
    code = "import os, pkg.mod; pkg.mod.twice(1); os.chdir('elsewhere')"
    done, counts = counted([sys.executable, "-c", code])
    assert (done.returncode, counts) == (0, None), done.stderr
    done, counts = counted([sys.executable, "-c", code + "; os.chdir('..')"])
    assert counts.counts["pkg/mod.py"][TWICE_BODY] == 1


def test_a_module_imported_through_a_relative_path_is_not_counted(counted, repo):
    """``trace.py`` matches a module's ``__file__`` whole against an absolute pattern: a module
    found through a relative ``sys.path`` entry has a relative one, and is not traced there."""
    (repo / "sub").mkdir()
    code = "import sys, os; os.chdir('sub'); sys.path.insert(0, '..'); import pkg.mod; "
    done, counts = counted([sys.executable, "-c", code + "pkg.mod.twice(1); os.chdir('..')"])
    assert done.returncode == 0, done.stderr
    assert "pkg/mod.py" not in counts.counts
    done, counts = counted([sys.executable, "-c", "import pkg.mod; pkg.mod.twice(1)"])
    assert counts.counts["pkg/mod.py"][TWICE_BODY] == 1  # found through the working directory


def test_a_python_child_through_a_shell_fails_to_start_as_under_trace_py(counted, repo):
    """trace.py joins a shell command's wrapped arguments with spaces: its include pattern's
    parentheses reach ``sh`` unquoted. The counter joins them alike, and the child fails."""
    (repo / "shell.py").write_text(
        "import subprocess\nprint(subprocess.run('python3 main.py', shell=True).returncode)\n"
    )
    done, counts = counted([sys.executable, "shell.py"])
    assert done.returncode == 0 and done.stdout.strip() != "0"
    assert "pkg/mod.py" not in counts.counts  # the child counted nothing


@pytest.mark.parametrize(
    ("args", "options", "program"),
    [
        (["python", "-m", "pytest", "-x"], [], ["-m", "pytest", "-x"]),
        (["/e/bin/python3.9", "-B", "-W", "ignore", "s.py", "a"], ["-B", "-W", "ignore"],
         ["s.py", "a"]),
        (["python", "-Im", "mod"], ["-I"], ["-m", "mod"]),
        (["python", "-mpytest"], [], ["-m", "pytest"]),
        (["python", "--", "s.py"], [], ["s.py"]),
        (["python", "-c", "print(1)", "x"], [], ["-c", "print(1)", "x"]),
    ],
)  # fmt: skip
def test_a_python_child_runs_under_the_counter_after_its_options(args, options, program):
    prefix = ["COUNTER", "--child", "/r", "REPORT", "{}"]
    wrapped = counter_module.child_command(args, prefix)
    # the parent's interpreter, as trace.py runs it
    assert wrapped == [sys.executable, *options, *prefix, *program]


@pytest.mark.parametrize(
    "args", [["git", "status"], ["python", "-i"], ["python", "-"], ["python"], ["python", "-c"]]
)
def test_other_programs_and_interactive_or_stdin_pythons_are_not_wrapped(args):
    assert counter_module.child_command(args, ["COUNTER"]) is None


def test_reports_of_two_processes_add_up():
    first = {"version": 1, "files": {"a.py": {"executable": [1, 2], "counts": {"1": 2}}}}
    second = {
        "version": 1,
        "files": {"a.py": {"executable": [2, 3], "counts": {"1": 1, "3": 4}}, "b.py": {
            "executable": [], "counts": {}, "error": "OSError: x"}},
        "replaced": True,
    }  # fmt: skip
    assert counter_module.merged(first, second) == {
        "version": 1,
        "files": {
            "a.py": {"executable": [1, 2, 3], "counts": {"1": 3, "3": 4}},
            "b.py": {"executable": [], "counts": {}, "error": "OSError: x"},
        },
        "replaced": True,
    }


RECURSING = """\
import sys, pkg.mod
class Node:
    def __init__(self, n):
        self.n = n
    def __hash__(self):  # reached from C (`in`): the interpreter's own depth checks on the way
        return hash(Node(self.n + 1))
def pad(k):
    if k:
        return pad(k - 1)
    try:
        Node(0) in {1, 2}
    except RecursionError:
        pass
pad(int(sys.argv[1]))
pkg.mod.twice(1)
"""


def test_a_test_recursing_to_the_limit_leaves_the_counting_on(counted, repo):
    """A test reaching the recursion limit (sympy's test_point does) raises in its own code, as
    under trace.py, whose global trace calls no Python function: when the limit falls in the
    trace function instead, Python turns tracing off for good and later lines go uncounted.
    Where the limit falls depends on the depth the test starts at, so a few are tried: the
    counter must keep counting at one of them at least (its old global trace, one Python call
    deeper, lost the counts at each)."""
    (repo / "recursing.py").write_text(RECURSING)
    kept = []
    for depth in range(6):
        done, counts = counted([sys.executable, "recursing.py", str(depth)])
        assert done.returncode == 0, done.stderr
        if counts.counts["pkg/mod.py"][TWICE_BODY] == 1:
            assert not counts.replaced
            kept.append(depth)
    assert kept, "the counting was turned off at every depth"


@pytest.mark.parametrize("version", ["venv", "3.13"])
def test_a_trace_function_of_the_command_replacing_the_counter_is_reported(counted, version):
    """settrace (Python < 3.12) is one per thread: the command's own (coverage.py's, in the same
    process) ends the counting, as it ends trace.py's; sys.monitoring (3.12+) is not affected."""
    python = _interpreter(version)
    code = "import sys, pkg.mod\nsys.settrace(None)\npkg.mod.twice(1)\n"
    done, counts = counted([python, "-c", code])
    assert done.returncode == 0, done.stderr
    monitoring = version != "venv"  # the venv's Python is 3.11
    assert counts.replaced is not monitoring
    assert counts.counts["pkg/mod.py"][TWICE_BODY] == (1 if monitoring else 0)


# ---------------------------------------------------------------------------------------------
# The command runs as `python ARGS` would: its exit status, options, argv and sys.path.


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("import pkg.mod; pkg.mod.twice(1)", 0),
        ("import sys, pkg.mod; pkg.mod.twice(1); sys.exit(3)", 3),
        ("import pkg.mod; pkg.mod.twice(1); raise ValueError('boom')", 1),
    ],
    ids=["ok", "exit-3", "uncaught"],
)
def test_the_exit_status_is_the_commands_and_the_report_is_written(counted, code, status):
    """The first process exits as Python would; its report is written when the program ends
    normally or through ``SystemExit``, as ``trace.py`` writes its results (not after an
    uncaught exception, which leaves ``trace.py``'s ``main`` first)."""
    done, counts = counted([sys.executable, "-c", code])
    assert done.returncode == status, done.stderr
    if status == 1:
        assert "ValueError: boom" in done.stderr
        assert COUNTER.script not in done.stderr  # the traceback is the command's own
        assert counts is None
    else:
        assert counts.counts["pkg/mod.py"][TWICE_BODY] == 1


def test_a_system_exit_message_is_printed_as_python_does(counted):
    done, counts = counted([sys.executable, "-c", "raise SystemExit('bad input')"])
    assert (done.returncode, done.stderr.strip()) == (1, "bad input")
    assert counts == LineCounts({}, {})  # nothing of the targets ran


def test_interpreter_options_take_effect(counted):
    warn = "import warnings; warnings.warn('old', DeprecationWarning); print('after')"
    done, _ = counted([sys.executable, "-c", warn])
    assert done.returncode == 0 and done.stdout == "after\n", done.stderr
    command = [sys.executable, "-W", "error::DeprecationWarning", "-c", warn]
    done, _ = counted(command)
    assert done.returncode == 1 and "DeprecationWarning: old" in done.stderr, done.stderr
    wrapped = counted_command(command, "/run/tools", "/run/counts.json", {})
    assert wrapped[1:4] == ["-W", "error::DeprecationWarning", f"/run/tools/{COUNTER.script}"]


SHOW = (
    "import sys, __main__\n"
    "print(sys.argv, sys.path[0], sys.path.count(sys.path[0]), __name__,"
    " getattr(__main__, '__file__', None),"
    " __main__.__spec__ is None, sys.modules['__main__'] is __main__)\n"
)


@pytest.mark.parametrize(
    "args",
    [["show.py", "a", "-b"], ["sub/show.py"], ["-m", "show", "x"], ["-c", SHOW, "y"]],
    ids=["script", "script-in-a-folder", "module", "code"],
)
def test_argv_path_and_main_are_pythons(counted, repo, args):
    (repo / "show.py").write_text(SHOW)
    (repo / "sub").mkdir()
    (repo / "sub" / "show.py").write_text(SHOW)
    plain = subprocess.run([sys.executable, *args], cwd=repo, capture_output=True, text=True)
    assert plain.returncode == 0, plain.stderr
    done, _ = counted([sys.executable, *args])
    assert (done.returncode, done.stdout) == (0, plain.stdout), done.stderr


@pytest.mark.slow
def test_pytest_runs_as_a_module_and_its_tested_lines_count(counted, repo):
    (repo / "tests").mkdir()
    (repo / "tests" / "test_mod.py").write_text(
        "from pkg.mod import twice\n\n\ndef test_twice():\n    assert twice(2) == 4\n\n\n"
        "def test_twice_again():\n    assert twice(3) == 6\n"
    )
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    done, counts = counted(command)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    mod = counts.counts["pkg/mod.py"]
    assert (mod[TWICE_BODY], mod[DEF_LOOP], mod[LOOP_BODY]) == (2, 1, 0)
    assert not counts.replaced  # pytest keeps the counter's trace function
    done, _ = counted([*command, "-k", "no_such_test"])
    assert done.returncode == 5  # pytest's "no tests collected", through SystemExit


@pytest.mark.parametrize("version", ["venv", "3.6", "3.13"])
def test_the_packages_of_a_module_run_with_m_are_imported_before_counting(counted, repo, version):
    """``-m pkg.run``: trace.py finds the module (importing ``pkg``, whose ``__init__`` imports
    ``pkg.mod``) before it starts tracing, so ``mod``'s top-level lines are not counted there,
    and its functions' lines are (as ``-m pytest`` imports ``_pytest`` first in pytest's own
    repository); a file run as a script imports it under the counter."""
    python = _interpreter(version)
    (repo / "pkg" / "__init__.py").write_text("from pkg import mod\n")
    (repo / "pkg" / "run.py").write_text("from pkg.mod import twice\n\ntwice(1)\n")
    done, counts = counted([python, "-m", "pkg.run"])
    assert done.returncode == 0, done.stderr
    mod = counts.counts["pkg/mod.py"]
    assert (mod[DEF_LOOP], mod[TWICE_BODY]) == (0, 1)
    done, counts = counted([python, "-m", "pkg.missing"])
    assert done.returncode == 1 and "No module named pkg.missing" in done.stderr
    (repo / "broken").mkdir()
    (repo / "broken" / "__init__.py").write_text("raise ValueError('broken package')\n")
    done, counts = counted([python, "-m", "broken.run"])  # raised as Python raises it
    assert done.returncode == 1 and "ValueError: broken package" in done.stderr, done.stderr
    done, counts = counted([python, "main.py"])
    assert done.returncode == 0, done.stderr
    assert counts.counts["pkg/mod.py"][DEF_LOOP] == 1


# ---------------------------------------------------------------------------------------------
# Units: the option split, the wrappers, the report.


HASH_OPTION = ["--check-hash-based-pycs", "never"]


@pytest.mark.parametrize(
    ("command", "interpreter", "args"),
    [
        (["py", "-m", "pytest", "x"], ["py"], ["-m", "pytest", "x"]),
        (["py", "-W", "all", "-m", "pytest"], ["py", "-W", "all"], ["-m", "pytest"]),
        (["py", "-Wall", "-Bm", "pytest"], ["py", "-Wall", "-B"], ["-m", "pytest"]),
        (["py", "-mpytest", "-W", "x"], ["py"], ["-m", "pytest", "-W", "x"]),
        (["py", "-X", "dev", "-c", "pass", "a"], ["py", "-X", "dev"], ["-c", "pass", "a"]),
        (["py", "-Ic", "pass"], ["py", "-I"], ["-c", "pass"]),
        (["py", "-bb", "-OO", "run.py", "-W"], ["py", "-bb", "-OO"], ["run.py", "-W"]),
        (["py", "--", "run.py"], ["py", "--"], ["run.py"]),
        (["py", "-u", "-", "a"], ["py", "-u"], ["-", "a"]),
        (["py", "--check-hash-based-pycs", "never", "r.py"], ["py", *HASH_OPTION], ["r.py"]),
    ],
)
def test_interpreter_options_are_split_from_the_program(command, interpreter, args):
    assert split_interpreter_options(command) == (interpreter, args)


def test_measured_command_keeps_interpreter_options_before_the_script():
    command = ["python", "-W", "all", "-m", "pytest", "tests/test_a.py"]
    wrapped = measured_command(command, "/run/tools", "/run/rc", "[run]\n", "/run/cov.json")
    script = f"/run/tools/{RUNTIME.script}"
    assert wrapped[:4] == ["python", "-W", "all", script]
    assert wrapped[-3:] == ["-m", "pytest", "tests/test_a.py"]
    plain = measured_command(command[:1] + command[3:], "/run/tools", "/run/rc", "", "/r.json")
    assert plain[:2] == ["python", script]  # without options: as before


@pytest.mark.slow
def test_a_measured_run_with_interpreter_options_runs(repo, tmp_path):
    """``coverage run`` rejects interpreter options ("no such option: -W"): they go before the
    measuring script, and still take effect."""
    (repo / "tests").mkdir()
    (repo / "tests" / "test_mod.py").write_text(
        "import sys\n\nfrom pkg.mod import twice\n\n\ndef test_twice():\n"
        "    assert twice(2) == 4\n    assert sys.warnoptions == ['all']\n"
    )
    scratch = tmp_path / "scratch"
    command = [sys.executable, "-W", "all", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    wrapped = measured_command(
        [*command, "tests/test_mod.py"],
        str(RUNTIME.place(tmp_path / "tools")),
        str(scratch / "rc"),
        rcfile(["pkg/mod.py"], str(scratch / "data")),
        str(scratch / "cov.json"),
        {"pkg/mod.py": [TWICE_BODY]},
    )
    done = subprocess.run(wrapped, cwd=repo, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    measured = read_report((scratch / "cov.json").read_bytes())
    assert TWICE_BODY in measured.executed["pkg/mod.py"]


def test_counted_command_names_the_script_and_the_targets():
    wrapped = counted_command(
        ["python", "-m", "pytest", "t.py"], "/run/tools", "/run/c.json", {"a.py": [3, 1, 3]}
    )
    assert wrapped == [
        "python", f"/run/tools/{COUNTER.script}", "/run/c.json", '{"a.py": [1, 3]}',
        "-m", "pytest", "t.py",
    ]  # fmt: skip


def test_the_runtime_file_is_the_counter():
    assert COUNTER.script == "_swt_counter.py"
    assert COUNTER.contents[COUNTER.script] == Path(counter_module.__file__).read_bytes()


def test_read_counts_fills_zeros_of_executable_lines_only():
    report = {
        "version": 1,
        "files": {
            "pkg/a.py": {"executable": [2, 5, 7], "counts": {"2": 3, "4": 1}},
            "pkg/b.py": {"executable": [], "counts": {}, "error": "SyntaxError: x"},
        },
        "replaced": True,
    }
    counts = read_counts(json.dumps(report).encode())
    assert counts.executable == {"pkg/a.py": {2, 5, 7}, "pkg/b.py": frozenset()}
    assert counts.counts == {"pkg/a.py": {2: 3, 5: 0, 7: 0}, "pkg/b.py": {}}  # 4: no table line
    assert counts.errors == {"pkg/b.py": "SyntaxError: x"}
    assert counts.replaced
    assert read_counts(None) is None
    with pytest.raises(ValueError, match="version"):
        read_counts(b'{"version": 2, "files": {}}')


def test_the_fallback_line_table_is_stdlib_traces(tmp_path):
    import trace

    path = tmp_path / "mod.py"
    path.write_text(MODULE)
    assert counter_module.find_executable_linenos(str(path)) == trace._find_executable_linenos(
        str(path)
    )
    path.write_text("def broken(:\n")
    assert counter_module.executable_lines(str(path))[1].startswith("SyntaxError")
