"""A JSON HTTP server on 127.0.0.1 (ephemeral port): a route table, a request log, start/stop."""

from __future__ import annotations

import dataclasses
import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from builder.core.errors import SwtError

__all__ = ["LoopbackServer", "Refusal", "Request", "Response", "Route", "ServedRequest"]


@dataclass(frozen=True)
class Request:
    """One request: its 1-based ordinal, and ``params`` from the named groups of its route."""

    index: int
    method: str
    path: str
    query: dict[str, str]  # the last value of a repeated parameter wins
    headers: Mapping[str, str]
    body: bytes
    params: dict[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        """The body parsed as JSON (an empty body is ``{}``)."""
        return json.loads(self.body or b"{}")


@dataclass
class Response:
    """An answer: ``body`` is JSON-serialisable or raw bytes; ``status=None`` drops the connection.

    ``fault`` names why this is not the normal answer (an injected failure); it is logged.
    """

    status: int | None
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    fault: str | None = None


class Refusal(SwtError):
    """Raised by a route handler to answer at once with ``response`` (a 401, a 404, ...)."""

    def __init__(self, response: Response) -> None:
        super().__init__(f"refused with {response.status}")
        self.response = response


@dataclass(frozen=True)
class ServedRequest:
    """Everything logged about one request; ``authorization`` is kept out of repr."""

    index: int
    method: str
    path: str
    query: dict[str, str]
    status: int | None
    fault: str | None
    authorization: str | None = field(repr=False)


Route = tuple[str, str, Callable[[Request], Response]]
"""``(method, path regex, handler)``: the regex must match the whole (unquoted) path."""


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    loopback: LoopbackServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10
    server: _HTTPServer

    def do_GET(self) -> None:
        self._serve()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def version_string(self) -> str:
        return self.server.loopback.server_version

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Stay silent: tests should not print requests (or anything near a token)."""

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        loopback = self.server.loopback
        response = loopback._answer(self.command, self.path, self.headers, body)
        if response.status is None:
            self.close_connection = True
            return
        payload = loopback.encode(response.body)
        kind = (
            "application/octet-stream" if isinstance(response.body, bytes) else "application/json"
        )
        self.send_response(response.status)
        for name, value in {"Content-Type": kind, **response.headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class LoopbackServer:
    """Serve ``routes`` on ``127.0.0.1`` from construction until :meth:`stop` (or ``with`` exits).

    Requests are answered one at a time (under :attr:`_lock`), so handlers may change state
    freely. Subclasses override :meth:`respond` to wrap routing (faults, budgets),
    :meth:`not_found` and :meth:`encode`.
    """

    server_version = "loopback"

    def __init__(self, routes: Sequence[Route], *, name: str = "loopback") -> None:
        self._routes = [
            (method, re.compile(pattern), handler) for method, pattern, handler in routes
        ]
        self._lock = threading.Lock()
        self._log: list[ServedRequest] = []
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.loopback = self
        host, port = self._httpd.server_address[:2]
        self.url = f"http://{host}:{port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=name,
            daemon=True,
        )
        self._thread.start()
        self._stopped = False

    def __enter__(self):
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(url={self.url!r}, served={len(self._log)})"

    def stop(self) -> None:
        """Stop serving and release the port (idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)

    @property
    def log(self) -> list[ServedRequest]:
        """Every request received, in order."""
        with self._lock:
            return list(self._log)

    def respond(self, request: Request) -> Response:
        """The answer to ``request``: by default, its route's."""
        return self.dispatch(request)

    def dispatch(self, request: Request) -> Response:
        """Call the first route matching the method and path, or answer :meth:`not_found`."""
        for method, pattern, handler in self._routes:
            match = pattern.fullmatch(request.path)
            if match is not None and method == request.method:
                try:
                    return handler(dataclasses.replace(request, params=match.groupdict()))
                except Refusal as refusal:
                    return refusal.response
        return self.not_found(request)

    def not_found(self, request: Request) -> Response:
        return Response(404, {"error": f"no route {request.method} {request.path}"})

    def encode(self, body: Any) -> bytes:
        """The bytes of a response body: raw bytes as they are, anything else as JSON."""
        if isinstance(body, bytes):
            return body
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    def _answer(self, method: str, target: str, headers: Mapping[str, str], body: bytes):
        parts = urlsplit(target)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        with self._lock:
            index = len(self._log) + 1
            request = Request(index, method, unquote(parts.path), query, headers, body)
            response = self.respond(request)
            auth = headers.get("Authorization")
            served = ServedRequest(
                index, method, request.path, query, response.status, response.fault, auth
            )
            self._log.append(served)
        return response
