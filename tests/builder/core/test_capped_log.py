"""A run's log keeps the first and the last bytes of its output and says what it cut."""

import io
import os

from builder.core.capped_log import CappedLog, PipeDrain


def test_output_within_the_bound_is_kept_whole():
    handle = io.BytesIO()
    log = CappedLog(handle, head=8, tail=8)
    for piece in (b"0123", b"456789", b"abcdef"):
        log.write(piece)
    log.close()
    assert handle.getvalue() == b"0123456789abcdef" and log.cut == 0


def test_output_past_the_bound_keeps_head_and_tail_and_says_the_cut():
    handle = io.BytesIO()
    log = CappedLog(handle, head=4, tail=3)
    for number in range(1000):
        log.write(b"%04d" % number)
    log.close()
    text = handle.getvalue()
    assert text.startswith(b"0000\n[swt-builder: 3993 bytes of output cut here;")
    assert text.endswith(b"of 4000 bytes]\n999")


def test_a_pipe_is_drained_even_while_something_still_holds_it():
    read_end, write_end = os.pipe()
    handle = io.BytesIO()
    drain = PipeDrain(read_end, CappedLog(handle, head=100, tail=100))
    os.write(write_end, b"printed before the end\n")
    drain.finish()  # the write end is still open: a process left behind holds it
    os.close(write_end)
    assert handle.getvalue() == b"printed before the end\n"
