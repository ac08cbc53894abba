"""GitHub's rate limits and injected faults for the replay server: budgets per token, headers."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from recipes.demo.github_store import github_error
from recipes.demo.loopback import Response

__all__ = ["FAULT_KINDS", "Limits", "request_id"]

#: Fault kinds the server can inject.
FAULT_KINDS: tuple[str, ...] = ("rate_limit", "secondary", "bad_gateway", "drop")

_PRIMARY_MESSAGE = (
    "API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, "
    "please include the request ID {request_id}."
)
_SECONDARY_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try "
    "again. If you reach out to GitHub Support for help, please include the request ID "
    "{request_id}."
)


def request_id(index: int) -> str:
    """A GitHub-looking request id, derived from the request ordinal."""
    return f"REPLAY:{index:08X}"


@dataclass
class _Budget:
    """Rate-limit use of one token for one resource within the current window."""

    used: int
    reset: float  # epoch seconds; headers report it rounded up


class Limits:
    """Which requests get a fault, and each token's budget per resource (see ReplayServer).

    ``faults`` scripts faults by 1-based request ordinal; ``fault_rate`` adds random ones
    drawn from ``random.Random(seed)``; ``rate_limit`` requests per ``rate_limit_window``
    seconds per token and resource.
    """

    def __init__(
        self,
        *,
        faults: Mapping[int, str] | None = None,
        fault_rate: float = 0.0,
        seed: int = 0,
        fault_kinds: Sequence[str] = FAULT_KINDS,
        secondary_status: int = 403,
        retry_after: int | None = 1,
        reset_after: int = 1,
        rate_limit: int = 5000,
        rate_limit_window: float = 3600,
    ) -> None:
        _check_fault_settings(faults or {}, fault_rate, fault_kinds, secondary_status)
        self._faults = dict(faults or {})
        self._fault_rate = fault_rate
        self._fault_kinds = tuple(fault_kinds)
        self._random = random.Random(seed)
        self._secondary_status = secondary_status
        self._retry_after = retry_after
        self._reset_after = reset_after
        self._rate_limit = rate_limit
        self._window = rate_limit_window
        self._budgets: dict[tuple[str, str], _Budget] = {}

    def fault(self, index: int, auth: str | None, resource: str) -> Response | None:
        """The fault to serve for request ``index``, if any (a scripted one wins)."""
        kind = self._faults.get(index)
        roll = self._random.random()
        if kind is None and roll < self._fault_rate:
            kind = self._random.choice(self._fault_kinds)
        if kind is None:
            return None
        budget = self._budget(auth, resource)
        makers: dict[str, Callable[[_Budget, str, int], Response]] = {
            "rate_limit": self._primary_limit_fault,
            "secondary": self._secondary_fault,
            "bad_gateway": self._bad_gateway_fault,
            "drop": lambda *_: Response(None),
        }
        response = makers[kind](budget, resource, index)
        response.fault = kind
        return response

    def charge(
        self, response: Response, auth: str | None, resource: str, index: int, *, counts: bool
    ) -> Response:
        """Use one unit of the token's budget (if it ``counts``), or refuse: primary limit."""
        budget = self._budget(auth, resource)
        if counts and budget.used >= self._rate_limit:
            refused = self._primary_limit(budget, resource, index)
            refused.fault = "exhausted"
            return refused
        if counts:
            budget.used += 1
        response.headers = {**self._rate_headers(budget, resource), **response.headers}
        return response

    def overview(self, auth: str | None) -> dict:
        """The body of ``GET /rate_limit`` for this token."""
        resources = {}
        for resource in ("core", "graphql", "search"):
            budget = self._budget(auth, resource)
            resources[resource] = {
                "limit": self._rate_limit,
                "used": budget.used,
                "remaining": max(self._rate_limit - budget.used, 0),
                "reset": math.ceil(budget.reset),
            }
        return {"resources": resources, "rate": resources["core"]}

    def _primary_limit_fault(self, budget: _Budget, resource: str, index: int) -> Response:
        reset = int(time.time()) + self._reset_after
        return self._primary_limit(_Budget(self._rate_limit, reset), resource, index)

    def _primary_limit(self, budget: _Budget, resource: str, index: int) -> Response:
        response = github_error(403, _PRIMARY_MESSAGE.format(request_id=request_id(index)))
        response.headers = self._rate_headers(budget, resource, remaining=0)
        return response

    def _secondary_fault(self, budget: _Budget, resource: str, index: int) -> Response:
        message = _SECONDARY_MESSAGE.format(request_id=request_id(index))
        response = github_error(self._secondary_status, message)
        response.headers = self._rate_headers(budget, resource)
        if self._retry_after is not None:
            response.headers["Retry-After"] = str(self._retry_after)
        return response

    def _bad_gateway_fault(self, budget: _Budget, resource: str, index: int) -> Response:
        return Response(502, {"message": "Server Error"}, self._rate_headers(budget, resource))

    def _budget(self, auth: str | None, resource: str) -> _Budget:
        """The current window's budget for this token and resource."""
        now = time.time()
        key = (auth or "", resource)
        budget = self._budgets.get(key)
        if budget is None or now >= budget.reset:
            budget = _Budget(0, now + self._window)
            self._budgets[key] = budget
        return budget

    def _rate_headers(
        self, budget: _Budget, resource: str, remaining: int | None = None
    ) -> dict[str, str]:
        left = max(self._rate_limit - budget.used, 0) if remaining is None else remaining
        return {
            "Content-Type": "application/json; charset=utf-8",
            "X-GitHub-Media-Type": "github.v3; format=json",
            "X-GitHub-Api-Version-Selected": "2022-11-28",
            "X-RateLimit-Limit": str(self._rate_limit),
            "X-RateLimit-Remaining": str(left),
            "X-RateLimit-Reset": str(math.ceil(budget.reset)),
            "X-RateLimit-Used": str(self._rate_limit - left),
            "X-RateLimit-Resource": resource,
        }


def _check_fault_settings(
    faults: Mapping[int, str], rate: float, kinds: Sequence[str], secondary_status: int
) -> None:
    """Reject unknown fault kinds, bad ordinals, rates and statuses early."""
    unknown = {k for k in (*faults.values(), *kinds) if k not in FAULT_KINDS}
    if unknown:
        raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {FAULT_KINDS}")
    if any(not isinstance(i, int) or i < 1 for i in faults):
        raise ValueError("fault script keys are 1-based request ordinals")
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"fault_rate must be within [0, 1], got {rate}")
    if rate > 0 and not kinds:
        raise ValueError("fault_rate needs at least one fault kind")
    if secondary_status not in (403, 429):
        raise ValueError("secondary rate limits are served as 403 or 429")
