"""The ``eval.sh`` of an instance: the test patch applied, its tests run as validation ran them."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from validation.environments.docker_environments import VENV, WORKDIR
from validation.environments.environment import EnvironmentSpec
from validation.runs import checkout_path
from validation.runs.backends.docker import TOOLS
from validation.runs.runners import make_runner

START = ">>>>> Start Test Output"
END = ">>>>> End Test Output"
"""The markers the harness cuts the test output out of the log by."""
LOG_PARSERS = {
    "pytest": "parse_log_pytest",
    "django": "parse_log_django",
    "sympy": "parse_log_sympy",
}
"""The harness's log parser for each runner whose log it reads with test ids like ours (pytest
with ``-rA``: a line per test, ``PASSED path::name``); ``unittest`` has none."""
REPORT = "/tmp/swt-report"
_HEREDOC = "SWT_EOF_{}"


def log_parser(runner: str) -> str:
    return LOG_PARSERS.get(runner, "")


def eval_script(
    spec: EnvironmentSpec, base_commit: str, test_patch: str, files: Sequence[str]
) -> str:
    """``eval.sh``: from ``/testbed``, the test files that exist at the base commit reset to
    it, the test patch applied, the runner's files written where runs find them, then between
    the harness's markers the runner's command on ``files`` as validation runs it (same
    launcher and options, the checkout ahead of the installed project through the ``.pth`` file
    runs have, see ``checkout_path``), the test files reset again."""
    runner = make_runner(spec.runner, spec.test_command)
    runtime = f"{TOOLS}/{runner.runtime.digest}" if runner.runtime and not runner.launcher else None
    report = f"{REPORT}/{runner.report_name or 'unused'}"
    command = runner.command("python", list(files), report, (), runtime)
    site_packages = f"{VENV}/lib/python{spec.python}/site-packages"
    checkout_pth = checkout_path.literal([WORKDIR, f"{WORKDIR}/src"])  # src/: where it exists
    reset = (
        f"for path in {' '.join(shlex.quote(path) for path in files)}; do "
        f'git cat-file -e {base_commit}:"$path" 2>/dev/null'
        f' && git checkout {base_commit} -- "$path"; done'
    )
    lines = [
        "#!/bin/bash",
        "set -uxo pipefail",
        f"cd {WORKDIR}",
        "export HOME=/root TMPDIR=/tmp LANG=C.UTF-8",
        *(f"export {name}={shlex.quote(value)}" for name, value in spec.env),
        reset,
        *_heredoc("git apply --verbose -", test_patch, "PATCH"),
        f"mkdir -p {REPORT}",
        *_heredoc(f"cat > {site_packages}/{checkout_path.PTH}", checkout_pth, "PTH"),
    ]
    if runtime is not None and runner.runtime is not None:
        lines.append(f"mkdir -p {runtime}")
        for name, data in sorted(runner.runtime.contents.items()):
            lines += _heredoc(f"cat > {runtime}/{name}", data.decode("utf-8"), "TOOL")
    lines += [
        f": '{START}'",
        shlex.join(command),
        f": '{END}'",
        reset,
        "",
    ]
    return "\n".join(lines)


def _heredoc(command: str, text: str, tag: str) -> list[str]:
    """``command`` reading ``text`` verbatim from a quoted here-document (a delimiter the text
    does not hold)."""
    delimiter = _HEREDOC.format(tag)
    while delimiter in text:
        delimiter += "_"
    body = text if text.endswith("\n") else text + "\n"
    return [f"{command} <<'{delimiter}'", *body[:-1].split("\n"), delimiter]
