"""Exported tasks built with Docker and graded by swebench's harness: gold resolved, empty not.

A release is exported as a SWE-bench task repo (``swt-builder export --format task-repo``),
then for each task:

- the base image its ``Dockerfile`` names (``FROM``) is had: present, or built offline by
  ``swt-builder images base --python X.Y`` when it is the toolkit's ``swt-base:pythonX.Y``
  (a Python no Debian suite ships has none: the task is reported as not run, with the reason);
- its image is built from its ``Dockerfile`` by the toolkit's Docker engine (docker-py, the
  daemon's classic builder) on the Docker backend's build network within its memory limit,
  the build context the task directory plus a bundle of every ref of the repository's mirror
  (``repo.bundle``: no GitHub here) and the machine's CA bundle (``ca-bundle.crt``), as
  ``tests/support/task_image.py`` builds one; the image is tagged with the name the harness
  derives for the task (``task.yaml`` ``image``);
- swebench's own ``run_instance`` (``swebench.harness.run_evaluation``) runs it twice, as
  ``swebench eval`` does: with the golden patch as the prediction (applied by the harness's
  ``git apply`` chain) and with nothing (its ``--no-patch`` mode, an empty prediction); each
  log is graded by its ``get_eval_report``, and the status of each ``FAIL_TO_PASS`` test is read
  out of each log by its ``get_logs_eval`` (the task's parser).

Per task: repository, instance, Python, base image, image build time, resolved with gold
(expected true), resolved with empty (expected false), ``FAIL_TO_PASS`` failing before (no
patch: reported FAILED or ERROR) and passing after (gold: PASSED or XFAIL), and every error,
naming what did not run and why. Printed, and written to ``OUT/results.json`` and
``OUT/results.md``.

    .venv/bin/python -m benchmarks.bench_task_repo --dataset DIST/NAME --config TOML \
        --work-dir W --out DIR [--instances ID ...] [--export-set KEY=VALUE ...] \
        [--timeout 1800] [--keep-images]

The work dir is the build's: the export resolves each environment again there (its mirrors,
its inferred specs) and the repository bundle is made from its mirror.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from docker.errors import BuildError, ImageNotFound
from docker.utils import parse_bytes
from swebench.harness import run_evaluation
from swebench.harness.grading import get_logs_eval, test_failed, test_passed
from swebench.harness.utils import make_test_spec
from swebench.task.repo import load_task

from builder.core.config import Config, DockerConfig, load_config
from builder.core.repos import RepoCache
from builder.task_repo.release import read_task_repo
from validation.environments.docker_engine import connect
from validation.environments.docker_environments import ca_bundle
from validation.environments.dockerfile import CA_BUNDLE, REPO_BUNDLE
from validation.environments.images import BASE_REPOSITORY

BIN = Path(sys.executable).parent
SWT_BUILDER = str(BIN / "swt-builder")
MISSING = "missing"


def export(dataset: Path, out: Path, config: Path, work_dir: Path, sets: list[str]) -> dict:
    """``swt-builder export --format task-repo`` of ``dataset`` into ``out``: its command, exit
    code, output and seconds."""
    shutil.rmtree(out, ignore_errors=True)
    command = [SWT_BUILDER, "export", "--format", "task-repo", str(dataset), str(out),
               "--config", str(config), "--work-dir", str(work_dir)]  # fmt: skip
    for setting in sets:
        command += ["--set", setting]
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    return {
        "command": " ".join(command),
        "exit": result.returncode,
        "output": (result.stdout + result.stderr).strip(),
        "seconds": round(time.perf_counter() - started, 1),
    }


def base_image_of(dockerfile: str) -> str:
    """The image the ``FROM`` line names."""
    for line in dockerfile.splitlines():
        if line.startswith("FROM "):
            return line.split()[1]
    raise ValueError("the Dockerfile has no FROM line")


def ensure_base(client: Any, name: str, python: str, work_dir: Path) -> dict:
    """``name`` present, or built by ``swt-builder images base`` when it is the toolkit's
    own base image; ``error`` says why not."""
    try:
        client.images.get(name)
        return {"base_image": name, "base_image_built_s": None}
    except ImageNotFound:
        pass
    if not name.startswith(f"{BASE_REPOSITORY}:python"):
        return {"base_image": name, "error": f"base image {name} absent and not the toolkit's"}
    command = [SWT_BUILDER, "images", "base", "--python", python, "--work-dir", str(work_dir)]
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    seconds = round(time.perf_counter() - started, 1)
    if result.returncode != 0:
        return {
            "base_image": name,
            "base_image_built_s": seconds,
            "error": f"no base image: `{' '.join(command)}` exit {result.returncode}: "
            + (result.stdout + result.stderr).strip(),
        }
    return {"base_image": name, "base_image_built_s": seconds}


def repo_bundle(mirror: Path, bundles: Path, repo: str, commits: tuple[str, str]) -> Path:
    """A bundle of the repository for a task of ``commits`` (base, environment), made once.

    In place of GitHub's every branch and tag: those of ``mirror`` merged into either commit
    (all the tags a version computed from git reads there), and branches ``swt-bench-base`` and
    ``swt-bench-env`` at the two commits. Not ``--all``: this machine's mirrors lack a few large
    blobs of later history (``git rev-list --objects --all --missing=print``), with which
    ``git bundle`` fails; the history of the two commits is complete. Made from a scratch
    repository borrowing the mirror's objects (``objects/info/alternates``): the mirror's refs
    are never touched."""
    base, env = commits
    path = bundles / f"{repo.replace('/', '+')}-{base[:12]}-{env[:12]}.bundle"
    if path.is_file():
        return path
    scratch = bundles / "scratch.git"
    shutil.rmtree(scratch, ignore_errors=True)
    bundles.mkdir(parents=True, exist_ok=True)
    _git(bundles, "init", "--quiet", "--bare", str(scratch))
    objects = (mirror / "objects").resolve()
    (scratch / "objects" / "info" / "alternates").write_text(f"{objects}\n")
    refs: dict[str, str] = {}
    for commit in commits:
        listing = _git(mirror, "for-each-ref", "--format=%(objectname) %(refname)",
                       f"--merged={commit}", "refs/heads", "refs/tags")  # fmt: skip
        refs.update(reversed(line.split(" ", 1)) for line in listing.splitlines())
    refs["refs/heads/swt-bench-base"], refs["refs/heads/swt-bench-env"] = base, env
    updates = "".join(f"create {name} {sha}\n" for name, sha in sorted(refs.items()))
    _git(scratch, "update-ref", "--stdin", stdin=updates)
    partial = path.with_name(path.name + ".partial")
    _git(scratch, "bundle", "create", "--quiet", str(partial), "--all")
    partial.rename(path)
    shutil.rmtree(scratch, ignore_errors=True)
    return path


def _git(cwd: Path, *args: str, stdin: str | None = None) -> str:
    """git's output; RuntimeError with its stderr when it fails."""
    result = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True,
                            text=True)  # fmt: skip
    if result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:3])}… in {cwd}: {result.stderr.strip()}")
    return result.stdout


def build_context(task_dir: Path, bundle: Path, context: Path, settings: DockerConfig) -> Path:
    """``context``: the task directory's files, the repository's bundle and, when builds here
    have one, the CA bundle (as ``tests/support/task_image.py`` makes it)."""
    shutil.rmtree(context, ignore_errors=True)
    shutil.copytree(task_dir, context)
    try:
        os.link(bundle, context / REPO_BUNDLE)
    except OSError:
        shutil.copyfile(bundle, context / REPO_BUNDLE)
    ca = ca_bundle(settings)
    if ca is not None:
        shutil.copyfile(ca, context / CA_BUNDLE)
    return context


def build_image(client: Any, context: Path, tag: str, settings: DockerConfig) -> tuple[Any, str]:
    """The image of the Dockerfile in ``context`` (the backend's build network and memory
    limit, swap included) and the build's log; BuildError when it fails."""
    memory = parse_bytes(settings.memory)
    image, log = client.images.build(
        path=str(context),
        tag=tag,
        rm=True,
        forcerm=True,
        network_mode=settings.build_network,
        container_limits={"memory": memory, "memswap": memory},
        timeout=settings.build_timeout_s,
    )
    return image, build_log_text(log)


def build_log_text(log: Any) -> str:
    """The text of a Docker build's log (its stream and error parts)."""
    return "".join(str(part.get("stream") or part.get("error") or "") for part in log)


def harness_run(
    spec: Any, name: str, patch: str | None, run_id: str, timeout: int, task_repo: Path
) -> dict:
    """swebench's ``run_instance``: ``patch`` as the prediction of model ``name`` (None: its
    ``--no-patch`` mode with an empty prediction); the report, the test log's statuses and the
    run's seconds. Each prediction has its own model name: the harness keeps a report per run
    id, model and instance, and gives an existing one back without running."""
    prediction = {"instance_id": spec.instance_id, "model_name_or_path": name,
                  "model_patch": patch or ""}  # fmt: skip
    client = run_evaluation._docker_client()
    started = time.perf_counter()
    result = run_evaluation.run_instance(
        spec, prediction, client, run_id, timeout=timeout, skip_patch=patch is None,
        task_repo=str(task_repo),
    )  # fmt: skip
    seconds = round(time.perf_counter() - started, 1)
    log_dir = run_evaluation.RUN_EVALUATION_LOG_DIR / run_id / name / spec.instance_id
    output = log_dir / "test_output.txt"
    outcome: dict[str, Any] = {"seconds": seconds, "log_dir": str(log_dir)}
    if result is None:
        log = log_dir / "run_instance.log"
        text = log.read_text(errors="replace") if log.is_file() else ""
        outcome["error"] = "the harness gave no report: " + _last_lines(text, 12)
        return outcome
    outcome["report"] = result[1][spec.instance_id]
    if output.is_file():
        statuses, valid = get_logs_eval(spec, str(output))
        outcome["statuses"], outcome["valid"] = statuses, valid
        if not valid:
            outcome["error"] = "the harness finds no valid run in the log: " + _last_lines(
                output.read_text(errors="replace"), 12
            )
    return outcome


def _last_lines(text: str, count: int) -> str:
    return " | ".join(line.strip() for line in text.strip().splitlines()[-count:])


def f2p_figures(
    f2p: list[str], before: dict[str, str] | None, after: dict[str, str] | None
) -> dict:
    """Each FAIL_TO_PASS test's status in the log before (no patch) and after (gold), as the
    harness's parser read it (``missing``: the log does not report it; None: no valid log);
    how many fail before as swebench's grading counts a failure (``test_failed``: FAILED, ERROR,
    SKIPPED or not reported, e.g. a test file that does not import), how many of those the log
    does not report, and how many pass after (``test_passed``: PASSED or XFAIL)."""

    def status(test: str, statuses: dict[str, str] | None) -> str | None:
        return None if statuses is None else statuses.get(test, MISSING)

    figures: dict[str, Any] = {
        "f2p": len(f2p),
        "f2p_status": {t: [status(t, before), status(t, after)] for t in f2p},
    }
    figures.update(f2p_counts(figures["f2p_status"]))
    return figures


def f2p_counts(f2p_status: dict[str, list[str | None]]) -> dict[str, int | None]:
    """The counts of :func:`f2p_figures` from its statuses (a test not reported counts as
    failing, as swebench's ``test_failed`` has it)."""

    def side(index: int) -> dict[str, str] | None:
        values = [pair[index] for pair in f2p_status.values()]
        if any(value is None for value in values):
            return None
        return {t: pair[index] for t, pair in f2p_status.items() if pair[index] != MISSING}

    before, after = side(0), side(1)
    return {
        "f2p_failing_before": None
        if before is None
        else sum(test_failed(t, before) for t in f2p_status),
        "f2p_unreported_before": None
        if before is None
        else sum(t not in before for t in f2p_status),
        "f2p_passing_after": None
        if after is None
        else sum(test_passed(t, after) for t in f2p_status),
    }


def measure_task(
    client: Any,
    task_dir: Path,
    instance: Any,
    config: Config,
    args: argparse.Namespace,
    run_id: str,
) -> dict:
    row: dict[str, Any] = {
        "repository": instance.repo,
        "instance": instance.instance_id,
        "python": instance.run_metadata.get("python", ""),
        "f2p": len(instance.FAIL_TO_PASS),
        "errors": [],
    }
    settings = config.docker
    base = base_image_of((task_dir / "Dockerfile").read_text())
    had = ensure_base(client, base, row["python"], args.work_dir)
    row.update({k: v for k, v in had.items() if k != "error"})
    if "error" in had:
        row["errors"].append(had["error"] + " — image not built, nothing run")
        return row
    repos = RepoCache(config.work_dir / "repos", config.repos)
    mirror = repos.mirror(instance.repo, instance.base_commit)
    project = re.search(r"archive ([0-9a-f]{40})", (task_dir / "Dockerfile").read_text())
    commits = (instance.base_commit, project.group(1) if project else instance.base_commit)
    bundle = repo_bundle(mirror, args.out / "bundles", instance.repo, commits)
    context = build_context(task_dir, bundle, args.out / "context" / instance.instance_id,
                            settings)  # fmt: skip
    spec = make_test_spec(load_task(task_dir))
    started = time.perf_counter()
    try:
        image, log = build_image(client, context, spec.image, settings)
    except BuildError as error:
        row["image_build_s"] = round(time.perf_counter() - started, 1)
        text = build_log_text(error.build_log)
        (args.out / "logs").mkdir(parents=True, exist_ok=True)
        path = args.out / "logs" / f"{instance.instance_id}.build.log"
        path.write_text(text)
        row["errors"].append(
            f"image build failed ({path}): {error.msg}; last lines: {_last_lines(text, 8)}"
            " — nothing run"
        )
        return row
    finally:
        shutil.rmtree(context, ignore_errors=True)
    row["image_build_s"] = round(time.perf_counter() - started, 1)
    (args.out / "logs").mkdir(parents=True, exist_ok=True)
    (args.out / "logs" / f"{instance.instance_id}.build.log").write_text(log)
    try:
        task_repo = args.out / "task-repo"
        gold = harness_run(spec, "gold", instance.patch, run_id, args.timeout, task_repo)
        empty = harness_run(spec, "empty", None, run_id, args.timeout, task_repo)
    finally:
        if not args.keep_images:
            client.images.remove(image.id, force=True)
    for name, outcome in (("gold", gold), ("empty", empty)):
        row[f"{name}_run_s"] = outcome["seconds"]
        row[f"{name}_log"] = outcome["log_dir"]
        if "report" in outcome:
            report = outcome["report"]
            row[f"{name}_resolved"] = report["resolved"]
            row[f"{name}_report"] = report
        if "error" in outcome:
            row["errors"].append(f"{name} run: {outcome['error']}")
    row.update(f2p_figures(list(instance.FAIL_TO_PASS), _valid(empty), _valid(gold)))
    unread = unread_ids(row, task_dir)
    if unread:
        row["errors"].append(unread)
    for name, expected in (("gold", True), ("empty", False)):
        if row.get(f"{name}_resolved") not in (None, expected):
            report = row[f"{name}_report"].get("tests_status", {})
            row["errors"].append(f"{name} resolved {row[f'{name}_resolved']}: {_failures(report)}")
    return row


UNREAD = "the log reports PASSED"


def unread_ids(row: dict, task_dir: Path) -> str | None:
    """When gold is not resolved: the FAIL_TO_PASS / PASS_TO_PASS tests swebench counts failing
    although the gold log says they passed, under an id the task's parser does not read back:
    one holding whitespace with a ``PASSED <id>`` line (the harness's pytest parsers split a
    summary line at whitespace and keep its first word), or ``FILE::NAME`` whose ``NAME`` the
    parser reads as passing (sympy's parser gives bare names)."""
    report = row.get("gold_report", {}).get("tests_status", {})
    failing = [t for kind in ("FAIL_TO_PASS", "PASS_TO_PASS")
               for t in report.get(kind, {}).get("failure", [])]  # fmt: skip
    log = Path(row.get("gold_log", "")) / "test_output.txt"
    if row.get("gold_resolved") is not False or not failing or not log.is_file():
        return None
    lines = set(log.read_text(errors="replace").splitlines())
    spec = make_test_spec(load_task(task_dir))
    statuses, _ = get_logs_eval(spec, str(log))
    spaced = [t for t in failing if f"PASSED {t}" in lines and any(c.isspace() for c in t)]
    bare = [t for t in failing if "::" in t and test_passed(t.rsplit("::", 1)[1], statuses)]
    parts = []
    if spaced:
        parts.append(
            f"{len(spaced)} of the {len(failing)} tests gold fails under swebench: {UNREAD} for "
            "each under its full id, which holds whitespace (pytest's id of a parameter made "
            f"from source text); {spec.log_parser} keeps an id only up to its first whitespace, "
            f"e.g. {spaced[0]!r} is read as {spaced[0].split()[0]!r}"
        )
    if bare:
        parts.append(
            f"{len(bare)} of the {len(failing)} tests gold fails under swebench: {UNREAD} for "
            f"each under its bare name ({spec.log_parser} reads names, e.g. "
            f"{bare[0].rsplit('::', 1)[1]!r}), while the task's lists name it FILE::NAME "
            f"({bare[0]!r})"
        )
    return "; ".join(parts) or None


def _valid(outcome: dict) -> dict[str, str] | None:
    """The statuses of a run's log, None when the harness finds no valid run in it."""
    return outcome["statuses"] if outcome.get("valid") else None


def _failures(tests_status: dict) -> str:
    """The tests swebench's report holds against the expectation."""
    parts = []
    for kind in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        status = tests_status.get(kind, {})
        if status.get("failure"):
            parts.append(f"{kind} failing: {', '.join(status['failure'][:5])}"
                         + (f" (+{len(status['failure']) - 5})" if len(status["failure"]) > 5
                            else ""))  # fmt: skip
        if status.get("success") and kind == "FAIL_TO_PASS":
            parts.append(f"{kind} passing: {', '.join(status['success'][:5])}")
    return "; ".join(parts) or "no test out of place"


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _before(failing: int | None, unreported: int | None, f2p: int) -> str:
    if failing is None:
        return "—"
    return f"{failing}/{f2p}" + (f" ({unreported} not reported)" if unreported else "")


def _p2p(report: dict | None) -> str:
    """PASS_TO_PASS tests swebench's report counts passing, of all."""
    status = (report or {}).get("tests_status", {}).get("PASS_TO_PASS")
    if status is None:
        return "—"
    return f"{len(status['success'])}/{len(status['success']) + len(status['failure'])}"


def table(rows: list[dict]) -> str:
    lines = [
        "| repository | instance | Python | image build (s) | gold resolved | empty resolved "
        "| F2P failing before | F2P passing after | P2P passing gold / empty | error |",
        "|---|---|---|---:|---|---|---:|---:|---:|---|",
    ]
    for row in rows:
        f2p = row.get("f2p", 0)
        before = row.get("f2p_failing_before")
        after = row.get("f2p_passing_after")
        lines.append(
            "| " + " | ".join([
                row["repository"].split("/")[-1], row["instance"], _cell(row.get("python")),
                _cell(row.get("image_build_s")), _cell(row.get("gold_resolved")),
                _cell(row.get("empty_resolved")),
                _before(before, row.get("f2p_unreported_before"), f2p),
                f"{after}/{f2p}" if after is not None else "—",
                " / ".join(_p2p(row.get(f"{name}_report")) for name in ("gold", "empty")),
                "; ".join(row["errors"]).replace("|", "\\|") or "—",
            ]) + " |"
        )  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True, help="the release dir")
    parser.add_argument("--config", type=Path, required=True, help="the build's swt-builder.toml")
    parser.add_argument("--work-dir", type=Path, required=True, help="the build's work dir")
    parser.add_argument("--out", type=Path, required=True, help="task repo, logs, results")
    parser.add_argument("--instances", nargs="*", help="only these instance ids")
    parser.add_argument("--export-set", action="append", default=[], metavar="KEY=VALUE",
                        help="a --set of the export (e.g. a docker.base_images entry)")  # fmt: skip
    parser.add_argument("--timeout", type=int, default=1800, help="eval.sh timeout (s)")
    parser.add_argument("--keep-images", action="store_true", help="keep the task images")
    parser.add_argument(
        "--retable",
        action="store_true",
        help="run nothing: recount OUT/results.json's rows from their statuses and rewrite "
        "its table",
    )
    args = parser.parse_args(argv)
    if args.retable:
        results = json.loads((args.out / "results.json").read_text())
        for row in results["rows"]:
            if "f2p_status" in row:
                row.update(f2p_counts(row["f2p_status"]))
            task_dir = args.out / "task-repo" / "tasks" / row["instance"]
            unread = unread_ids(row, task_dir) if task_dir.is_dir() else None
            if unread and not any(UNREAD in error for error in row["errors"]):
                row["errors"].insert(0, unread)
        _write(args.out, results)
        print(table(results["rows"]))
        return 0
    args.out = args.out.resolve()
    args.work_dir = args.work_dir.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    run_id = "bench-" + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    run_evaluation.RUN_EVALUATION_LOG_DIR = args.out / "logs" / "run_evaluation"
    config = load_config(args.config, [f"work_dir={json.dumps(str(args.work_dir))}",
                                       *args.export_set])  # fmt: skip
    task_repo = args.out / "task-repo"
    exported = export(args.dataset, task_repo, args.config, args.work_dir, args.export_set)
    print(f"export: exit {exported['exit']} in {exported['seconds']} s: {exported['output']}")
    results: dict[str, Any] = {"run_id": run_id, "export": exported, "rows": []}
    if exported["exit"] == 0:
        client = connect(1800)
        instances = read_task_repo(task_repo).instances
        wanted = set(args.instances or [i.instance_id for i in instances])
        for instance in instances:
            if instance.instance_id not in wanted:
                continue
            print(f"{instance.instance_id}: …", flush=True)
            task_dir = task_repo / "tasks" / instance.instance_id
            try:
                row = measure_task(client, task_dir, instance, config, args, run_id)
            except Exception as error:  # a benchmark reports every task, whatever fails
                row = {"repository": instance.repo, "instance": instance.instance_id,
                       "python": instance.run_metadata.get("python", ""),
                       "errors": [f"{type(error).__name__}: {error}"],
                       "traceback": traceback.format_exc()}  # fmt: skip
            results["rows"].append(row)
            print(table([row]).splitlines()[-1], flush=True)
            _write(args.out, results)
    results["seconds"] = round(time.perf_counter() - started, 1)
    _write(args.out, results)
    print(table(results["rows"]))
    print(f"total {results['seconds']} s; results in {args.out / 'results.json'}")
    return 0 if exported["exit"] == 0 else 2


def _write(out: Path, results: dict) -> None:
    (out / "results.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    (out / "results.md").write_text(table(results["rows"]) + "\n")


if __name__ == "__main__":
    sys.exit(main())
