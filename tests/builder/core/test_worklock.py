"""The work dir lock: one holder at a time, who holds it in the message, released at the end."""

import json
import os

import pytest

from builder.core.errors import SwtError
from builder.core.worklock import HOLDER_NAME, WorkDirBusy, work_dir_lock


def test_a_second_holder_is_refused_with_the_first_ones_name(tmp_path):
    work = tmp_path / "work"
    with work_dir_lock(work, "build"):
        holder = json.loads((work / HOLDER_NAME).read_text())
        assert holder["pid"] == os.getpid() and holder["command"] == "build"
        with pytest.raises(WorkDirBusy, match=rf"in use by swt-builder build \(pid {os.getpid()}"):
            with work_dir_lock(work, "collect"):
                pytest.fail("a second holder entered")
        assert (work / HOLDER_NAME).is_file()  # the refused one leaves the holder's file
    assert not (work / HOLDER_NAME).exists()
    with work_dir_lock(work, "collect"):  # released: the next one gets it
        assert json.loads((work / HOLDER_NAME).read_text())["command"] == "collect"
    assert issubclass(WorkDirBusy, SwtError)


def test_the_lock_is_released_when_the_block_raises(tmp_path):
    with pytest.raises(KeyError):
        with work_dir_lock(tmp_path, "build"):
            raise KeyError("a bug")
    with work_dir_lock(tmp_path, "build"):
        pass
