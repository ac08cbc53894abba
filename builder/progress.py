"""Progress bars that appear once their total is known and close before any line is printed."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import IO, Any


class Progress:
    """What a stage's ``progress`` argument needs (``reset(total)``, ``update(n)``), drawn as
    one tqdm bar per ``reset``: nothing is drawn before a total is known (no ``0it`` bar), and
    :meth:`echo` closes the bar before printing, so a bar never shares a line with a message
    and is never redrawn after it.
    """

    def __init__(
        self,
        description: str,
        unit: str,
        *,
        enabled: bool = True,
        echo: Callable[[str], None] = print,
        file: IO[str] | None = None,
    ) -> None:
        self.description, self.unit, self.enabled = description, unit, enabled
        self._print = echo
        self._file = file
        self._bar: Any = None

    def reset(self, total: int | None = None) -> None:
        self.close()
        if self.enabled and total != 0:  # nothing to wait for: no bar
            from tqdm import tqdm

            self._bar = tqdm(
                desc=self.description,
                unit=self.unit,
                total=total,
                file=self._file or sys.stderr,
            )

    def update(self, count: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(count)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def echo(self, line: str) -> None:
        """Print a line of the run's report: the bar (if any) is finished first."""
        self.close()
        self._print(line)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
