"""A Dockerfile building an environment as the Docker backend does, the base commit checked out."""

from __future__ import annotations

import shlex

from builder.core.config import DockerConfig
from validation.environments.docker_environments import (
    CA_VARIABLES,
    PROJECT_DIR,
    VENV,
    WORKDIR,
    build_exports,
    environment_steps,
    image_env,
)
from validation.environments.environment import EnvironmentSpec

UV_DIR = "/swt/bin"
CONTEXT_DIR = "/swt/context"
REPO_BUNDLE = "repo.bundle"
"""A git bundle of the repository, optional in the build context: with it the build clones no
remote (the toolkit's own builds give one; the harness's context is the task directory)."""
UV_BINARY = "uv"
"""The uv binary, optional in the build context: without it the build installs ``uv==VERSION``
from the package index."""
CA_BUNDLE = "ca-bundle.crt"
"""A CA bundle, optional in the build context: with it the build's clients (pip, uv, git) trust
these CAs, as the Docker backend's builds trust ``docker.ca_bundle`` (a machine whose TLS is
intercepted needs it); the image's own variables never name it."""
BUILD_ENV = "/swt/build.env"
"""The build's own variables (the CA bundle's, when the context has one), sourced by every step
that reaches the network: the image's variables stay :func:`image_env`'s."""


def repository_url(repo: str) -> str:
    return f"https://github.com/{repo}.git"


def dockerfile(
    spec: EnvironmentSpec,
    *,
    base_image: str,
    repo: str,
    base_commit: str,
    uv_version: str,
) -> str:
    """The Dockerfile of ``spec``'s environment with ``repo`` checked out at ``base_commit`` in
    ``/testbed``: the base image, the build's variables, the project at the environment commit
    in ``/swt/project``, then :func:`environment_steps` (the backend's own install commands, with
    the same uv), run in one layer; the image's variables are the backend's
    (:func:`image_env`)."""
    exports = build_exports(spec, DockerConfig(proxy_passthrough=False), with_ca=False)
    exports.pop("UV_CACHE_DIR", None)
    lines = [
        f"# The environment {spec.key()} ({spec.label or 'python' + spec.python}), built as",
        "# swt-builder's Docker backend builds it, and the base commit checked out in /testbed.",
        f"FROM {base_image}",
        f"COPY Dockerfile {REPO_BUNDLE}* {UV_BINARY}* {CA_BUNDLE}* {CONTEXT_DIR}/",
    ]
    uv = f"{UV_DIR}/uv"
    install_uv = (
        f"mkdir -p {UV_DIR} && {_build_env()} && . {BUILD_ENV} && "
        f"if [ -f {CONTEXT_DIR}/{UV_BINARY} ]; then "
        f"cp {CONTEXT_DIR}/{UV_BINARY} {uv}; else "
        f"python{spec.python} -m venv /swt/uv-venv && "
        f"/swt/uv-venv/bin/python -m pip install --quiet uv=={uv_version} && "
        f"ln -s /swt/uv-venv/bin/uv {uv}; fi"
    )
    lines.append(f"RUN {install_uv}")
    bundle = f"{CONTEXT_DIR}/{REPO_BUNDLE}"
    source = (
        f". {BUILD_ENV} && if [ -f {bundle} ]; then source={bundle}; "
        f"else source={repository_url(repo)}; fi"
    )
    clone = f'{source} && git clone --quiet --no-checkout "$source" {WORKDIR}'
    if spec.project is not None:
        clone += (
            f" && mkdir -p {PROJECT_DIR} && git -C {WORKDIR} archive {spec.project_commit}"
            f" | tar -x -C {PROJECT_DIR}"
        )
    lines.append(f"RUN {clone}")
    script = [
        "set -eu",
        f". {BUILD_ENV}",
        *(f"export {k}={shlex.quote(v)}" for k, v in exports.items()),
    ]
    for step in environment_steps(spec):
        command = shlex.join(step.argv)
        if step.argv[0] == "apt-get":
            command = f"apt-get update -q && {command}"
        if step.in_project:
            command = f"cd {PROJECT_DIR} && {command}"
        script.append(f"( {command} )")
    script.append("rm -rf /root/.cache")
    lines.append("RUN " + " \\\n && ".join(script))
    checkout = (
        f"git -C {WORKDIR} checkout --quiet {base_commit} && git -C {WORKDIR} remote remove origin"
        f" && rm -rf /swt"
    )
    lines.append(f"RUN {checkout}")
    env = image_env(spec)
    lines.append("ENV " + " ".join(f"{k}={_env_value(v)}" for k, v in env.items()))
    lines += [f"WORKDIR {WORKDIR}", ""]
    return "\n".join(lines)


def _build_env() -> str:
    """The shell command writing :data:`BUILD_ENV`: each of ``CA_VARIABLES`` naming the context's
    CA bundle when it has one, else nothing (the base image's own CAs)."""
    bundle = f"{CONTEXT_DIR}/{CA_BUNDLE}"
    exports = f"printf 'export %s={bundle}\\n' {' '.join(CA_VARIABLES)}"
    return f"{{ if [ -f {bundle} ]; then {exports}; fi; }} > {BUILD_ENV}"


def _env_value(value: str) -> str:
    """A value for an ``ENV key=value`` line: double-quoted, with what Docker escapes escaped."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    return f'"{escaped}"'


__all__ = [
    "CA_BUNDLE",
    "CONTEXT_DIR",
    "REPO_BUNDLE",
    "UV_BINARY",
    "dockerfile",
    "repository_url",
    "VENV",
]
