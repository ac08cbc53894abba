"""The validation stage: run the golden tests before and after the golden patch, then grade."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from builder import __version__
from builder.config import ValidationConfig
from builder.pipeline import Outcome, Stage
from builder.records import Candidate, DropReason, Instance, RunResult
from validation.environment import EnvironmentBuildError, EnvironmentSpec, LocalEnvironments
from validation.grading import grade
from validation.junit import ReportError, collection_errors, parse_junit
from validation.patches import PatchError, apply_patch, runnable_test_files
from validation.process import run_killable
from validation.repos import RepoCache, RepoUnavailable

STAGE = "validate"


class ValidateStage(Stage):
    """Candidate → Instance (graded F→P/P→P lists) or a named drop with evidence."""

    name = STAGE
    output_model = Instance

    def __init__(
        self, settings: ValidationConfig, work_dir: Path, repos: Mapping[str, str]
    ) -> None:
        self.settings = settings
        self.work_dir = Path(work_dir)
        self.repos = RepoCache(self.work_dir / "repos", repos)
        self.environments = LocalEnvironments(self.work_dir / "envs")

    def fingerprint(self) -> Any:
        return {"validation": self.settings.model_dump(mode="json"), "runs_per_side": 1}

    def process(self, record: Candidate) -> Outcome:
        key = self.key(record)
        logs = self.work_dir / "logs" / record.instance_id / key[:12]
        shutil.rmtree(logs, ignore_errors=True)
        try:
            test_files = runnable_test_files(record.test_patch)
        except PatchError as error:
            return Outcome.drop(STAGE, DropReason.TEST_PATCH_DOES_NOT_APPLY, error=str(error))
        if not test_files:
            return Outcome.drop(
                STAGE, DropReason.NO_TEST_FILES, test_patch_files=_patched_files(record)
            )
        try:
            mirror = self.repos.mirror(record.repo, record.base_commit)
        except RepoUnavailable as error:
            return Outcome.drop(STAGE, DropReason.REPO_UNAVAILABLE, error=str(error))
        spec = EnvironmentSpec(self.settings.python, tuple(self.settings.packages))
        try:
            python = self.environments.python(spec)
        except EnvironmentBuildError as error:
            return Outcome.drop(
                STAGE, DropReason.ENVIRONMENT_FAILED, error=str(error), log=str(error.log_path)
            )
        run_dir = self.work_dir / "runs" / key[:16]
        with self.repos.worktree(mirror, record.base_commit, run_dir / "repo") as tree:
            return self._validate(record, tree, python, test_files, run_dir, logs, spec)

    def _validate(self, record, tree, python, test_files, run_dir, logs, spec) -> Outcome:
        try:
            apply_patch(tree, record.test_patch, "test patch")
        except PatchError as error:
            return Outcome.drop(STAGE, DropReason.TEST_PATCH_DOES_NOT_APPLY, error=str(error))
        try:
            apply_patch(tree, record.patch, "golden patch", check_only=True)
        except PatchError as error:
            return Outcome.drop(STAGE, DropReason.GOLDEN_PATCH_DOES_NOT_APPLY, error=str(error))
        before = self._run(python, tree, test_files, "before", run_dir, logs)
        if before.timed_out:
            return _timeout(before)
        apply_patch(tree, record.patch, "golden patch")
        after = self._run(python, tree, test_files, "after", run_dir, logs)
        if after.timed_out:
            return _timeout(after)
        if not after.tests:
            return Outcome.drop(
                STAGE,
                DropReason.NO_TESTS_COLLECTED,
                exit_code=str(after.exit_code),
                report_found=str(after.report_found),
                collection_errors=", ".join(after.collection_errors),
                log=after.log_path,
            )
        graded = grade([before], [after])
        if graded.pass_to_fail:
            return Outcome.drop(
                STAGE,
                DropReason.PASS_TO_FAIL,
                tests=", ".join(graded.pass_to_fail),
                log=after.log_path,
            )
        if not graded.fail_to_pass:
            return Outcome.drop(
                STAGE,
                DropReason.NO_FAIL_TO_PASS,
                fail_to_fail=", ".join(graded.fail_to_fail),
                log=after.log_path,
            )
        return Outcome.keep(STAGE, _instance(record, graded, spec), log=after.log_path)

    def _run(self, python, tree, test_files, side, run_dir, logs) -> RunResult:
        report = logs / f"{side}-0.xml"
        log_path = logs / f"{side}-0.log"
        command = [
            str(python), "-m", "pytest", "-rA", "-p", "no:cacheprovider",
            "-o", "junit_family=xunit1", "--continue-on-collection-errors",
            f"--junitxml={report}", *test_files,
        ]  # fmt: skip
        completed = run_killable(
            command,
            cwd=tree,
            env=_run_env(tree, run_dir, python),
            log_path=log_path,
            timeout_s=self.settings.timeout_s,
        )
        try:
            tests, errors, found = parse_junit(report, test_files), collection_errors(report), True
        except ReportError:
            tests, errors, found = {}, [], False
        return RunResult(
            side=side,
            repetition=0,
            command=tuple(command),
            exit_code=completed.exit_code,
            timed_out=completed.timed_out,
            duration_s=completed.duration_s,
            report_found=found,
            tests=tests,
            collection_errors=tuple(errors),
            log_path=str(log_path),
        )


def _run_env(tree: Path, run_dir: Path, python: Path) -> dict[str, str]:
    """A minimal environment for untrusted test code: no tokens, HOME and TMP in the run dir."""
    home, tmp = run_dir / "home", run_dir / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    paths = [str(tree / "src")] if (tree / "src").is_dir() else []
    return {
        "PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "PYTHONPATH": os.pathsep.join([str(tree), *paths]),
        "PYTHONDONTWRITEBYTECODE": "1",
        "LANG": "C.UTF-8",
    }


def _timeout(run: RunResult) -> Outcome:
    return Outcome.drop(
        STAGE, DropReason.TIMEOUT, side=run.side, seconds=str(run.duration_s), log=run.log_path
    )


def _patched_files(record: Candidate) -> str:
    return ", ".join(
        line[len("+++ b/") :]
        for line in record.test_patch.splitlines()
        if line.startswith("+++ b/")
    )


def _instance(record: Candidate, graded, spec: EnvironmentSpec) -> Instance:
    return Instance(
        instance_id=record.instance_id,
        repo=record.repo,
        base_commit=record.base_commit,
        patch=record.patch,
        test_patch=record.test_patch,
        problem_statement=record.problem_statement,
        hints_text=record.hints_text,
        created_at=record.created_at,
        version=record.version,
        environment_setup_commit=record.environment_setup_commit or record.base_commit,
        FAIL_TO_PASS=graded.fail_to_pass,
        PASS_TO_PASS=graded.pass_to_pass,
        pull_number=record.pull_number,
        issue_numbers=record.issue_numbers,
        issue_created_at=record.issue_created_at,
        merged_at=record.merged_at,
        run_metadata={
            "backend": "local",
            "python": spec.python,
            "environment": spec.key(),
            "runner": "pytest",
            "runs_per_side": "1",
            "toolkit_version": __version__,
        },
    )
