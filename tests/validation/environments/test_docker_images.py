"""Base images built offline, ``swt-builder images`` list/prune, on a real Docker engine."""

from __future__ import annotations

import pytest
from docker.errors import ImageNotFound

from builder.cli import main
from builder.core.config import DockerConfig
from tests.support import docker as docker_support
from tests.support.tiers import DOCKER
from validation.environments.docker_engine import KIND, PYTHON, SCHEMA, SUITE, labels
from validation.environments.docker_environments import ENV_SCHEMA, DockerEnvironments
from validation.environments.environment import EnvironmentSpec
from validation.environments.images import BASE_SCHEMA, BaseImageError, build_base_image, prune

pytestmark = DOCKER


@pytest.fixture(scope="module")
def client():
    return docker_support.engine()


@pytest.fixture(scope="module")
def base(client):
    return docker_support.base_image()


def test_base_image_is_debian_with_python_git_and_labels(client, base):
    assert base.labels[KIND] == "base"
    assert base.labels[PYTHON] == docker_support.PYTHON
    assert base.labels[SUITE] == "bookworm"
    assert base.labels[SCHEMA] == BASE_SCHEMA
    assert "swt-base:python3.11" in base.tags
    output = client.containers.run(
        base.id,
        ["sh", "-c", "python3 --version && git --version && ls /etc/ssl/certs | head -1"],
        remove=True,
        network_mode="none",
    ).decode()
    assert "Python 3.11." in output and "git version" in output


def test_a_python_no_debian_suite_ships_asks_for_a_named_base_image(client, tmp_path):
    with pytest.raises(BaseImageError, match="base_images"):
        build_base_image(client, "3.7", settings=DockerConfig(), work_dir=tmp_path)


def _environment(client, work_dir, marker: str):
    spec = EnvironmentSpec(docker_support.PYTHON, (), env=(("SWT_TEST_MARKER", marker),))
    return DockerEnvironments(client, work_dir, DockerConfig()).get(spec)


def test_prune_removes_what_no_spec_needs_then_what_is_over_budget(client, base, tmp_path):
    first = _environment(client, tmp_path, "first")
    second = _environment(client, tmp_path, "second")
    leftover = client.containers.create(base.id, ["true"], labels=labels("run"))
    ours = {first.image_id, second.image_id}
    first_hash = first.tag.partition(":")[2]
    huge = 2**50

    dry = prune(client, budget_bytes=huge, schema=ENV_SCHEMA, keep={first_hash}, only=ours,
                dry_run=True)  # fmt: skip
    assert dry.removed == [second.tag] and client.images.get(second.tag)

    young = prune(client, budget_bytes=huge, schema=ENV_SCHEMA, only=ours, dry_run=True)
    assert leftover.short_id not in young.containers  # it might belong to a live run

    report = prune(
        client, budget_bytes=huge, schema=ENV_SCHEMA, keep={first_hash}, only=ours,
        container_grace_s=0,
    )  # fmt: skip
    assert report.removed == [second.tag]
    assert report.reasons[second.tag] == "no current spec needs it"
    assert leftover.short_id in report.containers
    with pytest.raises(ImageNotFound):
        client.images.get(second.tag)
    assert client.images.get(first.tag).id == first.image_id

    over = prune(client, budget_bytes=1, schema=ENV_SCHEMA, only=ours)
    assert over.removed == [first.tag]
    assert "budget" in over.reasons[first.tag]
    assert client.images.get(base.id).id == base.id  # base images stay unless --all


def test_images_list_shows_the_base_image(client, base, tmp_path, capsys):
    assert main(["images", "list", "--work-dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("base") and "swt-base:python3.11" in line for line in lines)


def test_images_base_reuses_an_existing_base_image(client, base, tmp_path, capsys):
    assert main(["images", "base", "--python", "3.11", "--work-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.split() == ["swt-base:python3.11", base.id]
    assert client.images.get("swt-base:python3.11").id == base.id


def test_prune_says_when_what_it_keeps_is_over_the_budget(client, base, tmp_path, capsys):
    # a budget below the base image alone: nothing prune may remove brings it under
    argv = ["images", "prune", "--dry-run", "--work-dir", str(tmp_path)]
    assert main([*argv, "--set", "docker.disk_budget_gb=0.01"]) == 0
    out = capsys.readouterr().out
    assert "MB over the budget: what is left is base images and images in use" in out
    assert main([*argv, "--set", "docker.disk_budget_gb=1000"]) == 0
    assert "over the budget" not in capsys.readouterr().out
