"""benchmarks/bench_reference.py on the demo: environments counted per mode (a record with a
reference file gets its own environment, the others share their spec's), the sample built cold
and warm, and each figure in the table."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks.bench_reference import main
from tests.support.demo_mirrors import demo_mirrors

HERE = f"{sys.version_info.major}.{sys.version_info.minor}"
REFERENCE = f"""\
dependencies:
  - python={HERE}.0=h955ad1f_0
  - make=4.3=hd18ef5c_1
  - pip:
      - iniconfig==2.0.0
      - pytest==8.3.3
"""


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_environments_per_mode_and_their_cold_and_warm_builds(tmp_path: Path, capsys) -> None:
    paths, repos = demo_mirrors(tmp_path)
    files = tmp_path / "og" / "swt-demo__calc" / "7"
    files.mkdir(parents=True)
    (files / "environment.yml").write_text(REFERENCE)
    argv = ["--data", str(paths.records), "--repos-dir", str(repos)]
    argv += ["--reference-dir", str(tmp_path / "og"), "--instance", "swt-demo__calc-7"]
    assert main(argv) == 0
    rows = {
        line.split("|")[1].strip(): [cell.strip() for cell in line.split("|")[2:-1]]
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("| reference") or line.startswith("| tuned")
    }
    records = int(rows["reference"][0])
    assert records > 2 and rows["tuned"][0] == str(records)
    assert rows["reference"][1:3] == ["2", "1"]  # its file's environment and the spec's
    assert rows["tuned"][1:3] == ["1", "1"]
    for mode in ("reference", "tuned"):
        cold, warm, disk = (float(cell) for cell in rows[mode][3:6])
        assert cold > 0 and warm > 0 and disk > 1  # each built twice, a venv of megabytes
        environments, *_ = rows[mode][7].split(", ")
        assert float(environments) == pytest.approx(100 * int(rows[mode][1]) / records, 0.01)
