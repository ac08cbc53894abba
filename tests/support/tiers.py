"""The marks of the slow tiers (registered in pyproject.toml), with their per-test time limits.

The default limit (``timeout`` in pyproject.toml) covers every quick test many times over; these
raise it where the work is known to be long. ``make test-quick`` leaves out ``slow`` and
``docker``; ``make test`` runs everything.
"""

from __future__ import annotations

import pytest

DOCKER = [pytest.mark.docker, pytest.mark.timeout(1800)]
"""Needs a Docker daemon. The first such test may wait for the base image to be built
(debootstrap, minutes on a cold machine), inside its fixtures' setup, which the limit counts."""

END_TO_END = [pytest.mark.slow, pytest.mark.timeout(900)]
"""Whole builds of the demo dataset: up to about 165 s a test on a loaded 2-core machine (the
module's shared build counts toward its first test)."""
