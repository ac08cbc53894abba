"""The run's checkout wins over the environment's installed copy of the project through a
``.pth`` file, with no ``PYTHONPATH`` of ours: in both sandboxes, in subprocesses too."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from validation.environments.environment import EnvironmentSpec
from validation.environments.metadata import Identity
from validation.environments.sandbox import require
from validation.runs import checkout_path
from validation.runs.backends.local import LocalSession

SANDBOXES = ["bwrap", "none"]

PROBE = textwrap.dedent(
    """
    import json, os, subprocess, sys, sysconfig
    import pkg
    site = sysconfig.get_paths()["purelib"]
    child = subprocess.run(
        [sys.executable, "-c", "import pkg; print(pkg.WHERE)"], env={"PATH": "/usr/bin:/bin"},
        capture_output=True, text=True,
    ).stdout.strip()
    print(json.dumps({
        "where": pkg.WHERE,
        "pythonpath": os.environ.get("PYTHONPATH"),
        "path": sys.path,
        "site": site,
        "child": child,
    }))
    """
)

MODIFY_SYS_PATH = textwrap.dedent(
    """
    import os, sys
    cwd = os.getcwd()
    if sys.path[0] in ("", ".", cwd):
        sys.path.pop(0)
    env_pythonpath = os.environ.get("PYTHONPATH", "")
    if env_pythonpath.startswith(":") and env_pythonpath not in (f":{cwd}", ":."):
        sys.path.pop(0)
    elif env_pythonpath.endswith(":") and env_pythonpath not in (f"{cwd}:", ".:"):
        sys.path.pop(1)
    import hmac
    print("local hmac" if hmac.__file__.startswith(cwd) else "standard hmac")
    """
)
"""pylint's ``modify_sys_path`` (``python -m pylint`` strips the working directory from
``sys.path``, reading ``PYTHONPATH`` to find it), then an import the working directory shadows:
its test runs this with ``PYTHONPATH`` set to the run's own plus ``:``."""


@pytest.fixture
def environment(tmp_path):
    """A real venv whose site-packages has ``pkg`` installed (``WHERE = "installed"``)."""
    venv = tmp_path / "env"
    base = os.path.realpath(sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "pkg").mkdir()
    (site / "pkg" / "__init__.py").write_text('WHERE = "installed"\n')
    return venv / "bin" / "python"


def _session(tmp_path, python, sandbox, *, src=False, project=None):
    tree = tmp_path / "tree"
    package = tree / ("src/pkg" if src else "pkg")
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('WHERE = "checkout"\n')
    spec = EnvironmentSpec(python=f"{sys.version_info.major}.{sys.version_info.minor}")
    return LocalSession(
        tree, tmp_path / "run", python, spec, project=project, bwrap=require(sandbox)
    )


def _run(session, code, *args):
    log = session.run_dir / "log.txt"
    completed = session.run(["python", "-c", code, *args], log, 60)
    assert completed.exit_code == 0, log.read_text()
    return log.read_text().splitlines()


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("src", [False, True])
def test_the_checkout_wins_over_the_installed_copy_without_pythonpath(
    tmp_path, environment, sandbox, src
):
    import json

    session = _session(tmp_path, environment, sandbox, src=src)
    found = json.loads(_run(session, PROBE)[-1])
    assert found["where"] == "checkout"
    assert found["pythonpath"] is None  # nothing the project's CI did not set
    path, site = found["path"], found["site"]
    testbed = session.testbed + ("/src" if src else "")
    # just before site-packages: after the standard library, as an installed project is
    assert path.index(testbed) == path.index(site) - 1
    assert path.index(testbed) > path.index(os.path.dirname(os.__file__))
    if sandbox == "bwrap":  # literal paths: a subprocess with a scrubbed environment too
        assert found["child"] == "checkout"
    # the environment itself is untouched by a sandboxed run; outside runs it has the install
    outside = subprocess.run(
        [str(environment), "-c", "import pkg; print(pkg.WHERE)"], capture_output=True,
        text=True, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"},
    ).stdout.strip()  # fmt: skip
    assert outside == "installed"


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_tests_own_pythonpath_keeps_its_place(tmp_path, environment, sandbox):
    """pylint's ``test_do_not_import_files_from_local_directory``: ``PYTHONPATH`` as the run
    has it, plus ``:``, then ``python -m pylint`` from a folder holding ``hmac.py``. A
    two-entry ``PYTHONPATH`` of ours (the checkout and the metadata shadow's folder, which a
    run of a project with an identity has) made it strip the wrong entry."""
    session = _session(tmp_path, environment, sandbox, project=Identity("fixture-pkg", "1.0"))
    folder = session.tree / "work"
    folder.mkdir()
    (folder / "hmac.py").write_text("raise SystemExit('imported the local hmac.py')\n")
    (folder / "tool.py").write_text(MODIFY_SYS_PATH)
    launch = textwrap.dedent(
        """
        import os, subprocess, sys
        pythonpath = os.environ.get("PYTHONPATH", "").strip(":") + ":"
        env = {**os.environ, "PYTHONPATH": pythonpath}
        os.chdir("work")
        print(subprocess.run([sys.executable, "-m", "tool"], env=env, capture_output=True,
                             text=True).stdout.strip())
        """
    )
    assert _run(session, launch)[-1] == "standard hmac"


def test_the_pth_line_inserts_before_site_packages_once(tmp_path):
    """The line as ``site`` executes it, on the oldest syntax the environments have."""
    line = checkout_path.literal([str(tmp_path), str(tmp_path / "missing")])
    assert line.count("\n") == 1 and line.startswith("import ")
    code = textwrap.dedent(
        f"""
        import sys
        sys.path[:] = ["/pythonpath", "/usr/lib/python3.11", "/env/lib/python3.11/site-packages"]
        exec({line!r})
        exec({line!r})  # site.addsitedir again: no second entry
        print(sys.path)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(
        ["/pythonpath", "/usr/lib/python3.11", str(tmp_path), "/env/lib/python3.11/site-packages"]
    )
