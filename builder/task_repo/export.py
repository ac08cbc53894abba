"""Export a release as a SWE-bench task repo, each task in the environment it was validated in."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from builder.build import validation_settings
from builder.core.config import Config, ValidationConfig
from builder.core.errors import SwtError
from builder.core.records import Candidate, Instance, read_jsonl
from builder.core.repos import RepoCache, RepoUnavailable
from builder.release.manifest import read_manifest
from builder.task_repo.release import Harness, dataset_names, write_task_repo
from builder.task_repo.unread import sympy_unread
from validation.environments.dockerfile import BUILD_SCRIPT, build_script, dockerfile
from validation.environments.environment import EnvironmentSpec
from validation.environments.images import base_image_name
from validation.environments.interpreters import find_uv
from validation.environments.resolution import EnvironmentResolver
from validation.environments.specs import SpecError
from validation.runs.eval_script import eval_script, log_parser
from validation.runs.patches import runnable_test_files
from validation.stage import measurable


class ExportError(SwtError, RuntimeError):
    """A release that cannot be exported: no instances file, or an environment not reproduced."""


def release_instances(dataset_dir: Path) -> tuple[dict, list[Instance]]:
    """The manifest and the instances of a release dir."""
    path = Path(dataset_dir) / "instances.jsonl"
    try:
        manifest = read_manifest(dataset_dir)
    except FileNotFoundError as error:
        raise ExportError(f"{dataset_dir} is no release (no manifest.json)") from error
    if not path.is_file():
        raise ExportError(f"{dataset_dir} has no instances.jsonl")
    return manifest, list(read_jsonl(path, Instance))


def validated_spec(
    instance: Instance, resolver: EnvironmentResolver, mirror: Path, coverage: bool
) -> EnvironmentSpec:
    """The environment ``instance`` was validated in, resolved again from the spec files and the
    repository and checked against the key its run metadata recorded; ExportError otherwise."""
    metadata = instance.run_metadata
    problem = instance.model_dump(include=set(Candidate.model_fields) - {"schema_version"})
    candidate = Candidate(**problem, source="release")
    try:
        spec = resolver.resolve(candidate, mirror).spec
    except SpecError as error:
        raise ExportError(f"{instance.instance_id}: {error}") from error
    spec = measurable(spec, coverage)
    added = json.loads(metadata.get("test_requirements", "[]"))
    if added:
        spec = dataclasses.replace(spec, packages=(*spec.packages, *added))
    recorded = metadata.get("environment", "")
    if spec.key() != recorded:
        raise ExportError(
            f"{instance.instance_id}: the environment resolved now ({spec.key()}) is not the one "
            f"it was validated in ({recorded or 'none recorded'}): export with the configuration "
            "and spec files of its build"
        )
    return spec


def uv_version() -> str:
    """The version of the uv that builds environments here (the Dockerfiles install it)."""
    uv = find_uv()
    if uv is None:
        raise ExportError("uv is not installed: the Dockerfiles name the version of this uv")
    output = subprocess.run([uv, "--version"], capture_output=True, text=True, check=True).stdout
    return output.split()[1]


def harness_of(instance: Instance, spec: EnvironmentSpec, base_image: str, uv: str) -> Harness:
    """The task's ``eval.sh``, its ``Dockerfile`` and the build script beside it."""
    files = runnable_test_files(instance.test_patch)
    try:
        image = dockerfile(spec, base_image=base_image, repo=instance.repo, uv_version=uv)
    except ValueError as error:
        raise ExportError(f"{instance.instance_id}: {error}") from error
    return Harness(
        eval_script=eval_script(spec, instance.base_commit, instance.test_patch, files),
        dockerfile=image,
        log_parser=log_parser(spec.runner),
        context={BUILD_SCRIPT: build_script(spec, instance.base_commit).encode("utf-8")},
    )


def _harness(
    instance: Instance,
    config: Config,
    settings: ValidationConfig,
    repos: RepoCache,
    uv: str,
) -> Harness:
    """The harness files of ``instance`` in the environment it was validated in; ExportError
    naming it when that environment cannot be had again (its repository, its spec)."""
    python = instance.run_metadata.get("python", "")
    resolver = EnvironmentResolver(
        settings, config.work_dir / "specs-inferred", lambda p=python: [p]
    )
    try:
        mirror = repos.mirror(instance.repo, instance.base_commit)
    except RepoUnavailable as error:
        raise ExportError(f"{instance.instance_id}: {error}") from error
    commits = {instance.base_commit, instance.environment_setup_commit} - {""}
    found = repos.repair(  # as its validation repaired it: the same files in the image
        instance.repo, commits, [Path(p) for p in settings.repair_from], settings.stub_missing
    )
    if not found.complete:
        raise ExportError(
            f"{instance.instance_id}: the history lacks the content of {found.missing} "
            "([validation] repair_from or stub_missing, as the release was built)"
        )
    spec = validated_spec(instance, resolver, mirror, config.validation.coverage)
    image = base_image_name(spec.python, config.docker)
    harness = harness_of(instance, spec, image, uv)
    if spec.runner == "sympy":  # its file's last test is on the verdict line: not read there
        ids = [*instance.FAIL_TO_PASS, *instance.PASS_TO_PASS]
        files = runnable_test_files(instance.test_patch)
        unread = sympy_unread(mirror, instance.base_commit, instance.test_patch, files, ids)
        harness = dataclasses.replace(harness, unread=unread)
    return harness


def export_task_repo(
    dataset_dir: Path,
    out: Path,
    config: Config,
    echo: Callable[[str], None] = print,
) -> list[str]:
    """Write the task repo of the release in ``dataset_dir`` into ``out``; the instance ids."""
    manifest, instances = release_instances(dataset_dir)
    known = {instance.instance_id for instance in instances}
    triples: list[tuple[str, str, Sequence[str]]] = []
    for entry in manifest["splits"]:
        missing = sorted(set(entry["instance_ids"]) - known)
        if missing:
            raise ExportError(
                f"split {entry['config']}/{entry['split']} holds ids not in instances.jsonl: "
                f"{', '.join(missing[:5])}"
            )
        triples.append((entry["config"], entry["split"], entry["instance_ids"]))
    base = config.publish.repo_id or manifest["name"]
    splits = dataset_names(base, triples)
    repos = RepoCache(config.work_dir / "repos", config.repos)
    uv = uv_version()
    harness: dict[str, Harness] = {}
    settings = validation_settings(config)
    failed: list[str] = []
    for instance in instances:
        try:
            harness[instance.instance_id] = _harness(instance, config, settings, repos, uv)
        except ExportError as error:
            failed.append(str(error))
    if failed:
        raise ExportError(
            f"{len(failed)} of {len(instances)} instances cannot be exported in the environment "
            "they were validated in (nothing written): " + "; ".join(failed)
        )
    write_task_repo(Path(out), manifest["name"], manifest["version"], instances, splits, harness)
    echo(f"task repo: {len(instances)} tasks, {len(splits)} datasets written to {out}")
    return sorted(known)
