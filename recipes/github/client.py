"""A PyGithub client with token rotation, a rate-limit and backoff policy, and call counting."""

from __future__ import annotations

import collections
import dataclasses
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from typing import TypeVar
from urllib.parse import urlsplit

import requests
from github import Auth, Github, GithubException

from builder.core.errors import SwtError

__all__ = [
    "DEFAULT_BASE_URL",
    "GitHubClient",
    "GitHubUnavailable",
    "RateLimitWaitTooLong",
    "RetryPolicy",
    "tokens_from_environment",
    "web_hosts_for",
]

DEFAULT_BASE_URL = "https://api.github.com"
T = TypeVar("T")
_TRANSIENT_ERRORS = (
    requests.exceptions.ConnectionError,
    requests.exceptions.Timeout,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.RetryError,
)


class GitHubUnavailable(SwtError, RuntimeError):
    """The API kept failing (5xx, dropped connections, rate limits) past the retry budget."""


class RateLimitWaitTooLong(GitHubUnavailable):
    """Honouring a rate limit would mean waiting longer than the policy's ``max_wait_s``."""


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """How to wait and retry: rate limits are waited out (up to a cap), faults backed off."""

    max_attempts: int = 8
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    max_wait_s: float = 900.0
    secondary_wait_s: float = 60.0
    """Wait after a secondary rate limit that carries no Retry-After (GitHub asks ≥ 1 min)."""
    timeout_s: float = 30.0

    def backoff(self, attempt: int) -> float:
        return min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1))


def tokens_from_environment(environ: Mapping[str, str] | None = None) -> list[str]:
    """Tokens from ``GITHUB_TOKENS`` (comma/space separated) then ``GITHUB_TOKEN``, deduplicated."""
    environ = os.environ if environ is None else environ
    found = re.split(r"[\s,]+", environ.get("GITHUB_TOKENS", ""))
    found.append(environ.get("GITHUB_TOKEN", ""))
    tokens: list[str] = []
    for token in (t.strip() for t in found):
        if token and token not in tokens:
            tokens.append(token)
    return tokens


def web_hosts_for(base_url: str) -> tuple[str, ...]:
    """Hosts whose issue URLs count as references: github.com, plus an Enterprise host."""
    host = urlsplit(base_url).netloc.lower()
    if not host or host == "api.github.com":
        return ("github.com",)
    return ("github.com", host)


@dataclasses.dataclass
class _Slot:
    """One token (or anonymous access) with its own PyGithub instance and rate-limit state."""

    github: Github
    authenticated: bool
    blocked_until: float = 0.0


class GitHubClient:
    """Runs API calls through PyGithub with the policy; never prints, logs or keeps tokens.

    Each token gets its own :class:`github.Github` (PyGithub's own retries are off, so one
    attempt is one HTTP request and is counted).  A primary rate limit blocks the token until
    ``X-RateLimit-Reset`` and the next token is used; when all are blocked the client sleeps
    until the first reset, unless that exceeds ``policy.max_wait_s``.  ``Retry-After`` is
    honoured the same way; 5xx answers and dropped connections are retried with exponential
    backoff.  Other errors (404, 422, ...) reach the caller as PyGithub exceptions.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        tokens: list[str] | None = None,
        policy: RetryPolicy = RetryPolicy(),
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.policy = policy
        self._sleep = sleep
        self._clock = clock
        self._slots = [self._make_slot(token) for token in (tokens or [None])]
        self._current = 0
        self._lock = threading.Lock()
        self.calls: collections.Counter[str] = collections.Counter()
        self.retries: collections.Counter[str] = collections.Counter()
        self.waited_s = 0.0

    def _make_slot(self, token: str | None) -> _Slot:
        github = Github(
            base_url=self.base_url,
            auth=Auth.Token(token) if token else None,
            per_page=100,
            retry=None,
            timeout=int(self.policy.timeout_s),
            seconds_between_requests=None,
            seconds_between_writes=None,
            lazy=True,
        )
        return _Slot(github, authenticated=token is not None)

    def __repr__(self) -> str:
        return (
            f"GitHubClient(base_url={self.base_url!r}, tokens={self.token_count}, "
            f"calls={self.total_calls})"
        )

    @property
    def token_count(self) -> int:
        return sum(slot.authenticated for slot in self._slots)

    @property
    def authenticated(self) -> bool:
        return self.token_count > 0

    @property
    def total_calls(self) -> int:
        """HTTP requests sent, failed attempts included."""
        return sum(self.calls.values())

    def call(self, kind: str, function: Callable[[Github], T]) -> T:
        """Run ``function(github)`` (which must make exactly one request) under the policy."""
        last: BaseException | None = None
        for attempt in range(1, self.policy.max_attempts + 1):
            slot = self._pick_slot()
            with self._lock:
                self.calls[kind] += 1
            try:
                return function(slot.github)
            except GithubException as error:
                delay = self._delay_for(slot, error, attempt)
                last = error
            except _TRANSIENT_ERRORS as error:
                delay = self.policy.backoff(attempt)
                last = error
            with self._lock:
                self.retries[kind] += 1
            self._wait(delay)
        raise GitHubUnavailable(
            f"{kind}: gave up after {self.policy.max_attempts} attempts: {_describe(last)}"
        )

    def _delay_for(self, slot: _Slot, error: GithubException, attempt: int) -> float:
        """Seconds to wait before retrying ``error``, or re-raise it when it is not transient."""
        status = error.status
        headers = {k.lower(): v for k, v in (error.headers or {}).items()}
        if status >= 500:
            return self.policy.backoff(attempt)
        if status not in (403, 429):
            raise error
        if "retry-after" in headers:
            delay = float(headers["retry-after"])
            if delay > self.policy.max_wait_s:
                raise RateLimitWaitTooLong(
                    f"Retry-After asks for {delay:.0f}s, more than max_wait_s "
                    f"{self.policy.max_wait_s:.0f}s"
                ) from error
            return delay
        if headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
            with self._lock:
                slot.blocked_until = max(slot.blocked_until, float(headers["x-ratelimit-reset"]))
            return 0.0  # _pick_slot rotates to another token or waits for the reset
        if "secondary rate limit" in str(error.data).lower() or status == 429:
            return self.policy.secondary_wait_s
        raise error

    def _pick_slot(self) -> _Slot:
        """The current token if usable, else the next usable one, else wait for a reset."""
        with self._lock:
            now = self._clock()
            order = self._slots[self._current :] + self._slots[: self._current]
            for slot in order:
                if slot.blocked_until <= now:
                    self._current = self._slots.index(slot)
                    return slot
            soonest = min(self._slots, key=lambda s: s.blocked_until)
            delay = soonest.blocked_until - now + 1.0
        if delay > self.policy.max_wait_s:
            raise RateLimitWaitTooLong(
                f"every token is rate limited for {delay:.0f}s more, longer than max_wait_s "
                f"{self.policy.max_wait_s:.0f}s"
            )
        self._wait(delay)
        with self._lock:
            soonest.blocked_until = 0.0
            self._current = self._slots.index(soonest)
        return soonest

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            with self._lock:
                self.waited_s += seconds
            self._sleep(seconds)

    def summary(self) -> str:
        """One line on the API use of this client (no tokens)."""
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(self.calls.items()))
        retried = sum(self.retries.values())
        return (
            f"{self.total_calls} API calls ({kinds or 'none'}); {retried} retried; "
            f"waited {self.waited_s:.1f}s"
        )


def _describe(error: BaseException | None) -> str:
    if isinstance(error, GithubException):
        message = error.data.get("message") if isinstance(error.data, dict) else error.data
        return f"HTTP {error.status}: {message}"
    return f"{type(error).__name__}: {error}"
