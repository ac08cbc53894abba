"""A sandbox's self-test: the launchers started on ``true`` for no record, their exit read by
the builder (what decides a sandbox fault, where a run's output cannot)."""

import shutil
import sys
from pathlib import Path

from validation.environments import sandbox, sandbox_user

RLIMITS = {"RLIMIT_NPROC": 4096}


def test_a_working_sandbox_runs_true_and_a_refusing_one_is_quoted(tmp_path):
    bwrap = sandbox.find_bwrap()
    assert bwrap is not None  # the suite's machines have bubblewrap (make test installs it)
    with sandbox_user.claimed() as user:
        assert sandbox.self_test(bwrap, RLIMITS, user) is None
        missing = [sandbox.Mount(tmp_path / "gone", "/gone")]
        found = sandbox.self_test(bwrap, RLIMITS, user, missing)
    assert found == f"bwrap: Can't find source path {tmp_path / 'gone'}: No such file or directory"


def test_an_attempt_names_a_launcher_that_cannot_start_or_fails_silently(tmp_path):
    assert sandbox.attempt([str(tmp_path / "no-such-launcher")]).endswith(
        "No such file or directory"
    )
    assert sandbox.attempt([shutil.which("false") or "/bin/false"]) == (
        "a sandbox running `true` exited 1"
    )
    assert (
        sandbox.attempt([sys.executable, "-c", "import sys; sys.exit('bwrap: no')"]) == "bwrap: no"
    )
    assert Path(sandbox.TRUE).name == "true"
