"""The task's ``eval.sh``: no ``PYTHONPATH``; the checkout ahead of the installed project through
the same ``.pth`` file validation's runs have."""

from __future__ import annotations

import subprocess

from validation.environments.environment import EnvironmentSpec
from validation.runs import checkout_path
from validation.runs.eval_script import eval_script


def test_eval_sh_sets_no_pythonpath_and_writes_the_checkouts_pth(tmp_path):
    spec = EnvironmentSpec(python="3.9")
    script = eval_script(spec, "a" * 40, "", ["tests/test_a.py"])
    assert "PYTHONPATH" not in script
    site = "/opt/swt-env/lib/python3.9/site-packages"
    start = script.index(f"cat > {site}/{checkout_path.PTH} <<")
    heredoc = script[start:].split("\n")
    delimiter = heredoc[0].rsplit("<<", 1)[1].strip("'")
    end = heredoc.index(delimiter)
    # the here-document, run by a shell, writes the line the runs' .pth has
    written = tmp_path / "out.pth"
    command = "\n".join([heredoc[0].replace(f"{site}/{checkout_path.PTH}", str(written)),
                         *heredoc[1 : end + 1]])  # fmt: skip
    subprocess.run(["bash", "-c", command], check=True)
    assert written.read_text() == checkout_path.literal(["/testbed", "/testbed/src"])
