"""The validation stage: run the golden tests before and after the golden patch, then grade."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from builder import __version__
from builder.config import ValidationConfig
from builder.pipeline import Outcome, Stage
from builder.records import Candidate, DropReason, Instance, InstanceStats, RunResult, Transitions
from validation.backends import Session, make_backend
from validation.codebase import codebase_size
from validation.environment import EnvironmentBuildError, EnvironmentSpec
from validation.grading import Grade, grade
from validation.patches import PatchError, patch_size, runnable_test_files
from validation.repos import RepoCache, RepoUnavailable
from validation.runners import Runner, make_runner

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
        self.backend = make_backend(settings.backend, self.work_dir)
        self.runner: Runner = make_runner("pytest")

    def fingerprint(self) -> Any:
        return {
            "validation": self.settings.model_dump(mode="json"),
            "backend": self.backend.fingerprint(),
            "runner": self.runner.kind,
            "runs_per_side": 1,
        }

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
            environment = self.backend.prepare(spec)
        except EnvironmentBuildError as error:
            return Outcome.drop(
                STAGE, DropReason.ENVIRONMENT_FAILED, error=str(error), log=str(error.log_path)
            )
        run_dir = self.work_dir / "runs" / key[:16]
        try:
            with self.backend.session(environment, mirror, record.base_commit, run_dir) as session:
                graded = self._validate(record, session, test_files, logs)
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)
        if isinstance(graded, Outcome):
            return graded
        instance = self._instance(record, graded, spec, mirror)
        return Outcome.keep(STAGE, instance, logs=str(logs))

    def _validate(
        self, record: Candidate, session: Session, files: list[str], logs: Path
    ) -> Grade | Outcome:
        """The grade of the golden tests, or the drop that ended the validation."""
        try:
            session.apply(record.test_patch, "test patch")
        except PatchError as error:
            return Outcome.drop(STAGE, DropReason.TEST_PATCH_DOES_NOT_APPLY, error=str(error))
        try:
            session.apply(record.patch, "golden patch", check_only=True)
        except PatchError as error:
            return Outcome.drop(STAGE, DropReason.GOLDEN_PATCH_DOES_NOT_APPLY, error=str(error))
        before = self._run(session, files, "before", logs)
        if before.timed_out:
            return _timeout(before)
        session.apply(record.patch, "golden patch")
        after = self._run(session, files, "after", logs)
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
        return graded

    def _run(self, session: Session, files: list[str], side: str, logs: Path) -> RunResult:
        report_name = f"{side}-0-{self.runner.report_name}"
        command = self.runner.command("python", files, session.scratch_path(report_name))
        log_path = logs / f"{side}-0.log"
        completed = session.run(command, log_path, self.settings.timeout_s)
        report = session.read_scratch(report_name)
        if report is not None:
            (logs / report_name).write_bytes(report)
        parsed = self.runner.results(report, files)
        tests, errors = parsed if parsed is not None else ({}, [])
        return RunResult(
            side=side,
            repetition=0,
            command=tuple(command),
            exit_code=completed.exit_code,
            timed_out=completed.timed_out,
            duration_s=completed.duration_s,
            report_found=parsed is not None,
            tests=tests,
            collection_errors=tuple(errors),
            log_path=str(log_path),
        )

    def _instance(
        self, record: Candidate, graded: Grade, spec: EnvironmentSpec, mirror: Path
    ) -> Instance:
        files, lines = codebase_size(mirror, record.base_commit)
        edited_files, edited_lines = patch_size(record.test_patch)
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
            stats=InstanceStats(
                codebase_files=files,
                codebase_lines=lines,
                golden_test_files_edited=edited_files,
                golden_test_lines_edited=edited_lines,
                golden_tests=Transitions(
                    fail_to_pass=len(graded.fail_to_pass),
                    fail_to_fail=len(graded.fail_to_fail),
                    pass_to_pass=len(graded.pass_to_pass),
                    pass_to_fail=len(graded.pass_to_fail),
                ),
            ),
            run_metadata={
                "backend": self.backend.name,
                "python": spec.python,
                "environment": spec.key(),
                "runner": self.runner.kind,
                "runs_per_side": "1",
                "toolkit_version": __version__,
            },
        )


def _timeout(run: RunResult) -> Outcome:
    return Outcome.drop(
        STAGE, DropReason.TIMEOUT, side=run.side, seconds=str(run.duration_s), log=run.log_path
    )


def _patched_files(record: Candidate) -> str:
    prefix = "+++ b/"
    lines = record.test_patch.splitlines()
    return ", ".join(line[len(prefix) :] for line in lines if line.startswith(prefix))
