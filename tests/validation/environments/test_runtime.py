"""Runtime files: found in the package, placed in runs by content digest, valid on old Pythons."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.runtime import copied
from validation.coverage import RUNTIME
from validation.coverage.counts import COUNTER
from validation.environments.interpreters import Interpreters
from validation.environments.metadata import SHIM
from validation.environments.runtime import OLDEST_PYTHON


@pytest.mark.parametrize("files", [RUNTIME, SHIM, COUNTER], ids=["coverage", "metadata", "counter"])
def test_the_digest_follows_the_content_and_only_it(files, tmp_path, monkeypatch):
    assert files.contents and all(files.contents.values())  # found through the package
    same = copied(files, tmp_path, monkeypatch)
    assert same.package != files.package and same.digest == files.digest
    changed = copied(files, tmp_path, monkeypatch, append="# another line\n")
    assert len(changed.digest) == 16 and changed.digest != files.digest


def test_placed_once_in_the_digests_folder(tmp_path):
    folder = RUNTIME.place(tmp_path / "tools")
    assert folder == tmp_path / "tools" / RUNTIME.digest
    assert sorted(path.name for path in folder.iterdir()) == [
        "_swt_measure.py",
        "_swt_test_contexts.py",
    ]
    assert (folder / RUNTIME.script).read_bytes() == RUNTIME.contents["_swt_measure.py"]
    (folder / RUNTIME.script).write_text("not replaced")  # placing again reuses the folder
    assert RUNTIME.place(tmp_path / "tools") == folder
    assert (folder / RUNTIME.script).read_text() == "not replaced"
    assert [path.name for path in (tmp_path / "tools").iterdir()] == [RUNTIME.digest]  # no part


def test_entries_name_the_digest():
    entries = SHIM.entries("swt/tools")
    assert entries == {f"swt/tools/{SHIM.digest}/_swt_metadata_shim.py": SHIM.contents[SHIM.script]}


@pytest.fixture(scope="module")
def oldest_python() -> str:
    found = Interpreters().find(OLDEST_PYTHON)
    if found is None:
        pytest.skip(f"no Python {OLDEST_PYTHON} interpreter on this machine")
    return found


@pytest.mark.parametrize("files", [RUNTIME, SHIM, COUNTER], ids=["coverage", "metadata", "counter"])
def test_every_runtime_file_compiles_on_the_oldest_python(files, oldest_python, tmp_path):
    folder = files.place(tmp_path)
    compile_all = "import sys\nfor p in sys.argv[1:]:\n    compile(open(p).read(), p, 'exec')\n"
    paths = [str(folder / name) for name in files.contents]
    done = subprocess.run(
        [oldest_python, "-c", compile_all, *paths], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
