"""A launcher's refusal to start a command is told from the output of a command that ran."""

from validation.environments.refusal import refusal, refused_run


def test_a_launchers_one_line_complaint_with_its_exit_code_is_a_refusal():
    line = "bwrap: Can't create file at /root/.ssh: Is a directory"
    assert refusal(1, line + "\n") == line
    assert refusal(1, "setpriv: failed to set pdeathsig\n") == "setpriv: failed to set pdeathsig"


def test_output_of_a_command_that_ran_is_no_refusal():
    assert refusal(2, "bwrap: usage\n") is None  # not the launcher's exit code
    assert refusal(1, "E   AssertionError\nbwrap: x\n") is None  # more than its one line
    assert refusal(1, "pytest: error: unrecognized arguments\n") is None
    assert refusal(1, "") is None


def test_a_refusal_is_read_from_where_the_step_began(tmp_path):
    log = tmp_path / "build.log"
    log.write_bytes(b"$ uv venv\nbwrap: execvp /x/python: Permission denied\n")
    start = len(b"$ uv venv\n")
    assert refused_run(1, log, start) == "bwrap: execvp /x/python: Permission denied"
    assert refused_run(1, log) is None  # the whole log is more than the launcher's line
    log.write_bytes(b"bwrap: x\n" + b"y" * 5000)
    assert refused_run(1, log) is None
