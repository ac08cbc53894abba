"""Local stand-ins for network services: inferred from the test files, started by every run on
its own loopback (the network stays off), their variable exported, stopped after."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from builder.core.config import ValidationConfig
from tests.support.records import candidate
from validation.environments import services
from validation.environments.environment import EnvironmentSpec
from validation.environments.resolution import EnvironmentResolver
from validation.environments.sandbox import require
from validation.runs.backends.local import LocalSession

SANDBOXES = ["bwrap", "none"]

FAKE_HTTPBIN = textwrap.dedent(
    """
    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [("local httpbin at " + environ["PATH_INFO"]).encode()]
    """
)
"""A WSGI app where the ``httpbin`` package's is (``from httpbin import app``)."""

CLIENT = textwrap.dedent(
    """
    import os, sys, urllib.request
    url = os.environ["HTTPBIN_URL"]
    print(url)
    print(urllib.request.urlopen(url + "get", timeout=10).read().decode())
    sys.exit(int(sys.argv[1]))
    """
)


def test_inferred_from_the_test_files_and_what_the_test_patch_adds(git_repo):
    uses = "HTTPBIN = os.environ.get('HTTPBIN_URL', 'http://httpbin.org/')\n"
    base = git_repo.commit({"test_requests.py": uses, "test_other.py": "def test(): pass\n"})
    assert services.inferred(git_repo.path, base, "", ["test_requests.py"]) == ("httpbin",)
    assert services.inferred(git_repo.path, base, "", ["test_other.py"]) == ()
    patch = git_repo.diff({"test_new.py": uses})
    assert services.patched_files(patch) == ["test_new.py"]
    assert services.inferred(git_repo.path, base, patch, ["test_new.py"]) == ("httpbin",)
    assert services.packages(["httpbin"]) == ("httpbin",)


@pytest.fixture
def environment(tmp_path):
    """A real venv; ``with_httpbin`` puts the fake ``httpbin`` package in its site-packages."""

    def make(with_httpbin):
        venv = tmp_path / "env"
        base = os.path.realpath(sys.executable)
        subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
        if with_httpbin:
            (site,) = venv.glob("lib/python*/site-packages")
            (site / "httpbin").mkdir()
            (site / "httpbin" / "__init__.py").write_text(FAKE_HTTPBIN)
        return venv / "bin" / "python"

    return make


def _session(tmp_path, python, sandbox):
    tree = tmp_path / "tree"
    tree.mkdir()
    spec = EnvironmentSpec(python=f"{sys.version_info.major}.{sys.version_info.minor}")
    session = LocalSession(tree, tmp_path / "run", python, spec, bwrap=require(sandbox))
    session.services = ("httpbin",)
    return session


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_run_reaches_its_own_httpbin_on_loopback_and_keeps_its_exit_status(
    tmp_path, environment, sandbox
):
    session = _session(tmp_path, environment(True), sandbox)
    log = tmp_path / "log.txt"
    completed = session.run(["python", "-c", CLIENT, "3"], log, 60)
    lines = log.read_text().splitlines()
    assert completed.exit_code == 3, log.read_text()  # the tests' status, not the shim's
    assert lines[0].startswith("http://127.0.0.1:") and lines[1] == "local httpbin at /get"
    port = int(lines[0].rsplit(":", 1)[1].strip("/"))
    # stopped with the run: nothing listens there any more (sandboxed: not even in this netns)
    probe = "import socket, sys; s = socket.socket(); sys.exit(s.connect_ex(('127.0.0.1', %d)))"
    refused = subprocess.run([sys.executable, "-c", probe % port])
    assert refused.returncode != 0


@pytest.mark.parametrize("sandbox", ["bwrap"])
def test_a_service_whose_package_is_missing_is_named_and_the_tests_run(
    tmp_path, environment, sandbox
):
    session = _session(tmp_path, environment(False), sandbox)
    log = tmp_path / "log.txt"
    completed = session.run(["python", "-c", "print('tests ran')"], log, 60)
    text = log.read_text()
    assert completed.exit_code == 0, text
    assert "swt: service httpbin not started: ModuleNotFoundError" in text
    assert "tests ran" in text


def test_the_resolver_turns_them_on_from_the_tests_or_the_spec(tmp_path, git_repo):
    """requests 2.0: its tests read ``HTTPBIN_URL``; a spec may name services or none."""
    setup = "from setuptools import setup\nsetup(name='widget', install_requires=[])\n"
    uses = "HTTPBIN = os.environ.get('HTTPBIN_URL', 'http://httpbin.org/')\n"
    base = git_repo.commit({"setup.py": setup, "test_widget.py": "import os\n"})
    test_patch = git_repo.diff({"test_widget.py": "import os\n" + uses})
    plain_patch = git_repo.diff({"test_widget.py": "import os\nX = 1\n"})

    def resolved(patch, spec_text=None):
        return _resolved(tmp_path, git_repo, base, patch, spec_text)

    inferred = resolved(test_patch)
    assert inferred.spec.services == ("httpbin",) and "httpbin" in inferred.spec.packages
    assert inferred.metadata()["services"] == "httpbin"
    assert inferred.metadata()["services_from"] == "inferred"
    none = resolved(plain_patch)
    assert none.spec.services == () and "services" not in none.metadata()
    assert "httpbin" not in none.spec.packages
    named = resolved(plain_patch, 'services = ["httpbin"]\n')
    assert named.spec.services == ("httpbin",) and named.metadata()["services_from"] == "spec"
    assert resolved(test_patch, "services = []\n").spec.services == ()  # turned off
    # the services are no part of what is built: only their package is
    assert inferred.spec.key() != none.spec.key()


WRAPPING_CONFTEST = textwrap.dedent(
    """
    import pytest

    @pytest.fixture
    def httpbin(httpbin):
        return httpbin.url + "/"
    """
)
"""requests' conftest.py: its own ``httpbin`` wraps pytest-httpbin's."""


def test_fixture_plugins_from_the_tests_and_the_conftests_above_them(git_repo):
    base = git_repo.commit(
        {
            "tests/conftest.py": WRAPPING_CONFTEST,
            "tests/unit/test_a.py": "def test_a(httpbin):\n    pass\n",
            "other/conftest.py": "import pytest\n\n@pytest.fixture\ndef httpbin():\n"
            "    return 'own'\n",
            "other/test_b.py": "def test_b(httpbin):\n    pass\n",
            "plain/test_c.py": "def test_c(tmp_path):\n    pass\n",
        }
    )
    # the conftest above a touched file uses the plugin's fixture, wrapping it
    assert services.fixture_plugins(git_repo.path, base, "", ["tests/unit/test_a.py"]) == {
        "pytest-httpbin": ("tests/conftest.py", "tests/unit/test_a.py")
    }
    # a fixture of that name the project defines itself is its own
    assert services.fixture_plugins(git_repo.path, base, "", ["other/test_b.py"]) == {}
    assert services.fixture_plugins(git_repo.path, base, "", ["plain/test_c.py"]) == {}
    # what the test patch adds: a marker on a class, a fixture as a parameter over two lines
    marked = git_repo.diff(
        {
            "plain/test_c.py": "import pytest\n\n@pytest.mark.usefixtures('httpbin_secure')\n"
            "class TestC:\n    def test_c(self):\n        pass\n",
            "plain/test_d.py": "def test_d(\n    tmp_path,\n    httpbin_both,\n):\n    pass\n",
        }
    )
    files = services.patched_files(marked)
    assert services.fixture_plugins(git_repo.path, base, marked, files) == {
        "pytest-httpbin": ("plain/test_c.py", "plain/test_d.py")
    }


def test_the_resolver_adds_pytest_httpbin_as_an_optional_package(tmp_path, git_repo):
    """Tests that take pytest-httpbin's fixtures get the plugin, optional (left out and named
    when it cannot be installed), and the run's metadata says which files asked for it."""
    setup = "from setuptools import setup\nsetup(name='widget', install_requires=[])\n"
    base = git_repo.commit({"setup.py": setup, "tests/conftest.py": WRAPPING_CONFTEST,
                            "tests/test_widget.py": "def test_old():\n    pass\n"})  # fmt: skip
    uses = git_repo.diff({"tests/test_widget.py": "def test_get(httpbin):\n    pass\n"})
    other = git_repo.diff({"setup.py": setup + "# changed\n"})

    def resolved(patch, spec_text=None):
        return _resolved(tmp_path, git_repo, base, patch, spec_text)

    inferred = resolved(uses)
    assert inferred.spec.optional_packages == ("pytest-httpbin",)
    assert "pytest-httpbin" in inferred.spec.optional
    assert not [p for p in inferred.spec.packages if "httpbin" in p]
    assert inferred.spec.services == ()  # the plugin serves it: no shim, no HTTPBIN_URL
    assert json.loads(inferred.metadata()["fixture_plugins"]) == {
        "pytest-httpbin": ["tests/conftest.py", "tests/test_widget.py"]
    }
    # no touched test file: nothing added, nothing recorded
    none = resolved(other)
    assert none.spec.optional_packages == () and "fixture_plugins" not in none.metadata()
    # a spec that names the plugin already keeps its own (in the stack or optional)
    for named in ('packages = ["pytest-httpbin==1.0.0"]', 'optional_packages = ["pytest_httpbin"]'):
        own = resolved(uses, named + "\n")
        assert "fixture_plugins" not in own.metadata()
        assert own.spec.optional_packages in ((), ("pytest_httpbin",))
    assert inferred.spec.key() != none.spec.key()  # what is installed differs


def _resolved(tmp_path, git_repo, base, patch, spec_text=None):
    """acme/w's resolution at ``base`` for a record with ``patch`` as its test patch, by the
    inferred spec or (``spec_text``: lines of its ``[defaults]``) a spec file."""
    spec_files = []
    if spec_text is not None:
        spec_file = tmp_path / "acme__w.toml"
        spec_file.write_text(f'repo = "acme/w"\n[defaults]\npython = "3.9"\n{spec_text}')
        spec_files = [str(spec_file)]
    settings = ValidationConfig(bundled_specs=False, packages=["pytest"], spec_files=spec_files)
    resolver = EnvironmentResolver(settings, tmp_path / "inferred", lambda: ["3.9"])
    record = candidate(repo="acme/w", base_commit=base, test_patch=patch)
    return resolver.resolve(record, git_repo.path)
