"""The evaluation stage: one prediction on one instance, its tests run on R and on R∘X."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from builder.core import __version__
from builder.core.config import DockerConfig, ValidationConfig
from builder.core.faults import InfrastructureError, as_fault
from builder.core.files import inside
from builder.core.gitutil import GitError
from builder.core.pipeline import Outcome, Stage
from builder.core.records import Candidate, DropReason, RunResult
from builder.core.store import ResultStore, result_key
from builder.evaluate.records import EvalResult, EvalTask, MutantResult
from builder.evaluate.scores import InstanceScore, Transition
from builder.evaluate.strict import runs as strict_runs
from builder.evaluate.strict.prediction_patch import PreparedPatch
from builder.evaluate.swt import runs as swt_runs
from validation.coverage.counts import COUNTER
from validation.coverage.credit import VERSION as CREDIT_VERSION
from validation.environments.environment import EnvironmentSpec
from validation.runs.runners import PYTEST_LAUNCHER
from validation.stage import ValidateStage, measurable

STAGE = "evaluate"
EVALUATION_VERSION = 9
"""Bump when how predictions are run or scored changes: it is part of every result key
(which lines count for the prediction's tests in ΔC: ``CREDIT_VERSION``, beside it).
8: ΔC credits only the lines the prediction's own tests execute (per-test contexts).
9: SWT-Bench's semantics (``swt_runs``) beside ours."""
BASELINE = "evaluate-baseline"
"""The store's stage name of an instance's executable patch lines (see ``_baseline``)."""


class EvaluateStage(Stage):
    """EvalTask → EvalResult; every task is kept (a prediction that cannot run is a score)."""

    name = STAGE
    output_model = EvalResult

    def __init__(
        self,
        settings: ValidationConfig,
        work_dir: Path,
        repos: Mapping[str, str],
        docker: DockerConfig | None = None,
    ) -> None:
        self.settings = settings
        self.work_dir = Path(work_dir)
        self.validate = ValidateStage(
            settings.model_copy(update={"repetitions": 1, "coverage": True}),
            self.work_dir,
            repos,
            docker,
        )
        """The one-run validation with coverage that measures baselines; its mirrors, backend
        and environment resolver are this stage's too (repetitions and coverage change
        neither)."""
        self.repos = self.validate.repos
        self.backend = self.validate.backend
        self.environments = self.validate.environments

    def fingerprint(self) -> Any:
        return {
            "evaluation": EVALUATION_VERSION,
            "coverage_credit": CREDIT_VERSION,
            "timeout_s": self.settings.timeout_s,
            "coverage": self.settings.coverage,
            "backend": self.backend.fingerprint(),
            "environments": self.environments.fingerprint(),
            "toolkit": __version__,
            "runtime": [COUNTER.digest, PYTEST_LAUNCHER.digest],  # what runs in each run
        }

    def confirm(self, fault: str, first: Any) -> str | None:
        """As validation's: a fault a prediction's code can imitate stops the evaluation only
        when the backend's self-test, run for no prediction, fails too."""
        return self.validate.confirm(fault, first)

    def key(self, record: EvalTask) -> str:
        fingerprint = {
            **self.fingerprint(),
            "spec": self.environments.spec_digest(
                record.instance.repo, record.instance.instance_id
            ),
        }
        return result_key(self.name, fingerprint, _key_input(record))

    def group(self, record: EvalTask) -> str:
        instance = record.instance
        return f"{instance.repo}@{instance.version or instance.environment_setup_commit}"

    def process(self, record: EvalTask) -> Outcome:
        """The task's result; a fault of the machine (a sandbox that does not start, a mirror
        that cannot be read, a full disk, …) is an ``infra_error`` drop instead: no score,
        never stored, so the next evaluation runs the task again."""
        try:
            return self._scored(record)
        except (InfrastructureError, GitError, OSError) as error:
            fault = as_fault(error, record.instance.repo)
            if fault is None:
                raise
            return Outcome.drop(STAGE, DropReason.INFRA_ERROR, **fault.evidence())

    def _scored(self, record: EvalTask) -> Outcome:
        key = self.key(record)
        instance = record.instance
        logs = inside(self.work_dir / "logs" / STAGE, instance.instance_id, key[:12])
        shutil.rmtree(logs, ignore_errors=True)
        logs.mkdir(parents=True, exist_ok=True)
        if record.invalid:
            return self._result(record, not_applicable=record.invalid, logs=logs)
        if record.semantics == swt_runs.SWT_BENCH:
            return swt_runs.process(self, record, key, logs)
        return strict_runs.process(self, record, key, logs)

    def _missed_coverage(self, record: EvalTask) -> float | None:
        """ΔC of a prediction that is not applicable: 0 when the instance's golden patch has
        executable lines (its recorded golden coverage is a number), None when it has none
        (the instance is left out of coverage analysis) or coverage is not measured."""
        return missed_coverage(record.golden_coverage, self.settings.coverage)

    def _measurable(self, spec: EnvironmentSpec) -> EnvironmentSpec:
        return measurable(spec, self.settings.coverage)

    def mirror(self, instance: Candidate) -> Path:
        """The instance's mirror, repaired as its validation repaired it (a fault when it
        lacks content no setting gives: ``ValidateStage.mirror_as_validated``)."""
        return self.validate.mirror_as_validated(instance, instance.environment_setup_commit)

    def _baseline(self, instance: Candidate) -> list[tuple[str, str, int]] | None:
        """The instance's executable patch lines — executed by its existing or golden tests on
        their side — measured once per instance by a one-run validation and kept in the store
        (every later prediction on the instance reuses it). None when that validation drops."""
        validate = self.validate
        key = validate.key(instance)
        store = ResultStore(self.work_dir / "store")
        stored = store.get(BASELINE, key)
        if stored is None:
            outcome = validate.process(instance)
            rows = None
            if outcome.verdict.kept:
                report = Path(outcome.verdict.evidence["logs"]) / "coverage.json"
                rows = json.loads(report.read_text(encoding="utf-8"))["lines"]
            stored = {"executable": rows}
            store.put(BASELINE, key, stored)
        rows = stored["executable"]
        return None if rows is None else [(r["side"], r["path"], r["line"]) for r in rows]

    def _result(
        self,
        record: EvalTask,
        prepared: PreparedPatch | None = None,
        not_applicable: str = "",
        *,
        transitions: list[Transition] | None = None,
        runs: tuple[RunResult, ...] = (),
        logs: Path,
        coverage: float | None = None,
        coverage_upper_bound: bool = False,
        mutants: tuple[MutantResult, ...] = (),
    ) -> Outcome:
        prepared = prepared or PreparedPatch()
        reason = not_applicable or prepared.not_applicable
        if reason:
            coverage = self._missed_coverage(record)
        score = InstanceScore(
            instance_id=record.instance.instance_id,
            applicable=not reason,
            not_applicable=reason,
            edits_code=prepared.edits_code,
            transitions=transitions or [],
            coverage=coverage,
            coverage_upper_bound=coverage_upper_bound and not reason,
            mutants=len(mutants),
            mutants_killed=sum(1 for m in mutants if m.killed_by),
            mutants_equivalent=sum(1 for m in mutants if m.equivalent),
        )
        result = EvalResult(
            instance_id=record.instance.instance_id,
            model=record.model,
            score=score,
            patch_format=prepared.format.value if prepared.format else "",
            test_files=prepared.test_files,
            code_files=prepared.code_files,
            runs=tuple(runs),
            logs=str(logs),
            mutants=mutants,
        )
        return Outcome.keep(STAGE, result)


def missed_coverage(golden_coverage: float | None, measured: bool) -> float | None:
    """ΔC of an instance whose prediction is not applicable or missing: it executes none of
    the golden patch's executable lines (0), unless the patch has none (``golden_coverage``
    None: the instance is left out of coverage analysis) or coverage is off (``measured``)."""
    return 0.0 if measured and golden_coverage is not None else None


def _key_input(record: EvalTask) -> dict[str, Any]:
    """The task as its key hashes it. A patch that is not UTF-8 (lone surrogates, which JSON
    text may carry) is hashed by its escaped bytes under a field of its own, so that it cannot
    collide with a patch spelling those escapes out; the task itself keeps the patch, which
    the evaluation reports not applicable."""
    data = record.model_dump(mode="json")
    try:
        record.patch.encode("utf-8")
    except UnicodeEncodeError:
        raw = record.patch.encode("utf-8", "surrogatepass")
        data["patch"] = ""
        data["patch_not_utf8"] = raw.decode("utf-8", "backslashreplace")
    return data
