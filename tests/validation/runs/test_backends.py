"""The backend registry: each backend is built from the configuration sections it reads."""

from __future__ import annotations

import sys

import pytest

from builder.core.config import ConfigError, DockerConfig, LimitsConfig, ValidationConfig
from validation.runs.backends import BACKENDS, make_backend
from validation.runs.backends.docker import DockerBackend
from validation.runs.backends.local import Limits, LocalBackend


def test_local_is_built_from_the_validation_section(tmp_path):
    settings = ValidationConfig(
        backend="local",
        env_dir=str(tmp_path / "envs"),
        python_search_paths=[sys.executable],
        limits=LimitsConfig(cpu_s=7, network=True),
    )
    backend = make_backend(settings, tmp_path / "work", DockerConfig(memory="1g"))
    assert isinstance(backend, LocalBackend) and backend.work_dir == tmp_path / "work"
    assert backend.limits == Limits(
        cpu_s=7, memory_mb=16384, processes=4096, file_size_mb=4096, network=True
    )
    assert backend.environments.root == tmp_path / "envs"
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert backend.available_pythons() == [here]


def test_local_keeps_its_environments_under_the_work_dir_by_default(tmp_path):
    backend = make_backend(ValidationConfig(backend="local"), tmp_path)
    assert backend.environments.root == tmp_path / "envs"
    assert backend.limits == Limits(**LimitsConfig().model_dump())


def test_docker_is_built_from_the_docker_section_without_a_daemon(tmp_path):
    docker = DockerConfig(memory="2g", pids_limit=64)
    backend = make_backend(ValidationConfig(backend="docker"), tmp_path, docker)
    assert isinstance(backend, DockerBackend) and backend.settings == docker
    assert backend._client is None  # connecting waits for the first use
    assert make_backend(ValidationConfig(backend="docker"), tmp_path).settings == DockerConfig()


def test_every_registered_backend_builds_from_the_configuration(tmp_path):
    for name, backend_class in BACKENDS.items():
        backend = backend_class.from_config(tmp_path, ValidationConfig(), DockerConfig())
        assert isinstance(backend, backend_class) and backend.name == name


def test_an_unknown_backend_is_a_configuration_error(tmp_path):
    unknown = ValidationConfig().model_copy(update={"backend": "podman"})
    with pytest.raises(ConfigError, match="unknown backend 'podman'"):
        make_backend(unknown, tmp_path)
