"""Code under test that prints a line shaped like a launcher's refusal and exits 1 (a
``sitecustomize.py`` of its test patch, or the project's own code run by a build step): on the
local backend its run or build is its own failure, stored as a verdict, never a fault of the
machine (the sandbox runs ``true`` for no record); three such records first do not stop a
build."""

import json
import sys

import pytest

from tests.support.git import GitRepo
from tests.support.hostile import Project, build_local, hostile_tests, reason, stage
from validation.environments.environment import (
    EnvironmentBuildError,
    EnvironmentSpec,
    Interpreters,
    LocalEnvironments,
)

FORGED = {
    "bwrap": "bwrap: Can't create file at /root/.ssh: Is a directory",
    "setpriv": "setpriv: setresuid failed: Operation not permitted",
    "prlimit": "prlimit: failed to set the NPROC resource limit: Operation not permitted",
    "unshare": "unshare: unshare failed: Operation not permitted",
}
SITECUSTOMIZE = (
    "import os, sys\nsys.stderr.write({line!r} + '\\n')\nsys.stderr.flush()\nos._exit(1)\n"
)


def _forging(project: Project, case: str, line: str):
    files = {**hostile_tests(""), "sitecustomize.py": SITECUSTOMIZE.format(line=line)}
    return project.candidate(case, project.diff(files))


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return Project(tmp_path_factory.mktemp("hostile-forged") / "repo", repo="hostile/forged")


@pytest.fixture(scope="module")
def local(work_dir, env_dir, project):
    return stage(work_dir / "forged", "local", [project], env_dir=env_dir)


@pytest.mark.parametrize("launcher", sorted(FORGED))
def test_a_run_printing_a_launcher_s_refusal_is_its_own_failure(project, local, launcher):
    outcome = local.process(_forging(project, f"forged-{launcher}", FORGED[launcher]))
    assert reason(outcome) == "runner_failed", outcome.verdict
    assert outcome.verdict.evidence["exit_code"] == "1"


def test_three_forging_records_first_do_not_stop_the_build(tmp_path, capsys, env_dir):
    project = Project(tmp_path / "repo", repo="hostile/forged-build")
    candidates = [_forging(project, f"first-{n}", FORGED["bwrap"]) for n in range(3)]
    code, out, err = build_local(tmp_path, capsys, project, candidates, env_dir)
    assert code == 1, (out, err)  # 1: no instance kept (2 was the stop)
    assert "stopped" not in err and "no instance was kept" in out
    assert "3 dropped: runner_failed" in out
    assert "infra_error" not in out
    stored = list((tmp_path / "work" / "store" / "validate").glob("*/*.json"))
    assert len(stored) == 3  # verdicts: the next build reuses them
    rejected = tmp_path / "work" / "rejected" / "validate.jsonl"
    reasons = [json.loads(line)["reason"] for line in rejected.open()]
    assert reasons == ["runner_failed"] * 3


FORGING_STEP = "import sys\nsys.stderr.write({line!r} + '\\n')\nsys.exit(1)\n"


@pytest.mark.parametrize("launcher", sorted(FORGED))
def test_a_build_step_printing_a_launcher_s_refusal_is_the_environment_s_failure(
    tmp_path, launcher
):
    """The project's own script, run by a build step (a spec's ``pre_install``), prints only
    the line a launcher prints when it refuses, and exits 1 as the launcher would: the
    environment failed (EnvironmentBuildError, a verdict on the record), not the sandbox
    (``SandboxRefused``, a fault of the machine), since the sandbox starts ``true``."""
    repo = GitRepo(tmp_path / "project")
    commit = repo.commit({"forge.py": FORGING_STEP.format(line=FORGED[launcher])})
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    spec = EnvironmentSpec(python=here, project=repo.path, project_commit=commit,
                           pre_install=("python3 forge.py",))  # fmt: skip
    environments = LocalEnvironments(
        tmp_path / "envs", Interpreters([sys.executable], use_uv=False)
    )
    with pytest.raises(EnvironmentBuildError) as raised:
        environments.python(spec)
    assert type(raised.value) is EnvironmentBuildError, raised.value  # no subclass: no fault
    assert "step 'pre-install' failed with exit code 1" in str(raised.value)
