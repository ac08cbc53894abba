"""Which drop reasons judge an instance and which are faults of the machine it ran on."""

from __future__ import annotations

import enum
import errno
from collections.abc import Mapping

from builder.core.errors import SwtError
from builder.core.gitutil import GitError
from builder.core.records import DropReason


class DropClass(str, enum.Enum):
    """A verdict is stored and holds for every later build with the same inputs; an
    infrastructure fault says nothing of the instance: it is not stored, the next build
    tries the instance again."""

    VERDICT = "verdict"
    INFRASTRUCTURE = "infrastructure"


_V, _F = DropClass.VERDICT, DropClass.INFRASTRUCTURE
DROP_CLASSES: Mapping[DropReason, DropClass] = {
    # sources
    DropReason.MALFORMED_RECORD: _V,
    DropReason.DUPLICATE_INSTANCE: _V,
    DropReason.OVERSIZED_RECORD: _V,
    # GitHub collection
    DropReason.NOT_MERGED: _V,
    DropReason.COMMITS_UNAVAILABLE: _V,  # fetched, and not there: GitHub's answer about the PR
    # (a fetch that fails, or a mirror git cannot read, is an infra_error: collect retries it)
    DropReason.DIFF_UNPARSABLE: _V,
    DropReason.DIFF_NOT_UTF8: _V,
    DropReason.NO_TEST_CHANGE: _V,
    DropReason.NO_CODE_CHANGE: _V,
    DropReason.NO_PYTHON_CODE_CHANGE: _V,
    DropReason.BINARY_CODE_CHANGE: _V,
    DropReason.TOO_MANY_FILES: _V,
    DropReason.NO_LINKED_ISSUE: _V,
    DropReason.EMPTY_PROBLEM_STATEMENT: _V,
    # validation
    DropReason.INFRA_ERROR: _F,
    DropReason.REPO_UNAVAILABLE: _F,  # stores made before infra_error hold it: recomputed
    DropReason.CONTENT_MISSING: _V,  # the history as mirrored, not the machine; judged again
    # by every build (``ValidateStage.holds``): a repair folder may give the content later
    DropReason.ENVIRONMENT_FAILED: _V,
    DropReason.TEST_PATCH_DOES_NOT_APPLY: _V,
    DropReason.GOLDEN_PATCH_DOES_NOT_APPLY: _V,
    DropReason.NO_TEST_FILES: _V,
    DropReason.UNSAFE_PATH: _V,
    DropReason.NO_TESTS_COLLECTED: _V,
    DropReason.RUNNER_FAILED: _V,
    DropReason.RUN_CRASHED: _V,
    DropReason.TIMEOUT: _V,
    DropReason.NO_FAIL_TO_PASS: _V,
    DropReason.PASS_TO_FAIL: _V,
    DropReason.FLAKY: _V,
    DropReason.COVERAGE_UNMEASURABLE: _V,
    DropReason.NEEDS_NETWORK: _V,
}
"""Every drop reason, classified (``tests/builder/core/test_faults.py`` fails on one left out)."""


def is_infrastructure(reason: DropReason | None) -> bool:
    """Whether a drop for ``reason`` is a fault of the machine (None: kept, no fault)."""
    return reason is not None and DROP_CLASSES[reason] is DropClass.INFRASTRUCTURE


class InfrastructureError(SwtError, RuntimeError):
    """A fault of the machine, not of the instance being judged: a sandbox that does not start,
    a checkout or fetch that fails, the package index or the Docker daemon out of reach, a full
    disk. ``fault`` names which (the evidence's ``fault``, the funnel's line)."""

    fault = "infrastructure"

    def __init__(self, message: str, *, fault: str | None = None, log: str = "") -> None:
        super().__init__(message)
        if fault is not None:
            self.fault = fault
        self.log = log

    def evidence(self) -> dict[str, str]:
        """What a drop for it carries: the fault, the error, the log if there is one."""
        found = {"fault": self.fault, "error": str(self)}
        return {**found, "log": self.log} if self.log else found


FORGEABLE_FAULTS = frozenset({"sandbox", "killed", "disk"})
"""Faults a record's own code can imitate or bring about (a line shaped like a launcher's
refusal, memory or disk used up): one of them ends a build early only when a check that runs
no record's code finds it too (``Stage.confirm``)."""

DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
"""OS errors that say the disk (or the user's quota) is full: a fault of the machine."""


def disk_full(error: OSError) -> InfrastructureError | None:
    """The infrastructure fault an OS error is (a full disk or quota), or None for any other."""
    if error.errno not in DISK_FULL:
        return None
    where = f" ({error.filename})" if error.filename else ""
    return InfrastructureError(f"no space left on the device{where}: {error}", fault="disk")


def as_fault(error: Exception, repo: str) -> InfrastructureError | None:
    """The fault of the machine an exception of a stage's work on ``repo`` is: itself, a mirror
    that cannot be read (a git error: an object missing, say), a full disk; None for any other
    (a bug of the toolkit, raised on)."""
    if isinstance(error, InfrastructureError):
        return error
    if isinstance(error, GitError):
        return InfrastructureError(f"{repo}: {error}", fault="repository")
    if isinstance(error, OSError):
        return disk_full(error)
    return None
