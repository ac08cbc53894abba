"""The Docker backend on a real engine: environment images, isolated runs, parity with local."""

from __future__ import annotations

import dataclasses
import itertools
import socket
import subprocess
import threading

import pytest

from builder.core.config import DockerConfig, ValidationConfig
from recipes.swe_bench import to_candidate
from tests.support import docker as docker_support
from tests.support import metadata_project as metadata_fixture
from tests.support.git import GitRepo
from tests.support.records import swe_record
from tests.support.tiers import DOCKER
from validation.environments.docker_engine import KIND, SPEC_HASH, label_filter
from validation.environments.docker_environments import build_script, image_hash
from validation.environments.environment import EnvironmentSpec
from validation.environments.reference import read_reference
from validation.runs.backends import make_backend
from validation.runs.backends.docker import DockerBackend
from validation.stage import ValidateStage

pytestmark = DOCKER

CODE = "def add(a, b):\n    return a - b\n\n\ndef double(x):\n    return 2 * x\n"
TESTS = "from pkg import add, double\n\n\ndef test_double():\n    assert double(2) == 4\n"
ADD_TEST = TESTS + "\n\ndef test_add():\n    assert add(1, 2) == 3\n"
FIXED = CODE.replace("a - b", "a + b")
SPEC = EnvironmentSpec(docker_support.PYTHON, ("pytest",))
_names = itertools.count()


@pytest.fixture(scope="module")
def client():
    client = docker_support.engine()
    docker_support.base_image()
    return client


@pytest.fixture(scope="module")
def work_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("docker-work")


@pytest.fixture(scope="module")
def backend(client, work_dir):
    return DockerBackend(work_dir, DockerConfig())


@pytest.fixture(scope="module")
def environment(backend):
    return backend.prepare(SPEC)


@pytest.fixture
def session(backend, environment, git_repo, tmp_path):
    base = git_repo.commit({"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS})
    with backend.session(environment, git_repo.path / ".git", base, tmp_path / "run") as opened:
        yield opened


def test_environment_image_is_reused_when_its_hash_matches(client, backend, environment):
    again = backend.prepare(SPEC)
    assert again.image_id == environment.image_id
    digest = client.images.get(environment.tag).labels[SPEC_HASH]
    same = client.images.list(filters={"label": f"{SPEC_HASH}={digest}"})
    assert [image.id for image in same] == [environment.image_id]
    builds = label_filter("build")  # of this environment: another job's may be on the daemon
    builds["label"] = [*builds["label"], f"{SPEC_HASH}={digest}"]
    assert client.containers.list(all=True, filters=builds) == []


def test_environment_image_labels_say_what_built_it(client, environment):
    image = client.images.get(environment.tag)
    base = docker_support.base_image()
    assert image.labels[KIND] == "environment"
    assert image.labels["org.swt-builder.created-by"] == "swt-builder"
    assert image.labels["org.swt-builder.toolkit-version"]
    assert image.labels["org.swt-builder.spec-key"] == SPEC.key()
    assert image.labels["org.swt-builder.base-image"] == base.id
    assert environment.tag == f"swt-env:{image_hash(SPEC, base.id)}"
    assert image.labels[SPEC_HASH] == image_hash(SPEC, base.id)


def test_image_hash_changes_with_what_defines_the_image():
    assert image_hash(SPEC, "sha256:a") != image_hash(SPEC, "sha256:b")
    other = dataclasses.replace(SPEC, packages=("pytest", "attrs"))
    assert image_hash(other, "sha256:a") != image_hash(SPEC, "sha256:a")
    assert image_hash(dataclasses.replace(SPEC, label="x@1"), "sha256:a") == image_hash(
        SPEC, "sha256:a"
    )


def test_build_time_settings_stay_out_of_the_image(client, backend, monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("NO_PROXY", "*")  # the registry is still reached directly
    spec = EnvironmentSpec(docker_support.PYTHON, (), env=(("SWT_FIXTURE", "proxy"),))
    script = build_script(spec, backend.settings, with_ca=True)
    assert "export HTTPS_PROXY=http://proxy.invalid:3128" in script
    assert "export SSL_CERT_FILE=/swt/ca-bundle.crt" in script
    environment = backend.prepare(spec)
    image_env = client.images.get(environment.tag).attrs["Config"]["Env"]
    assert "SWT_FIXTURE=proxy" in image_env
    assert not any(item.split("=")[0] in ("HTTPS_PROXY", "NO_PROXY", "SSL_CERT_FILE")
                   for item in image_env)  # fmt: skip
    output = client.containers.run(
        environment.image_id, ["sh", "-c", "ls -d /swt || echo absent"], remove=True
    )
    assert output.strip() == b"absent"


def test_run_reads_results_back_and_writes_the_log(session, tmp_path):
    session.apply(_test_patch(session.tree), "test patch")
    report = session.scratch_path("report.xml")
    command = ["python", "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={report}",
               "tests/test_pkg.py"]  # fmt: skip
    completed = session.run(command, tmp_path / "logs" / "run.log", timeout_s=120)
    assert completed.exit_code == 1 and not completed.timed_out
    xml = session.read_scratch("report.xml")
    assert b'name="test_add"' in xml and b"<failure" in xml
    assert "1 failed, 1 passed" in (tmp_path / "logs" / "run.log").read_text()
    assert session.read_scratch("absent.xml") is None


def _test_patch(tree) -> str:
    """The test patch as a diff against the session's tree (made with git in that tree)."""
    (tree / "tests" / "test_pkg.py").write_text(ADD_TEST)
    diff = subprocess.run(["git", "diff"], cwd=tree, capture_output=True, text=True).stdout
    subprocess.run(["git", "checkout", "--", "."], cwd=tree, check=True)
    return diff


def test_timeout_kills_the_container(client, session, tmp_path):
    command = ["python", "-c", "print('started', flush=True); import time; time.sleep(600)"]
    completed = session.run(command, tmp_path / "slow.log", timeout_s=3)
    assert completed.timed_out and completed.exit_code is None
    assert "started" in (tmp_path / "slow.log").read_text()
    assert len(session.containers) == 1
    left = client.containers.list(all=True, filters={"id": session.containers[0]})
    assert left == []  # killed, then removed


PROBE = """
import os, socket, sys
print("interfaces", sorted(os.listdir("/sys/class/net")))
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5).recv(5)
    print("reached")
except OSError as error:
    print("unreachable", error)
"""


def test_test_runs_have_no_network(client, environment, session, tmp_path):
    gateway = docker_support.bridge_gateway(client)
    server = socket.create_server((gateway, 0))
    port = server.getsockname()[1]
    accepted = []

    def serve():
        server.settimeout(30)
        try:
            connection, _ = server.accept()
        except TimeoutError:
            return
        accepted.append(True)
        connection.sendall(b"hello")
        connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        command = ["python", "-c", PROBE, gateway, str(port)]
        completed = session.run(command, tmp_path / "net.log", timeout_s=60)
        log = (tmp_path / "net.log").read_text()
        assert completed.exit_code == 0, log
        assert "interfaces ['lo']" in log and "unreachable" in log
        assert accepted == []
        # the same probe from a container with a network does reach the server: the test can fail
        control = client.containers.run(
            environment.image_id, command, network_mode="bridge", remove=True
        )
        assert b"reached" in control
        thread.join(timeout=30)
        assert accepted == [True]
    finally:
        server.close()


def _stage_case(tmp_path, backend_name: str, work_dir):
    repo = GitRepo(tmp_path / f"repo{next(_names)}")
    base = repo.commit({"pkg/__init__.py": CODE, "tests/test_pkg.py": TESTS})
    test_patch = repo.diff({"tests/test_pkg.py": ADD_TEST})
    patch = repo.diff({"pkg/__init__.py": FIXED})
    name = f"fixture/docker{next(_names)}"
    candidate = to_candidate(swe_record(name, 1, base, patch, test_patch))
    settings = ValidationConfig(
        backend=backend_name, python=docker_support.PYTHON, dated=False, repetitions=1,
        timeout_s=120,
    )  # fmt: skip
    stage = ValidateStage(settings, work_dir / backend_name, {name: str(repo.path)})
    return stage, stage.process(candidate)


def test_docker_and_local_validate_a_candidate_alike(client, tmp_path, work_dir):
    docker_stage, on_docker = _stage_case(tmp_path, "docker", work_dir)
    local_stage, on_local = _stage_case(tmp_path, "local", work_dir)
    assert docker_stage.backend.name == "docker" and local_stage.backend.name == "local"
    assert on_docker.verdict.kept, on_docker.verdict
    assert on_local.verdict.kept, on_local.verdict
    assert on_docker.output.FAIL_TO_PASS == on_local.output.FAIL_TO_PASS
    assert on_docker.output.PASS_TO_PASS == on_local.output.PASS_TO_PASS
    assert on_docker.output.FAIL_TO_PASS == ("tests/test_pkg.py::test_add",)
    assert on_docker.output.run_metadata["backend"] == "docker"


def test_auto_picks_docker_when_a_daemon_answers_else_local(client, work_dir, monkeypatch):
    auto = ValidationConfig(backend="auto")
    assert make_backend(auto, work_dir).name == "docker"
    monkeypatch.setattr("validation.runs.backends.base_images_buildable", lambda: False)
    assert make_backend(auto, work_dir).name == "local"  # no way to a base image
    own = DockerConfig(base_images={"3.11": "python:3.11-slim"})
    chosen = make_backend(auto, work_dir, own)
    assert isinstance(chosen, DockerBackend) and chosen.settings == own
    monkeypatch.setenv("DOCKER_HOST", f"unix://{work_dir}/no-daemon.sock")
    assert make_backend(auto, work_dir).name == "local"


PYPROJECT = metadata_fixture.PYPROJECT.format(version="0.1")


def test_project_install_pre_install_and_env_from_the_spec(client, backend, tmp_path):
    repo = GitRepo(tmp_path / "project")
    commit = repo.commit({"pyproject.toml": PYPROJECT, "pkg/__init__.py": CODE})
    spec = EnvironmentSpec(
        docker_support.PYTHON,
        (),
        project=repo.path / ".git",
        project_commit=commit,
        pre_install=("test -f pyproject.toml",),
        env=(("SWT_FIXTURE", "on"),),
        label="fixture/pkg@0.1",
    )
    environment = backend.prepare(spec)
    image = client.images.get(environment.tag)
    assert image.labels["org.swt-builder.spec-label"] == "fixture/pkg@0.1"
    probe = "import os, pkg; print(pkg.__file__, os.environ['SWT_FIXTURE'])"
    output = client.containers.run(
        environment.image_id, ["python", "-c", probe], network_mode="none", remove=True,
        working_dir="/",
    ).decode()  # fmt: skip
    assert output.split() == ["/opt/swt-env/lib/python3.11/site-packages/pkg/__init__.py", "on"]


def test_runs_see_the_base_commits_package_metadata(client, backend, tmp_path):
    """Parity with the local backend (tests/validation/test_metadata.py): the shim runs first
    in every container, so the version is the base commit's and the entry points remain."""
    repo, base, environment_commit = metadata_fixture.project(tmp_path, "1.4.2", "1.4.1")
    spec = EnvironmentSpec(
        docker_support.PYTHON, (), project=repo.path / ".git", project_commit=environment_commit
    )
    environment = backend.prepare(spec)
    lines = metadata_fixture.probe(backend, environment, repo, base, tmp_path / "run")
    assert lines[1:3] == ["1.4.1", "['pkg:plugin']"]
    assert lines[3] == "/testbed/pkg/__init__.py"


HTTPBIN_PROBE = """
import os, urllib.request
url = os.environ["HTTPBIN_URL"]
with urllib.request.urlopen(url.rstrip("/") + "/get", timeout=30) as reply:
    print("status", reply.status, url.split(":")[1], os.environ.get("PYTHONPATH"))
"""


def test_a_run_serves_httpbin_on_the_containers_own_loopback(client, backend, git_repo, tmp_path):
    """The services' shim in a container as in the local sandbox: httpbin answers on the
    container's loopback with no network, and the run sets no ``PYTHONPATH`` (the checkout is
    found through a ``.pth`` file)."""
    spec = EnvironmentSpec(docker_support.PYTHON, ("httpbin",), services=("httpbin",))
    environment = backend.prepare(spec)
    base = git_repo.commit({"pkg/__init__.py": CODE})
    with backend.session(environment, git_repo.path / ".git", base, tmp_path / "run") as session:
        session.services = ("httpbin",)
        completed = session.run(["python", "-c", HTTPBIN_PROBE], tmp_path / "probe.log", 120)
        served = (tmp_path / "probe.log").read_text()
        assert completed.exit_code == 0, served
        assert "status 200 //127.0.0.1 None" in served
        session.services = ()  # without the service nothing answers: the probe can fail
        completed = session.run(["python", "-c", HTTPBIN_PROBE], tmp_path / "none.log", 120)
        assert completed.exit_code != 0 and "HTTPBIN_URL" in (tmp_path / "none.log").read_text()


REFERENCE_FILE = f"""\
dependencies:
  - python={docker_support.PYTHON}.9=h955ad1f_0
  - make=4.3=hd18ef5c_1
  - aws-c-common=0.9.28=hb9d3cd8_0
  - pip:
      - iniconfig==2.0.0
"""


def test_a_reference_environments_system_packages_are_in_its_image(client, backend, tmp_path):
    """A reference environment's conda system packages, mapped to Debian's, are installed in
    the image (``image_packages``); what has no Debian package is only named."""
    path = tmp_path / "og" / "acme__widgets" / "7" / "environment.yml"
    path.parent.mkdir(parents=True)
    path.write_text(REFERENCE_FILE)
    reference = read_reference(path, tmp_path / "og")
    assert reference.debian == ("make",) and "aws-c-common=0.9.28" in dict(reference.unmapped)
    spec = EnvironmentSpec(
        reference.python, reference.pins, image_packages=reference.debian, pins_override=True
    )
    environment = backend.prepare(spec)
    probe = (
        "import importlib.metadata as m, shutil; "
        "print(m.version('iniconfig'), shutil.which('make'))"
    )
    output = client.containers.run(
        environment.image_id, ["python", "-c", probe], network_mode="none", remove=True
    ).decode()
    assert output.split() == ["2.0.0", "/usr/bin/make"]
    plain = backend.prepare(dataclasses.replace(spec, image_packages=()))
    output = client.containers.run(
        plain.image_id, ["python", "-c", probe], network_mode="none", remove=True
    ).decode()
    assert output.split() == ["2.0.0", "None"]  # the base image has no make: the test can fail
