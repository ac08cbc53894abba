"""What an environment image build sees of this machine: an allow-list, never a token, and a
network that leads to the package index only; the project it installs has its ``.git`` (a
version from the tags, as the local backend's worktree gives it)."""

import io
import socket
import subprocess
import tarfile

import pytest

from builder.core.config import DockerConfig
from tests.support import docker as docker_support
from tests.support import scm_project
from tests.support.git import GitRepo
from tests.support.tiers import DOCKER
from validation.environments.docker_environments import (
    HOST_VARIABLES,
    DockerEnvironments,
    build_exports,
    build_hosts,
    build_script,
    vcs_metadata,
    vcs_refs,
)
from validation.environments.environment import EnvironmentBuildError, EnvironmentSpec
from validation.environments.url_sources import UrlSource

TOKENS = {"GITHUB_TOKEN": "ghp_buildcanary0123456789", "HF_TOKEN": "hf_buildcanary0123456789"}
SETUP = (
    "import os, sys\nfor k, v in sorted(os.environ.items()):\n    print(f'{k}={v}')\nsys.exit(3)\n"
)


@pytest.fixture
def tokens(monkeypatch):
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-buildcanary")


def test_the_build_exports_only_allowed_host_variables(tokens, monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    spec = EnvironmentSpec(docker_support.PYTHON, (), env=(("FROM_SPEC", "1"),))
    passed = build_exports(spec, DockerConfig(proxy_passthrough=True), with_ca=False)
    assert passed["HTTPS_PROXY"] == "http://proxy.invalid:3128" and passed["FROM_SPEC"] == "1"
    host = {name for name in passed if name.upper() == name and "PROXY" in name}
    assert host <= set(HOST_VARIABLES)
    values = " ".join(passed.values())
    assert not any(secret in values for secret in [*TOKENS.values(), "aws-buildcanary"])
    closed = build_exports(spec, DockerConfig(proxy_passthrough=False), with_ca=False)
    assert "HTTPS_PROXY" not in closed


def test_a_build_may_reach_the_index_hosts_its_settings_name_and_the_mirror_for_apt(
    monkeypatch,
):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")  # the builder's, not an index
    spec = EnvironmentSpec(
        docker_support.PYTHON, (), env=(("UV_INDEX_URL", "https://mirror.example/simple"),)
    )
    settings = DockerConfig(debian_mirror="http://deb.example/debian")
    assert build_hosts(spec, settings) == {"pypi.org", "files.pythonhosted.org", "mirror.example"}
    with_apt = EnvironmentSpec(docker_support.PYTHON, (), system_packages=("libgl1",))
    assert "deb.example" in build_hosts(with_apt, settings)
    assert "git.example" in build_hosts(spec, settings, ("git.example",))
    exports = build_exports(spec, settings, with_ca=False, forwarder=True)
    assert exports["HTTPS_PROXY"] == exports["http_proxy"] == "http://127.0.0.1:3128"


@pytest.mark.docker
@pytest.mark.timeout(DOCKER[1].args[0])
def test_a_build_printing_its_environment_shows_no_token(tokens, tmp_path):
    client = docker_support.engine()
    docker_support.base_image()
    repo = GitRepo(tmp_path / "project")
    commit = repo.commit({"setup.py": SETUP})
    spec = EnvironmentSpec(
        docker_support.PYTHON,
        (),
        project=repo.path / ".git",
        project_commit=commit,
        pre_install=("python setup.py",),
    )  # fmt: skip  (before any download: the build needs no network)
    environments = DockerEnvironments(client, tmp_path / "work", DockerConfig())
    with pytest.raises(EnvironmentBuildError) as raised:
        environments.get(spec)
    log = raised.value.log_path.read_text()
    assert "VIRTUAL_ENV=/opt/swt-env" in log  # setup.py printed its environment
    assert not any(secret in log for secret in [*TOKENS.values(), "aws-buildcanary"])
    for path in (tmp_path / "work").rglob("*"):  # nothing the build left holds one either
        if path.is_file():
            text = path.read_bytes()
            assert not any(secret.encode() in text for secret in TOKENS.values()), path


NETWORK_PROBE = """
import os, socket, sys
def connect(host, port):
    try:
        socket.create_connection((host, port), timeout=5).close()
        return "connected"
    except OSError:
        return "no connection"
def through_proxy(host):
    proxy = socket.create_connection(("127.0.0.1", 3128), timeout=20)
    proxy.sendall(("CONNECT %s:443 HTTP/1.1\\r\\nHost: %s:443\\r\\n\\r\\n" % (host, host)).encode())
    return proxy.recv(64).decode().split("\\r\\n")[0]
port = int(os.environ["SWT_TEST_PORT"])
print("HOST-LOOPBACK", connect("127.0.0.1", port))
print("HOST-GATEWAY", connect(os.environ["SWT_TEST_GATEWAY"], port))
print("DIRECT-INDEX", connect("pypi.org", 443))
print("PROXY-INDEX", through_proxy("pypi.org"))
print("PROXY-OTHER", through_proxy("example.com"))
print("PROXY-SETTING", os.environ.get("HTTPS_PROXY"), os.environ.get("NO_PROXY"))
sys.exit(1)
"""


@pytest.mark.docker
@pytest.mark.timeout(DOCKER[1].args[0])
def test_a_build_reaches_the_package_index_and_nothing_else(tmp_path, monkeypatch):
    client = docker_support.engine()
    docker_support.base_image()
    monkeypatch.setenv("NO_PROXY", "*")  # passed through, it would send pip past the proxy
    gateway = docker_support.bridge_gateway(client)
    server = socket.socket()  # a service of this machine, on every address it has
    server.bind(("0.0.0.0", 0))
    server.listen()
    port = server.getsockname()[1]
    repo = GitRepo(tmp_path / "project")
    commit = repo.commit({"probe.py": NETWORK_PROBE})
    spec = EnvironmentSpec(
        docker_support.PYTHON,
        (),
        project=repo.path / ".git",
        project_commit=commit,
        pre_install=("python probe.py",),
        env=(("SWT_TEST_PORT", str(port)), ("SWT_TEST_GATEWAY", gateway)),
    )
    try:
        with pytest.raises(EnvironmentBuildError) as raised:
            DockerEnvironments(client, tmp_path / "work", DockerConfig()).get(spec)
    finally:
        server.close()
    log = raised.value.log_path.read_text()
    assert "HOST-LOOPBACK no connection" in log, log  # its own network namespace
    assert "HOST-GATEWAY no connection" in log, log  # no bridge to this machine either
    assert "DIRECT-INDEX no connection" in log, log  # out only through the proxy
    assert "PROXY-INDEX HTTP/1.1 200 Connection Established" in log, log
    assert "PROXY-OTHER HTTP/1.1 403 Forbidden" in log, log
    assert "PROXY-SETTING http://127.0.0.1:3128 None" in log, log
    assert "network: example.com refused (not a package index host" in log, log


@pytest.mark.docker
@pytest.mark.timeout(DOCKER[1].args[0])
def test_build_hosts_star_puts_the_build_on_the_build_network(tmp_path):
    client = docker_support.engine()
    docker_support.base_image()
    repo = GitRepo(tmp_path / "project")
    probe = "import socket\nprint('INTERFACES', sorted(n for _, n in socket.if_nameindex()))\n"
    commit = repo.commit({"probe.py": probe + "raise SystemExit(1)\n"})
    spec = EnvironmentSpec(
        docker_support.PYTHON,
        (),
        project=repo.path / ".git",
        project_commit=commit,
        pre_install=("python probe.py",),
    )
    for hosts, interfaces in [((), "['lo']"), (("*",), "['eth0', 'lo']")]:
        environments = DockerEnvironments(client, tmp_path / "work", DockerConfig(), hosts)
        with pytest.raises(EnvironmentBuildError) as raised:
            environments.get(spec)
        log = raised.value.log_path.read_text()
        assert f"INTERFACES {interfaces}" in log, (hosts, log)


@pytest.mark.docker
@pytest.mark.timeout(DOCKER[1].args[0])
def test_a_build_installs_from_the_index_through_the_proxy(tmp_path):
    client = docker_support.engine()
    docker_support.base_image()
    marker = ("SWT_TEST_MARKER", str(tmp_path))  # a new image: this build really downloads
    spec = EnvironmentSpec(docker_support.PYTHON, ("iniconfig==2.0.0",), env=(marker,))
    environment = DockerEnvironments(client, tmp_path / "work", DockerConfig()).get(spec)
    probe = "import importlib.metadata as m; print(m.version('iniconfig'))"
    output = client.containers.run(
        environment.image_id, ["python", "-c", probe], network_mode="none", remove=True
    )
    assert output.decode().strip() == "2.0.0"
    log = tmp_path / "work" / "docker" / "logs" / f"env-{environment.tag.partition(':')[2]}.log"
    assert "refused" not in log.read_text()
    # the build's bind mounts did not become the image's VOLUMEs (each run container of the
    # image would leave an anonymous volume per VOLUME behind)
    assert not client.images.get(environment.image_id).attrs["Config"].get("Volumes")
    client.images.remove(environment.image_id, force=True)


def _describe(path) -> str:
    """What setuptools-scm asks git of a checkout (its ``git describe`` and dirty flag)."""
    return subprocess.run(
        ["git", "describe", "--dirty", "--tags", "--long", "--match", "*[0-9]*"],
        cwd=path, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


def test_the_exported_project_gets_the_git_metadata_its_worktree_has(tmp_path):
    """A project exported without ``.git`` (``git archive``) and given it by ``vcs_metadata``
    describes itself as a worktree of the repository at that commit does: same tag, distance
    and node, clean; an edit (the backend turns setup.cfg tags off) makes both dirty."""
    repo, base = scm_project.project(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    archive = subprocess.run(["git", "archive", base], cwd=repo.path, capture_output=True)
    tarfile.open(fileobj=io.BytesIO(archive.stdout)).extractall(project)
    subprocess.run(["sh", "-c", vcs_metadata(str(repo.path), base, str(project))], check=True)
    repo.git("checkout", "-q", base)
    assert _describe(project) == _describe(repo.path)
    assert _describe(project).startswith("v0.1.0-1-g")
    (project / "scmfix" / "__init__.py").write_text("edited = True\n")
    assert _describe(project).endswith("-dirty")


def test_a_build_container_gets_the_refs_and_no_configuration_of_the_mirror(tmp_path):
    repo, base = scm_project.project(tmp_path)
    repo.git("remote", "add", "origin", "https://user:secret@example.invalid/scm.git")
    with tarfile.open(fileobj=io.BytesIO(vcs_refs(repo.path / ".git", tmp_path / "log"))) as tar:
        names = tar.getnames()
        config = tar.extractfile("swt/vcs.git/config").read().decode()
        alternates = tar.extractfile("swt/vcs.git/objects/info/alternates").read().decode()
        assert {member.uid for member in tar.getmembers()} == {0}
    assert "swt/vcs.git/refs/tags/v0.1.0" in names or "swt/vcs.git/packed-refs" in names
    assert "secret" not in config and "origin" not in config
    assert alternates == "/mnt/swt-mirror-objects\n"
    assert not any(name.startswith("swt/vcs.git/objects/pack/") for name in names)
    spec = EnvironmentSpec(docker_support.PYTHON, project=repo.path / ".git", project_commit=base)
    script = build_script(spec, DockerConfig(), with_ca=False)
    assert vcs_metadata("/swt/vcs.git", base) in script.splitlines()


@pytest.mark.docker
@pytest.mark.timeout(DOCKER[1].args[0])
def test_a_setuptools_scm_project_builds_with_the_version_of_its_tags(tmp_path):
    """The Docker backend's build of a project whose version setuptools-scm computes from git:
    it builds (setuptools-scm from PyPI), the version is the environment commit's tag."""
    client = docker_support.engine()
    docker_support.base_image()
    repo, base = scm_project.project(tmp_path)
    spec = EnvironmentSpec(docker_support.PYTHON, project=repo.path / ".git", project_commit=base)
    environment = DockerEnvironments(client, tmp_path / "work", DockerConfig()).get(spec)
    probe = "import importlib.metadata as m, scmfix._version as v; "
    probe += "print(m.version('scmfix'), v.version)"
    output = client.containers.run(
        environment.image_id, ["python", "-c", probe], remove=True, network_mode="none"
    )
    installed, written = output.decode().split()
    assert installed == written
    release, _, node = installed.partition("+g")
    assert release == "0.1.1.dev1" and len(node) >= 7 and base.startswith(node), installed


@pytest.mark.docker
@pytest.mark.timeout(DOCKER[1].args[0])
def test_a_package_fetched_from_its_url_is_built_from_its_tree_in_the_image(tmp_path):
    """``url_sources``: the builder's clone of the URL gives the build container the tree of
    the commit it chose (``/swt/url-sources/NAME``), which the optional step installs in place
    of the index's release; no host but the index's is asked from inside."""
    client = docker_support.engine()
    docker_support.base_image()
    repo = GitRepo(tmp_path / "data")
    first = repo.commit(
        {
            "pyproject.toml": '[build-system]\nrequires = ["setuptools"]\n'
            'build-backend = "setuptools.build_meta"\n[project]\nname = "swt-fixture-data"\n'
            'version = "1.0"\n',
            "swt_fixture_data/__init__.py": 'CONTENT = "fetched"\n',
        }
    )
    repo.commit({"swt_fixture_data/__init__.py": 'CONTENT = "later"\n'})
    source = UrlSource("swt-fixture-data", "git+https://h.invalid/data", first, repo.path / ".git")
    marker = ("SWT_TEST_MARKER", str(tmp_path))
    spec = EnvironmentSpec(
        docker_support.PYTHON,
        optional_packages=("swt-fixture-data",),
        env=(marker,),
        pins_override=False,
        url_sources=(source,),
    )
    environment = DockerEnvironments(client, tmp_path / "work", DockerConfig()).get(spec)
    try:
        output = client.containers.run(
            environment.image_id,
            ["python", "-c", "import swt_fixture_data as d; print(d.CONTENT)"],
            network_mode="none",
            remove=True,
        )
        assert output.decode().strip() == "fetched"
        assert environment.left_out == ()
    finally:
        client.images.remove(environment.image_id, force=True)
