"""Every drop reason is a verdict or an infrastructure fault; a fault carries its evidence."""

import errno

from builder.core.faults import (
    DROP_CLASSES,
    DropClass,
    InfrastructureError,
    disk_full,
    is_infrastructure,
)
from builder.core.records import DropReason


def test_every_drop_reason_is_classified():
    unclassified = sorted(reason.value for reason in DropReason if reason not in DROP_CLASSES)
    assert unclassified == []


def test_faults_of_the_machine_are_infrastructure_and_judgements_are_verdicts():
    assert is_infrastructure(DropReason.INFRA_ERROR)
    assert is_infrastructure(DropReason.REPO_UNAVAILABLE)
    assert not is_infrastructure(DropReason.ENVIRONMENT_FAILED)
    assert not is_infrastructure(DropReason.RUNNER_FAILED)
    assert not is_infrastructure(None)  # kept
    assert {DROP_CLASSES[reason] for reason in DropReason} == set(DropClass)


def test_an_infrastructure_error_names_its_fault_and_log():
    error = InfrastructureError("bwrap: cannot start", fault="sandbox", log="/w/run.log")
    assert error.evidence() == {
        "fault": "sandbox",
        "error": "bwrap: cannot start",
        "log": "/w/run.log",
    }


def test_a_full_disk_is_a_fault_and_other_os_errors_are_not():
    full = disk_full(OSError(errno.ENOSPC, "No space left on device", "/w/store/x.json"))
    assert full is not None and full.fault == "disk" and "/w/store/x.json" in str(full)
    assert disk_full(OSError(errno.EACCES, "Permission denied")) is None


def test_as_fault_names_what_the_machine_failed():
    """A git error reading a mirror is the repository's fault, a full disk the disk's; any other
    exception is no fault of the machine (None: the stage raises it on)."""
    import errno

    from builder.core.faults import InfrastructureError, as_fault
    from builder.core.gitutil import GitError

    missing = GitError(["reset", "--hard", "abc"], 128, "fatal: bad object abc")
    assert as_fault(missing, "o/r").evidence()["fault"] == "repository"
    full = OSError(errno.ENOSPC, "No space left on device", "/w")
    assert as_fault(full, "o/r").evidence()["fault"] == "disk"
    assert as_fault(OSError(errno.EACCES, "denied"), "o/r") is None
    assert as_fault(ValueError("a bug"), "o/r") is None
    own = InfrastructureError("sandbox refused", fault="sandbox")
    assert as_fault(own, "o/r") is own
