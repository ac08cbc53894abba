"""The demo release exported as a task repo: swebench's check and build accept it, its rows are
the release's, it round-trips byte for byte, it builds again as a source, and (Docker tier) a
task's Dockerfile builds and its eval.sh gives the task's lists as the harness grades them; a
setuptools-scm project's task builds and grades gold resolved, an empty patch unresolved."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from builder.cli import main
from builder.core.config import DockerConfig
from builder.core.repos import RepoCache
from builder.task_repo.release import read_task_repo, write_task_repo
from tests.support import docker as docker_support
from tests.support import scm_project, task_image
from tests.support.tiers import DOCKER, END_TO_END

pytestmark = END_TO_END

FAST = ["--set", "validation.timeout_s=20", "--set", "validation.backend=local", "--no-progress"]
SWEBENCH = str(Path(sys.executable).parent / "swebench")


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """The demo built from its SWE-bench-format records (no GitHub server needed)."""
    root = tmp_path_factory.mktemp("release")
    assert main(["demo", str(root / "demo")]) == 0
    config = root / "demo" / "swt-builder.toml"
    argv = ["build", "--config", str(config), "--output-dir", str(root / "dist")]
    argv += ["--work-dir", str(root / "work"), *FAST, "--set", "source.kind=swe-bench"]
    assert main(argv) == 0
    return root / "dist" / "swt-demo", config, root / "work"


@pytest.fixture(scope="module")
def exported(release, tmp_path_factory):
    dataset_dir, config, work = release
    out = tmp_path_factory.mktemp("exported") / "tasks"
    argv = ["export", "--format", "task-repo", str(dataset_dir), str(out)]
    assert main([*argv, "--config", str(config), "--work-dir", str(work)]) == 0
    return out


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_swebench_dataset_check_reports_no_error(exported):
    result = subprocess.run(
        [SWEBENCH, "dataset", "check", str(exported)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "error" not in result.stdout


def test_swebench_dataset_build_gives_the_releases_rows(release, exported, tmp_path):
    dataset_dir, _, _ = release
    result = subprocess.run(
        [SWEBENCH, "dataset", "build", str(exported), "-o", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    manifest = json.loads((dataset_dir / "manifest.json").read_text())
    datasets = {(s.config, s.split): s.dataset for s in read_task_repo(exported).splits}
    compared = 0
    for entry in manifest["splits"]:
        if not entry["rows"]:
            continue
        ours = pq.read_table(dataset_dir / entry["path"]).to_pylist()
        name = datasets[(entry["config"], entry["split"])]
        theirs = {
            r["instance_id"]: r for r in pq.read_table(tmp_path / name / "test.parquet").to_pylist()
        }
        assert sorted(theirs) == sorted(r["instance_id"] for r in ours)
        for row in ours:
            built = theirs[row["instance_id"]]
            for column, value in row.items():
                if column in ("FAIL_TO_PASS", "PASS_TO_PASS"):
                    value = json.loads(value)
                assert built[column] == value, (name, row["instance_id"], column)
            compared += 1
    assert compared >= 2


def test_export_import_export_is_byte_identical(exported, tmp_path):
    read = read_task_repo(exported)
    write_task_repo(tmp_path, read.name, read.version, read.instances, read.splits, read.harness)
    assert _tree(tmp_path) == _tree(exported)


def test_the_instances_read_back_are_the_releases(release, exported):
    dataset_dir, _, _ = release
    lines = (dataset_dir / "instances.jsonl").read_text().splitlines()
    assert [i.to_json() for i in read_task_repo(exported).instances] == lines


def test_an_environment_other_than_the_validated_one_is_refused(release, tmp_path, capsys):
    dataset_dir, config, work = release
    argv = ["export", str(dataset_dir), str(tmp_path / "out"), "--config", str(config)]
    argv += ["--work-dir", str(work), "--set", "validation.coverage=false"]
    assert main(argv) == 2
    assert "is not the one it was validated in" in capsys.readouterr().err


def test_the_task_repo_builds_again_as_a_source(release, exported, tmp_path):
    dataset_dir, config, work = release
    argv = [
        "build",
        "--config",
        str(config),
        "--output-dir",
        str(tmp_path),
        "--work-dir",
        str(work),
    ]
    argv += [*FAST, "--set", "source.kind=task-repo", "--set", f"source.path={exported}"]
    assert main(argv) == 0
    rebuilt = (tmp_path / "swt-demo" / "instances.jsonl").read_text()
    assert rebuilt == (dataset_dir / "instances.jsonl").read_text()


@DOCKER[0]
@DOCKER[1]
def test_a_tasks_dockerfile_builds_and_its_eval_sh_flips_fail_to_pass(release, exported, tmp_path):
    """One task (both lists non-empty): its Dockerfile built by the Docker engine on the
    backend's build network with its CA bundle (PyPI through this machine's TLS), the
    repository from a bundle of the mirror, uv from the index; its eval.sh run as the harness
    runs it and graded by the harness's parser: FAIL_TO_PASS fails without the golden patch and
    passes with it, PASS_TO_PASS passes in both."""
    _, _, work = release
    instance = next(i for i in read_task_repo(exported).instances if i.PASS_TO_PASS)
    assert instance.FAIL_TO_PASS
    client = docker_support.engine()
    docker_support.base_image()  # FROM swt-base:python3.11, the image the other tests build
    assert instance.run_metadata["python"] == docker_support.PYTHON
    settings = DockerConfig()
    mirror = RepoCache(work / "repos").mirror(instance.repo, instance.base_commit)
    task = exported / "tasks" / instance.instance_id
    context = task_image.build_context(task, mirror, tmp_path / "context", settings)
    tag = f"swt-test-task:{instance.instance_id.lower()}"
    image = task_image.build_image(client, context, tag, settings)
    try:
        before = task_image.graded(task, task_image.harness_run(client, image, task, ""), tmp_path)
        after = task_image.harness_run(client, image, task, instance.patch)
        after = task_image.graded(task, after, tmp_path)
    finally:
        client.images.remove(image.id, force=True)
    passed = {name for name, status in before.items() if status == "PASSED"}
    assert set(instance.FAIL_TO_PASS) <= set(before) and not passed & set(instance.FAIL_TO_PASS)
    assert set(instance.PASS_TO_PASS) <= passed
    assert {name for name, status in after.items() if status == "PASSED"} == {
        *instance.FAIL_TO_PASS,
        *instance.PASS_TO_PASS,
    }


def test_a_release_whose_repository_is_gone_names_every_instance_and_writes_nothing(
    release, tmp_path, capsys
):
    """No mirror in the work dir and none to be made (the clone it came from is gone): the
    export names each instance whose environment it cannot make again and writes no task."""
    dataset_dir, config, _ = release
    text = config.read_text().replace('"github/calc.git"', f'"{tmp_path / "gone.git"}"')
    assert text != config.read_text()
    moved = tmp_path / "swt-builder.toml"
    moved.write_text(text)
    argv = ["export", str(dataset_dir), str(tmp_path / "out"), "--config", str(moved)]
    assert main([*argv, "--work-dir", str(tmp_path / "work")]) == 2
    err = capsys.readouterr().err
    ids = [json.loads(line)["instance_id"] for line in
           (dataset_dir / "instances.jsonl").read_text().splitlines()]  # fmt: skip
    assert f"{len(ids)} of {len(ids)} instances cannot be exported" in err
    assert all(f"{instance_id}: swt-demo/calc" in err for instance_id in ids), err
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def scm_exported(tmp_path_factory):
    """The setuptools-scm fixture validated by the local backend (its worktree has ``.git``; its
    runs get the generated ``_version.py``) and exported."""
    root = tmp_path_factory.mktemp("scm")
    config = scm_project.config(root)
    argv = ["build", "--config", str(config), "--output-dir", str(root / "dist")]
    assert main([*argv, "--work-dir", str(root / "work"), "--no-progress"]) == 0
    out = root / "tasks"
    argv = ["export", "--format", "task-repo", str(root / "dist" / "scm"), str(out)]
    assert main([*argv, "--config", str(config), "--work-dir", str(root / "work")]) == 0
    (instance,) = read_task_repo(out).instances
    assert list(instance.FAIL_TO_PASS) == scm_project.FAIL_TO_PASS
    assert sorted(instance.PASS_TO_PASS) == sorted(scm_project.PASS_TO_PASS)
    return out, instance, root / "work"


@DOCKER[0]
@DOCKER[1]
def test_a_setuptools_scm_task_builds_and_grades_as_swebench_grades_it(scm_exported, tmp_path):
    """The fixture's Dockerfile built (setuptools and setuptools-scm from PyPI; the version
    from the tags of the repository cloned in ``/testbed``; the generated ``_version.py`` in
    ``/testbed``), its eval.sh run as the harness runs it, each log graded by swebench's own
    ``get_eval_report``: the golden patch resolved, an empty patch not."""
    out, instance, work = scm_exported
    client = docker_support.engine()
    docker_support.base_image()
    settings = DockerConfig()
    mirror = RepoCache(work / "repos").mirror(instance.repo, instance.base_commit)
    task = out / "tasks" / instance.instance_id
    context = task_image.build_context(task, mirror, tmp_path / "context", settings)
    image = task_image.build_image(client, context, "swt-test-task:scm", settings)
    try:
        probe = "import scmfix._version as v; print(v.version)"
        version = client.containers.run(
            image.id, ["python", "-c", probe], remove=True, network_mode="none"
        )
        gold = task_image.harness_report(client, image, task, instance.patch, tmp_path / "gold")
        empty = task_image.harness_report(client, image, task, "", tmp_path / "empty")
    finally:
        client.images.remove(image.id, force=True)
    assert version.decode().strip() == "0.1.0"  # the tag of the environment commit
    assert gold["resolved"] is True, gold
    assert empty["resolved"] is False and empty["patch_successfully_applied"], empty
    assert not empty.get("infra_failure"), empty
    assert empty["tests_status"]["FAIL_TO_PASS"]["failure"] == scm_project.FAIL_TO_PASS
    assert sorted(empty["tests_status"]["PASS_TO_PASS"]["success"]) == sorted(
        scm_project.PASS_TO_PASS
    )
