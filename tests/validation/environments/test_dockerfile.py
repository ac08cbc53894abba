"""An exported task's Dockerfile is one valid instruction a line whatever its scripts hold; its
build script runs the backend's install steps verbatim, with the project's ``.git``, and places
the generated files a run's start places."""

from __future__ import annotations

import io
import shlex
import subprocess

import pytest
from dockerfile_parse import DockerfileParser

from validation.environments.docker_environments import (
    PROJECT_DIR,
    VENV,
    WORKDIR,
    environment_steps,
    install_lines,
    vcs_metadata,
)
from validation.environments.dockerfile import BUILD_SCRIPT, build_script, dockerfile
from validation.environments.environment import RETRY, RETRY_NAME, EnvironmentSpec
from validation.environments.generated import GENERATED_PLACER

INSTRUCTIONS = {"FROM", "COPY", "RUN", "ENV", "WORKDIR"}
HOSTILE = 'it\'s "quoted" $HOME `date` \\ back\\\nslash # not a comment\nRUN echo injected\n'
"""Text that breaks a Dockerfile written as one: quotes, expansions, backslashes, a line that
reads as an instruction."""


def _spec(git_repo, **fields) -> EnvironmentSpec:
    commit = git_repo.commit({"pyproject.toml": "[project]\nname = 'x'\nversion = '1'\n"})
    return EnvironmentSpec(
        "3.11", ("pytest",), project=git_repo.path / ".git", project_commit=commit, **fields
    )


def _hostile_spec(git_repo) -> EnvironmentSpec:
    """Every script an install can have, each holding :data:`HOSTILE`: the optional packages'
    multi-line ``sh -c`` script, a pre-install command, a variable."""
    return _spec(
        git_repo,
        optional_packages=("pytest-xdist", "hypothesis"),
        pre_install=(f"printf %s {shlex.quote(HOSTILE)} > hostile.txt",),
        env=(("SWT_HOSTILE", 'it\'s "quoted" $HOME `date` \\ back\\slash'),),
        install_command="python -m pip install .\necho second line",
    )


def _instructions(text: str) -> list[dict]:
    parser = DockerfileParser(fileobj=io.BytesIO())  # in memory: no Dockerfile written anywhere
    parser.content = text
    return [item for item in parser.structure if item["instruction"] != "COMMENT"]


def test_the_installs_repair_script_is_written_once_and_run_by_name(git_repo, tmp_path):
    """Every uv install runs :data:`RETRY` (a few KB, the lenient metadata reader inside): a
    build script sets it once and each step runs it by name, as its echo shows it."""
    lines = install_lines(_hostile_spec(git_repo))
    assert lines[0] == f"{RETRY_NAME}={shlex.quote(RETRY)}"
    script = "\n".join(lines)
    assert script.count("def lenient_requirement") == 1
    runs = [line for line in lines[1:] if f'"${RETRY_NAME}"' in line]
    assert len(runs) >= 4  # the install steps, each echoed and run
    # run by name, the variable is the script: a stand-in uv that fails once as uv does when
    # no release is dated, then installs
    uv = tmp_path / "uv"
    uv.write_text(
        '#!/bin/sh\necho "$@" >> "$0.calls"\n'
        'case " $* " in *" late=2100-01-01T00:00:00Z "*) exit 0;; esac\n'
        "echo 'hint: `late` was filtered by `exclude-newer` to only include ...' >&2; exit 1\n"
    )
    uv.chmod(0o755)
    body = f'{lines[0]}\n( sh -c "${RETRY_NAME}" swt-install {uv} pip install late )\n'
    done = subprocess.run(["sh", "-c", body], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "# undated: late" in done.stderr
    assert len((tmp_path / "uv.calls").read_text().splitlines()) == 2


def test_every_line_of_the_dockerfile_is_one_instruction_whatever_the_scripts(git_repo):
    spec = _hostile_spec(git_repo)
    argvs = [step.argv for step in environment_steps(spec)]
    assert any("\n" in arg for argv in argvs for arg in argv)  # a multi-line script
    text = dockerfile(spec, base_image="swt-base:python3.11", repo="owner/name", uv_version="1")
    lines = text.splitlines()
    for number, line in enumerate(lines):
        assert not line.endswith("\\"), f"line {number + 1} continues: {line}"
        assert line.startswith("#") or line.split(" ", 1)[0] in INSTRUCTIONS, line
    parsed = _instructions(text)
    assert [item["instruction"] for item in parsed] == [
        "FROM", "COPY", "RUN", "RUN", "RUN", "ENV", "WORKDIR",
    ]  # fmt: skip
    assert [item["startline"] for item in parsed] == [item["endline"] for item in parsed]
    assert parsed[1]["value"].split()[:2] == ["Dockerfile", BUILD_SCRIPT]
    assert parsed[4]["value"] == f"sh /swt/context/{BUILD_SCRIPT}"
    assert "injected" not in text and "pytest-xdist" not in text  # the scripts are elsewhere
    env = _instructions(text)[5]
    assert "SWT_HOSTILE" in env["value"]


def test_an_image_variable_with_a_line_break_is_refused_not_written(git_repo):
    spec = _spec(git_repo, env=(("TWO_LINES", "a\nb"),))
    with pytest.raises(ValueError, match="TWO_LINES"):
        dockerfile(spec, base_image="swt-base:python3.11", repo="owner/name", uv_version="1")


def test_the_build_script_is_the_backends_install_verbatim_and_valid_sh(git_repo, tmp_path):
    spec = _hostile_spec(git_repo)
    script = build_script(spec, "b" * 40)
    path = tmp_path / BUILD_SCRIPT
    path.write_text(script)
    checked = subprocess.run(["sh", "-n", str(path)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    lines = script.splitlines()
    body = "\n".join(install_lines(spec)).splitlines()
    start = lines.index(body[0])
    assert lines[start : start + len(body)] == body
    # the project's .git comes before the install, from the repository cloned in /testbed
    assert lines.index(vcs_metadata(WORKDIR, spec.project_commit)) < start
    assert f"git checkout --quiet {'b' * 40}" in lines
    placer = f"{VENV}/bin/python /swt/tools/{GENERATED_PLACER.digest}/{GENERATED_PLACER.script}"
    assert lines[-3] == f"{placer} {spec.project_commit}"
    assert lines[-2:] == ["cd /", "rm -rf /swt"]


def test_the_build_script_writes_the_placers_files_exactly(git_repo, tmp_path):
    """Its here-documents, run by sh, give the runtime files' bytes (the placer and the module
    it imports)."""
    script = build_script(_spec(git_repo), "b" * 40)
    folder = f"/swt/tools/{GENERATED_PLACER.digest}"
    heredocs = script.split("\n")
    first = next(i for i, line in enumerate(heredocs) if line.startswith(f"cat > {folder}/"))
    last = max(i for i, line in enumerate(heredocs) if line.startswith(f"{VENV}/bin/python"))
    part = "\n".join(heredocs[first:last]).replace(folder, str(tmp_path)) + "\n"
    subprocess.run(["sh", "-c", part], check=True)
    for name, data in GENERATED_PLACER.contents.items():
        assert (tmp_path / name).read_bytes() == data


def test_a_spec_without_project_gets_no_git_and_no_placing(tmp_path):
    spec = EnvironmentSpec("3.11", ("pytest",))
    script = build_script(spec, "c" * 40)
    assert "git clone" not in script and GENERATED_PLACER.script not in script
    text = dockerfile(spec, base_image="python:3.11-slim", repo="owner/name", uv_version="1")
    assert PROJECT_DIR not in text
