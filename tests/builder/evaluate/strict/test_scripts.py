"""The script runner: exit statuses as outcomes, run for real on the oldest Python we support."""

import subprocess

import pytest

from builder.core.records import TestStatus
from builder.evaluate.strict.scripts import SCRIPT_RUNNER, ScriptRunner
from validation.environments.interpreters import Interpreters
from validation.environments.runtime import OLDEST_PYTHON


@pytest.fixture(scope="module")
def oldest_python() -> str:
    found = Interpreters().find(OLDEST_PYTHON)
    if found is None:
        pytest.skip(f"no Python {OLDEST_PYTHON} interpreter on this machine")
    return str(found)


def test_scripts_pass_on_exit_zero_and_fail_otherwise(oldest_python, tmp_path):
    scripts = {
        "ok.py": "print('fine')\n",
        "exit0.py": "import sys\nsys.exit(0)\n",
        "assert.py": "assert 1 == 2\n",
        "exit3.py": "raise SystemExit(3)\n",
        "sub/imports_sibling.py": "import helper\nassert helper.X == 1\n",
        "sub/helper.py": "X = 1\n",
        "hard_exit.py": "import os\nos._exit(0)\n",
        "never.py": "print('after a hard exit nothing runs')\n",
    }
    for name, text in scripts.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    runner = ScriptRunner()
    folder = SCRIPT_RUNNER.place(tmp_path / "tools")
    order = [n for n in scripts if n != "sub/helper.py"]
    command = runner.command(oldest_python, order, str(tmp_path / "report.jsonl"), (), str(folder))
    subprocess.run(command, cwd=tmp_path, capture_output=True, timeout=60)
    tests, errors = runner.results((tmp_path / "report.jsonl").read_bytes(), order)
    assert errors == []
    assert tests == {
        "ok.py": TestStatus.PASSED,
        "exit0.py": TestStatus.PASSED,
        "assert.py": TestStatus.FAILED,
        "exit3.py": TestStatus.FAILED,
        "sub/imports_sibling.py": TestStatus.PASSED,
        "hard_exit.py": TestStatus.MISSING,  # it ended the interpreter before reporting
        "never.py": TestStatus.MISSING,
    }
