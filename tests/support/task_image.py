"""An exported task's image built on this machine and its eval.sh run as the harness runs it.

The build is the Docker backend's, in what an offline machine can do: its engine, the build
network (``docker.build_network``) and CA bundle (``docker.ca_bundle``) of its builds, and in
place of GitHub a bundle of the repository's mirror. The context is the task directory plus
those optional files the Dockerfile picks up (``repo.bundle``, ``ca-bundle.crt``); no uv binary,
so uv comes from the package index as on the harness's machine. The run is the harness's: the
task read by ``swebench``'s own reader into its test spec, the patch applied in ``/testbed``,
then the spec's eval script, and the log graded by ``swebench``'s own parser (or its whole
report, ``get_eval_report``, as the harness writes a prediction's).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from docker.errors import BuildError
from swebench.harness.grading import get_eval_report, get_logs_eval
from swebench.harness.utils import make_test_spec
from swebench.task.repo import load_task

from benchmarks import bench_task_repo
from builder.core.config import DockerConfig
from validation.environments.docker_environments import ca_bundle
from validation.environments.dockerfile import CA_BUNDLE, REPO_BUNDLE


def build_context(task_dir: Path, mirror: Path, context: Path, settings: DockerConfig) -> Path:
    """``context``: the task directory's files, a bundle of every ref of ``mirror`` and, when
    builds here have one, the CA bundle."""
    shutil.copytree(task_dir, context)
    subprocess.run(
        ["git", "bundle", "create", str(context / REPO_BUNDLE), "--all"],
        cwd=mirror,
        check=True,
        capture_output=True,
    )
    bundle = ca_bundle(settings)
    if bundle is not None:
        shutil.copyfile(bundle, context / CA_BUNDLE)
    return context


def build_image(client: Any, context: Path, tag: str, settings: DockerConfig) -> Any:
    """The image of the Dockerfile in ``context``, built as the task-repo benchmark builds it
    (the backend's build network, its memory limit with swap); AssertionError with the build's
    log when it fails."""
    try:
        image, _ = bench_task_repo.build_image(client, context, tag, settings)
    except BuildError as error:
        log = bench_task_repo.build_log_text(error.build_log)
        raise AssertionError(f"the task's Dockerfile does not build:\n{log}") from error
    return image


def harness_run(client: Any, image: Any, task_dir: Path, patch: str) -> str:
    """The log of the harness's run in a container of ``image`` (no network): ``patch`` applied
    with ``git apply`` (none when empty), then the eval script of the task's test spec; stdout
    and stderr together, as the harness logs them (the markers are in the shell's trace)."""
    spec = make_test_spec(load_task(task_dir))
    script = f"git apply --verbose - <<'SWT_GOLD'\n{patch}SWT_GOLD\n" if patch else ""
    output = client.containers.run(
        image.id,
        ["bash", "-c", script + spec.eval_script],
        remove=True,
        network_mode="none",
        stderr=True,
    )
    return output.decode("utf-8", "replace")


def graded(task_dir: Path, log: str, scratch: Path) -> dict[str, str]:
    """The test statuses the harness reads out of ``log`` (its parser, between its markers);
    AssertionError when it finds the run invalid."""
    path = scratch / "eval.log"
    path.write_text(log)
    statuses, valid = get_logs_eval(make_test_spec(load_task(task_dir)), str(path))
    assert valid, f"the harness finds no valid run in the log:\n{log}"
    return statuses


def harness_report(client: Any, image: Any, task_dir: Path, patch: str, scratch: Path) -> dict:
    """swebench's report of ``patch`` as a prediction for the task (``get_eval_report`` on the
    log of :func:`harness_run`, the tests' statuses included): ``resolved``, ``tests_status``,
    ``infra_failure``…"""
    spec = make_test_spec(load_task(task_dir))
    scratch.mkdir(parents=True, exist_ok=True)
    path = scratch / "test_output.txt"
    path.write_text(harness_run(client, image, task_dir, patch))
    prediction = {"instance_id": spec.instance_id, "model_name_or_path": "swt-tests",
                  "model_patch": patch}  # fmt: skip
    return get_eval_report(spec, prediction, str(path), include_tests_status=True)[spec.instance_id]
