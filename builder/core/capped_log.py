"""A log with a bound: the first and the last bytes of what a run printed, and the cut said
between them (a test printing 200 MB leaves a log of a few MiB, not 200 MiB per run)."""

from __future__ import annotations

import os
import select
import threading
import time
from typing import BinaryIO

HEAD_BYTES = 1024 * 1024
"""What a log keeps of the start of a run's output (collection, the first errors)."""
TAIL_BYTES = 1024 * 1024
"""What a log keeps of the end of a run's output (the last errors, the summary)."""
_CHUNK = 65536
_DRAIN_S = 1.0
"""How long output still in the pipe is read once the run has ended."""


class CappedLog:
    """Writes the first ``head`` bytes to ``handle`` as they come and holds the last ``tail``;
    :meth:`close` writes a line saying how many bytes were cut, if any, then the tail."""

    def __init__(self, handle: BinaryIO, head: int = HEAD_BYTES, tail: int = TAIL_BYTES) -> None:
        self.handle, self.head, self.tail = handle, head, tail
        self.written = 0  # bytes received
        self._held = bytearray()

    def write(self, data: bytes) -> None:
        room = max(self.head - self.written, 0)
        if room:
            self.handle.write(data[:room])
        self.written += len(data)
        self._held += data[room:]
        if len(self._held) > 2 * self.tail:  # trimmed now and then, not at every write
            del self._held[: len(self._held) - self.tail]

    @property
    def cut(self) -> int:
        """Bytes of output the log leaves out."""
        return max(self.written - self.head - self.tail, 0)

    def close(self) -> None:
        kept = bytes(self._held[-self.tail :]) if self.tail else b""
        if self.cut:
            self.handle.write(
                f"\n[swt-builder: {self.cut} bytes of output cut here; this log keeps the first "
                f"{self.head} and the last {self.tail} of {self.written} bytes]\n".encode()
            )
        self.handle.write(kept)
        self.handle.flush()


class PipeDrain:
    """A thread copying a pipe's read end into a :class:`CappedLog` until the pipe closes or
    :meth:`finish` is called (a process left holding the pipe cannot keep it waiting)."""

    def __init__(self, fd: int, log: CappedLog) -> None:
        self.fd, self.log = fd, log
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        deadline = None
        while True:
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if self._stop.is_set():
                deadline = deadline or time.monotonic() + _DRAIN_S
                if not ready or time.monotonic() > deadline:
                    return
            if not ready:
                continue
            chunk = os.read(self.fd, _CHUNK)
            if not chunk:
                return
            self.log.write(chunk)

    def finish(self) -> None:
        """Read what is still in the pipe, stop, close the pipe and the log."""
        self._stop.set()
        self._thread.join()
        os.close(self.fd)
        self.log.close()


__all__ = ["HEAD_BYTES", "TAIL_BYTES", "CappedLog", "PipeDrain"]
