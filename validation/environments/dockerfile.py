"""A Dockerfile and its build script: an environment built as the Docker backend builds it."""

from __future__ import annotations

import shlex

from builder.core.config import DockerConfig
from validation.environments.docker_environments import (
    CA_VARIABLES,
    PROJECT_DIR,
    VENV,
    WORKDIR,
    build_exports,
    image_env,
    install_lines,
    vcs_metadata,
)
from validation.environments.environment import URL_SOURCES, EnvironmentSpec
from validation.environments.generated import GENERATED_PLACER
from validation.environments.url_sources import parse

UV_DIR = "/swt/bin"
BUILD_SCRIPT = "build.sh"
"""The script of the build context the Dockerfile runs (:func:`build_script`)."""
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
    uv_version: str,
) -> str:
    """The Dockerfile of ``spec``'s environment: the base image, the build context's files in
    ``/swt/context``, uv, the repository cloned into ``/testbed`` and the project at the
    environment commit in ``/swt/project``, then the context's :data:`BUILD_SCRIPT`
    (:func:`build_script`: the install, the checkout, the generated files); the image's
    variables are the backend's (:func:`image_env`). Every instruction is one line: what is
    longer is a script of the context, never a ``RUN`` argument."""
    label = " ".join((spec.label or "python" + spec.python).split())
    lines = [
        f"# The environment {spec.key()} ({label}), built as swt-builder's Docker backend",
        f"# builds it ({BUILD_SCRIPT}), and the base commit checked out in {WORKDIR}.",
        f"FROM {base_image}",
        f"COPY Dockerfile {BUILD_SCRIPT} {REPO_BUNDLE}* {UV_BINARY}* {CA_BUNDLE}* {CONTEXT_DIR}/",
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
    lines.append(f"RUN sh {CONTEXT_DIR}/{BUILD_SCRIPT}")
    env = image_env(spec)
    lines.append("ENV " + " ".join(f"{k}={_env_value(k, v)}" for k, v in env.items()))
    lines += [f"WORKDIR {WORKDIR}", ""]
    return "\n".join(lines)


def build_script(spec: EnvironmentSpec, base_commit: str) -> str:
    """:data:`BUILD_SCRIPT`, run by the Dockerfile in the image: the build's variables, then
    what the Docker backend's build runs (``docker_environments.build_script``: the project's
    ``.git`` for a version computed from it, the install steps), then ``/testbed`` at
    ``base_commit`` with the files a run's start places in its checkout (the install's
    generated files the environment commit does not track, ``generated_placer.py``), and
    ``/swt`` removed."""
    exports = build_exports(spec, DockerConfig(proxy_passthrough=False), with_ca=False)
    exports.pop("UV_CACHE_DIR", None)
    lines = [
        "#!/bin/sh",
        "set -eu",
        f". {BUILD_ENV}",
        *(f"export {k}={shlex.quote(v)}" for k, v in exports.items()),
    ]
    if spec.project is not None:
        lines.append(vcs_metadata(WORKDIR, spec.project_commit))
    lines += url_source_lines(spec)
    lines += install_lines(spec)
    lines += [
        "rm -rf /root/.cache",
        f"cd {WORKDIR}",
        f"git checkout --quiet {base_commit}",
        "git remote remove origin",
    ]
    if spec.project is not None:
        tools = f"/swt/tools/{GENERATED_PLACER.digest}"
        lines.append(f"mkdir -p {tools}")
        for name, data in sorted(GENERATED_PLACER.contents.items()):
            lines += _heredoc(f"cat > {tools}/{name}", data.decode("utf-8"))
        placer = f"{tools}/{GENERATED_PLACER.script}"
        lines.append(f"{VENV}/bin/python {placer} {spec.project_commit}")
    lines += ["cd /", "rm -rf /swt", ""]
    return "\n".join(lines)


def url_source_lines(spec: EnvironmentSpec) -> list[str]:
    """The lines placing each of ``spec.url_sources`` where the install finds it
    (``/swt/url-sources/NAME``): its remote cloned, the commit the builder fetched taken."""
    lines = []
    for source in spec.url_sources:
        remote = parse(source.url).remote
        clone = f"/swt/url-clones/{source.name}.git"
        tree = f"{source.commit}:{source.subdirectory}" if source.subdirectory else source.commit
        place = f"/swt/{URL_SOURCES}/{source.name}"
        lines += [
            f"git clone --quiet --bare {shlex.quote(remote)} {clone}",
            f"mkdir -p {place}",
            f"git --git-dir {clone} archive {shlex.quote(tree)} | tar -x -C {place}",
        ]
    return lines


def _heredoc(command: str, text: str) -> list[str]:
    """``command`` reading ``text`` verbatim from a quoted here-document (a delimiter the text
    does not hold)."""
    delimiter = "SWT_EOF"
    while delimiter in text:
        delimiter += "_"
    body = text if text.endswith("\n") else text + "\n"
    return [f"{command} <<'{delimiter}'", *body[:-1].split("\n"), delimiter]


def _build_env() -> str:
    """The shell command writing :data:`BUILD_ENV`: each of ``CA_VARIABLES`` naming the context's
    CA bundle when it has one, else nothing (the base image's own CAs)."""
    bundle = f"{CONTEXT_DIR}/{CA_BUNDLE}"
    exports = f"printf 'export %s={bundle}\\n' {' '.join(CA_VARIABLES)}"
    return f"{{ if [ -f {bundle} ]; then {exports}; fi; }} > {BUILD_ENV}"


def _env_value(name: str, value: str) -> str:
    """A value for an ``ENV key=value`` line: double-quoted, with what Docker escapes escaped;
    ValueError for a line break (no ``ENV`` line can hold one)."""
    if "\n" in value or "\r" in value:
        raise ValueError(f"the image variable {name} holds a line break: no ENV line can hold it")
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    return f'"{escaped}"'


__all__ = [
    "BUILD_SCRIPT",
    "CA_BUNDLE",
    "CONTEXT_DIR",
    "REPO_BUNDLE",
    "UV_BINARY",
    "build_script",
    "dockerfile",
    "repository_url",
    "VENV",
]
