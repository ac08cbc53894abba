"""Typed, versioned records that stages exchange: Candidate, RunResult, Instance, Verdict."""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

SCHEMA_VERSION = 1
"""Bump when a record's meaning changes: it is part of every result-store key."""

SWE_BENCH_COLUMNS = (
    "instance_id",
    "repo",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "hints_text",
    "created_at",
    "version",
    "environment_setup_commit",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
)
"""The exported columns existing SWE-bench/SWT-Bench harnesses read, in their order."""


INSTANCE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
"""What an ``instance_id`` may be: it names run dirs and log dirs, so it must be one plain path
component (a letter or digit first, then letters, digits, ``.``, ``_``, ``-``; no ``..``)."""
INSTANCE_ID_MAX_LENGTH = 200


def _safe_instance_id(value: str) -> str:
    if ".." in value:
        raise ValueError(f"instance_id {value!r} contains '..'")
    return value


def _utf8_text(value: Any) -> Any:
    """``value`` if every string in it is valid UTF-8 text (no lone surrogates, which JSON's
    ``\\ud800`` escapes and ``surrogateescape`` decoding produce); ValueError otherwise."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            raise ValueError(
                f"not valid UTF-8 text: {error.reason} at character {error.start}"
            ) from error
    elif isinstance(value, (tuple, list)):
        for item in value:
            _utf8_text(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            _utf8_text(key)
            _utf8_text(item)
    return value


V = TypeVar("V")
SortedDict = Annotated[dict[str, V], AfterValidator(lambda value: dict(sorted(value.items())))]
"""A dict kept in key order, so a record serializes the same fresh or restored from the store."""


class DropReason(str, enum.Enum):
    """Why a record left the pipeline. Every drop names one of these and carries evidence."""

    # sources
    MALFORMED_RECORD = "malformed_record"
    DUPLICATE_INSTANCE = "duplicate_instance"
    OVERSIZED_RECORD = "oversized_record"  # a field over its limit in [sizes]
    # GitHub collection (recipes/github)
    NOT_MERGED = "not_merged"
    COMMITS_UNAVAILABLE = "commits_unavailable"
    DIFF_UNPARSABLE = "diff_unparsable"
    DIFF_NOT_UTF8 = "diff_not_utf8"
    NO_TEST_CHANGE = "no_test_change"
    NO_CODE_CHANGE = "no_code_change"
    NO_PYTHON_CODE_CHANGE = "no_python_code_change"
    BINARY_CODE_CHANGE = "binary_code_change"
    TOO_MANY_FILES = "too_many_files"
    NO_LINKED_ISSUE = "no_linked_issue"
    EMPTY_PROBLEM_STATEMENT = "empty_problem_statement"
    # validation
    INFRA_ERROR = "infra_error"  # a fault of the machine: never stored (builder/core/faults.py)
    REPO_UNAVAILABLE = "repo_unavailable"
    CONTENT_MISSING = "content_missing"  # the mirror lacks files' content (mirror_repair.py)
    ENVIRONMENT_FAILED = "environment_failed"
    TEST_PATCH_DOES_NOT_APPLY = "test_patch_does_not_apply"
    GOLDEN_PATCH_DOES_NOT_APPLY = "golden_patch_does_not_apply"
    NO_TEST_FILES = "no_test_files"
    UNSAFE_PATH = "unsafe_path"
    NO_TESTS_COLLECTED = "no_tests_collected"
    RUNNER_FAILED = "runner_failed"
    TIMEOUT = "timeout"
    NO_FAIL_TO_PASS = "no_fail_to_pass"
    PASS_TO_FAIL = "pass_to_fail"
    FLAKY = "flaky"
    COVERAGE_UNMEASURABLE = "coverage_unmeasurable"
    NEEDS_NETWORK = "needs_network"
    RUN_CRASHED = "run_crashed"


class TestStatus(str, enum.Enum):
    """Outcome of one test in one run, mapped explicitly from the runner's report."""

    __test__ = False  # not a pytest test class

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    XFAIL = "xfail"
    XPASS = "xpass"
    MISSING = "missing"

    @property
    def is_pass(self) -> bool:
        return self is TestStatus.PASSED

    @property
    def is_fail(self) -> bool:
        """Failed, errored (incl. collection errors and pytest's strict xpass, which it reports
        as a failure), or absent from the run."""
        return self in (TestStatus.FAILED, TestStatus.ERROR, TestStatus.MISSING)

    @property
    def is_expected_outcome(self) -> bool:
        """An expected failure (xfail) or an unexpected pass of one (xpass): the test's author
        declared its outcome, so it is no transition and decides no drop."""
        return self in (TestStatus.XFAIL, TestStatus.XPASS)


class Record(BaseModel):
    """Base of all records: strict, immutable, versioned, JSON round-trippable."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION

    @field_validator("schema_version")
    @classmethod
    def _known_schema(cls, value: int) -> int:
        if value != SCHEMA_VERSION:
            raise ValueError(f"schema_version {value} is not {SCHEMA_VERSION} (this toolkit's)")
        return value

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, line: str):
        return cls.model_validate_json(line)


class Problem(Record):
    """The task as SWE-bench states it: the issue, the repository at the fix's base commit, the
    golden patches; each field is a SWE-bench column of the same name, in its order."""

    instance_id: Annotated[
        str,
        Field(pattern=INSTANCE_ID_PATTERN, max_length=INSTANCE_ID_MAX_LENGTH),
        AfterValidator(_safe_instance_id),
    ]
    repo: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")
    base_commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    patch: str
    test_patch: str
    problem_statement: str
    hints_text: str = ""
    created_at: str = Field(min_length=1)
    version: str = ""
    environment_setup_commit: str = ""

    @field_validator("*")
    @classmethod
    def _text_is_utf8(cls, value: Any) -> Any:
        """Every text field of a problem and of the records built on it (Candidate, Instance)
        is valid UTF-8: it is written to the store, to JSONL and to parquet as such."""
        return _utf8_text(value)


class Provenance(Record):
    """Where a problem came from on GitHub: its pull request, the issues it resolves, the merge."""

    pull_number: int | None = None
    issue_numbers: tuple[int, ...] = ()
    issue_created_at: tuple[str, ...] = ()
    merged_at: str | None = None


class Labels(Record):
    """The golden tests' labels validation found: SWE-bench's last two columns."""

    FAIL_TO_PASS: tuple[str, ...]
    PASS_TO_PASS: tuple[str, ...]


# Fields serialize base by base from the last base listed to the first, then the class's own:
# Candidate is Problem, Provenance, then its own; Instance is Problem, Labels, Provenance (the
# SWE-bench columns first, in their order), then its own.


class Candidate(Provenance, Problem):
    """A possible benchmark instance: an issue, the repo at the fix's base, golden patches."""

    source: str = Field(min_length=1)
    reference_fail_to_pass: tuple[str, ...] | None = None
    reference_pass_to_pass: tuple[str, ...] | None = None


class RunResult(Record):
    """One execution of the selected tests on one side (before/after the golden patch)."""

    side: str = Field(pattern=r"^(before|after)$")
    suite: str = Field(default="golden", pattern=r"^(golden|existing)$")
    repetition: int = Field(ge=0)
    command: tuple[str, ...]
    exit_code: int | None
    timed_out: bool
    duration_s: float
    report_found: bool
    tests: SortedDict[TestStatus]
    collection_errors: tuple[str, ...] = ()
    log_path: str
    deselected: tuple[str, ...] = Field(
        default=(),
        description="test ids this run left out on purpose (a repetition runs only the tests "
        "whose verdict decides); grading ignores the run for them",
    )
    network_errors: SortedDict[str] = Field(
        default_factory=dict,
        description="test id → the connection error line of a test that failed for lack of "
        "network in this run (pytest runs: read from the JUnit report)",
    )
    skip_reasons: SortedDict[str] = Field(
        default_factory=dict,
        description="test id → the reason pytest gave for skipping it in this run (skip marks, "
        "pytest.skip, importorskip; not xfail), at most 300 characters (pytest runs: read from "
        "the JUnit report)",
    )
    failure_messages: SortedDict[str] = Field(
        default_factory=dict,
        description="test id → the first line of the message of its failure or error in this "
        "run, at most 300 characters (pytest runs: read from the JUnit report)",
    )
    crashed: str = Field(
        default="",
        description="the runner's own crash part way through this run, with its evidence "
        "(pytest: exit code 3 and the last INTERNALERROR line); its results are cut short",
    )
    plain_path: str = Field(
        default="",
        description="a shortcut of validation's that this run did not take because the project "
        "does not tolerate it, with why (pytest's own traceback format where the pytest that "
        "runs is the project's); empty: every shortcut was taken",
    )
    daemon_interruptions: int = Field(
        default=0,
        ge=0,
        description="tries of this run before it that the Docker daemon interrupted (restarted, "
        "the container removed or stopped from outside): no result, run again in a new container",
    )
    raw_ids: SortedDict[str] = Field(
        default_factory=dict,
        description="canonical test id → the id as the runner reported it, for each test whose "
        "id held a path of the run's machine (the work dir, an environment's or interpreter's "
        "prefix, the checkout, the run's home or temp dir; validation.runs.test_ids) or was "
        "too long or not UTF-8: the evidence; every other field names the canonical id",
    )


class Transitions(BaseModel):
    """How many tests made each transition between the before and after runs."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    fail_to_pass: int = Field(ge=0)
    fail_to_fail: int = Field(ge=0)
    pass_to_pass: int = Field(ge=0)
    pass_to_fail: int = Field(ge=0)


class InstanceStats(BaseModel):
    """Per-instance statistics of the paper's Table 1; None where not (yet) measured."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    codebase_files: int | None = None
    codebase_lines: int | None = None
    existing_tests: Transitions | None = None
    golden_tests: Transitions | None = None
    golden_tests_added: int | None = None
    golden_tests_removed: int | None = None
    golden_test_files_edited: int | None = None
    golden_test_lines_edited: int | None = None


class Instance(Provenance, Labels, Problem):
    """A validated benchmark instance; exports SWE-bench columns first, SWT extras after."""

    golden_coverage: float | None = None
    stats: InstanceStats = Field(default_factory=InstanceStats)
    run_metadata: SortedDict[str] = Field(default_factory=dict)

    @classmethod
    def from_candidate(cls, candidate: Candidate, **validated: Any) -> Instance:
        """The instance of ``candidate``: its problem and provenance, then what validation
        found (``validated`` names Instance fields and wins, e.g. the detected ``version``)."""
        shared = (set(Problem.model_fields) | set(Provenance.model_fields)) - {"schema_version"}
        return cls(**{**candidate.model_dump(include=shared), **validated})

    def to_row(self) -> dict[str, Any]:
        """The exported row: SWE-bench columns (lists JSON-encoded), then our extras."""
        row: dict[str, Any] = {}
        for column in SWE_BENCH_COLUMNS:
            value = getattr(self, column)
            row[column] = json.dumps(list(value)) if isinstance(value, tuple) else value
        row["pull_number"] = self.pull_number
        row["issue_numbers"] = list(self.issue_numbers)
        row["issue_created_at"] = list(self.issue_created_at)
        row["merged_at"] = self.merged_at
        row["golden_coverage"] = self.golden_coverage
        row["stats"] = self.stats.model_dump(mode="json")
        row["run_metadata"] = json.dumps(self.run_metadata, sort_keys=True)
        return row


class Verdict(Record):
    """A stage's decision about one input record: kept (with output) or dropped (with reason)."""

    stage: str
    reason: DropReason | None = None
    evidence: SortedDict[str] = Field(default_factory=dict)

    @property
    def kept(self) -> bool:
        return self.reason is None


R = TypeVar("R", bound=Record)


def write_jsonl(path: Path, records: Iterable[Record]) -> int:
    """Write records one per line (atomically) and return how many were written."""
    from builder.core.files import atomic_write_text

    lines = [record.to_json() + "\n" for record in records]
    atomic_write_text(path, "".join(lines))
    return len(lines)


def read_jsonl(path: Path, model: type[R]) -> Iterator[R]:
    """Read records of one type from a JSONL file; a bad line raises with its line number."""
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield model.from_json(line.decode("utf-8"))
            except ValueError as error:  # UnicodeDecodeError is one too
                raise ValueError(
                    f"{path}:{number}: not a valid {model.__name__}: {error}"
                ) from error
