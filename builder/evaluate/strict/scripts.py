"""The runner of reproduction scripts (``--mode repro``): a script passes when it exits 0."""

from __future__ import annotations

import json

from builder.core.records import TestStatus
from validation.environments.runtime import RuntimeFiles
from validation.runs.runners import Runner

SCRIPT_RUNNER = RuntimeFiles("builder.evaluate.strict", (("_swt_scripts.py", "script_runner.py"),))
"""What runs the scripts in a session (``script_runner.py``)."""


class ScriptRunner(Runner):
    """Each script's exit status, read from the report the script runner appends to."""

    kind = "script"  # type: ignore[assignment]  # no spec names it: --mode repro chooses it
    report_name = "scripts.jsonl"
    runtime = SCRIPT_RUNNER

    def default_launcher(self, python: str, runtime: str | None = None) -> list[str]:
        if runtime is None:
            raise ValueError("the script runner needs its runtime file in the session")
        return [python, f"{runtime}/{SCRIPT_RUNNER.script}"]

    def options(self, report: str) -> list[str]:
        return [report]  # the script runner's first argument: where outcomes go

    def results(self, report, files):
        outcomes: dict[str, TestStatus] = {}
        for line in (report or b"").decode("utf-8", errors="replace").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            passed = row.get("status") == 0
            outcomes[row.get("script", "")] = TestStatus.PASSED if passed else TestStatus.FAILED
        for script in files:
            outcomes.setdefault(script, TestStatus.MISSING)
        return outcomes, []

    def completed(self, report: bytes | None) -> bool:
        return True  # a script's outcome is its exit status, reported or missing
