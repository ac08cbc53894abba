"""The only way out of a sandboxed environment build: an HTTP proxy to the package index hosts.

A build runs in its own network namespace with loopback alone. Inside it, a forwarder (see
``sandbox.forwarded``) listens on ``127.0.0.1:PORT`` and passes each connection to this proxy's
Unix socket, which the builder serves: ``CONNECT host:port`` (HTTPS) and absolute-form HTTP
requests are relayed when the host is allowed — the index hosts of the build's settings (PyPI by
default, ``PIP_INDEX_URL``/``UV_INDEX_URL`` and the other index settings) and
``validation.build_hosts`` — and answered ``403`` otherwise. A build's ``setup.py`` can then
fetch packages, and nothing else.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import urllib.request
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from builder.core.faults import InfrastructureError

DEFAULT_INDEX_HOSTS = ("pypi.org", "files.pythonhosted.org")
"""PyPI: its simple index and the host of its files."""
INDEX_SETTINGS = (
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS",
    "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_FIND_LINKS",
)  # fmt: skip
"""Settings whose URLs name index hosts a build may reach."""
ANY = "*"
"""In ``validation.build_hosts``: any host (the build's network is not limited)."""
PROXY_SETTINGS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
"""Proxy settings (either case) a limited build never keeps: they name the forwarder only."""
_HEAD_LIMIT = 65536


def allowed_hosts(env: Mapping[str, str], extra: Iterable[str] = ()) -> frozenset[str]:
    """PyPI's hosts, the hosts of every index URL in ``env``'s index settings, and ``extra``."""
    hosts = set(DEFAULT_INDEX_HOSTS) | {host.lower() for host in extra}
    for name in INDEX_SETTINGS:
        for word in env.get(name, "").replace(",", " ").split():
            url = word.split("=", 1)[1] if "=" in word and "://" not in word.split("=")[0] else word
            host = urlsplit(url).hostname
            if host:
                hosts.add(host.lower())
    return frozenset(hosts)


def through_forwarder(env: Mapping[str, str], port: int) -> dict[str, str]:
    """``env`` with every proxy setting pointing at the build's forwarder on ``127.0.0.1:port``
    (the builder's own proxy, if any, is used by the index proxy outside)."""
    kept = {k: v for k, v in env.items() if k.upper() not in PROXY_SETTINGS}
    url = f"http://127.0.0.1:{port}"
    return {**kept, "HTTP_PROXY": url, "HTTPS_PROXY": url, "http_proxy": url, "https_proxy": url}


class IndexUnreachable(InfrastructureError):
    """A build failed while a package index host it may reach could not be reached."""

    fault = "index"


class IndexProxy:
    """Serves the proxy on ``socket_path`` in a thread, from ``start`` to ``stop``; hosts
    refused are kept in :attr:`refused` (for the build log), allowed ones that could not be
    reached in :attr:`unreachable` (a fault of the machine, see IndexUnreachable)."""

    def __init__(self, socket_path: Path, allowed: frozenset[str]) -> None:
        self.socket_path = Path(socket_path)
        self.allowed = allowed
        self.refused: list[str] = []
        self.unreachable: list[str] = []
        self._server: socket.socket | None = None

    def __enter__(self) -> IndexProxy:
        self.socket_path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(self.socket_path))
        server.listen(64)
        self._server = server
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()

    def refusals(self) -> str:
        """The build log's lines naming each host refused since the last call (then forgotten)."""
        hosts, self.refused = sorted(set(self.refused)), []
        return "".join(
            f"network: {host} refused (not a package index host; "
            "validation.build_hosts allows more)\n"
            for host in hosts
        )

    def permits(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        return ANY in self.allowed or host in self.allowed

    def _serve(self) -> None:
        assert self._server is not None
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:  # closed: the build is over
                return
            threading.Thread(target=self._handle, args=(client,), daemon=True).start()

    def _handle(self, client: socket.socket) -> None:
        """One client's request, answered or relayed; a client or index that goes away part way
        (a build step ended, a connection reset) ends it without a word: nobody is left to
        answer, and a thread's traceback would only litter the builder's output."""
        with contextlib.closing(client):
            try:
                self._exchange(client)
            except OSError:
                return

    def _exchange(self, client: socket.socket) -> None:
        head = _read_head(client)
        if head is None:
            return
        head, _, leftover = head.partition(b"\r\n\r\n")
        first, _, rest = (head + b"\r\n\r\n").partition(b"\r\n")
        parts = first.decode("latin-1").split()
        if len(parts) != 3:
            client.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            return
        method, target, version = parts
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            upstream_request = None
        else:
            url = urlsplit(target)
            host, port = url.hostname or "", str(url.port or 80)
            path = url.path or "/"
            path += f"?{url.query}" if url.query else ""
            upstream_request = f"{method} {path} {version}\r\n".encode() + rest + leftover
        if not host or not port.isdigit() or not self.permits(host):
            self.refused.append(host or target)
            message = f"{host or target} is not a package index host this build may reach"
            body = message.encode()
            client.sendall(
                b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            return
        try:
            upstream = _connect(host, int(port))
        except OSError as error:
            self.unreachable.append(f"{host}:{port} ({error})")
            body = f"cannot reach {host}:{port}: {error}".encode()
            client.sendall(
                b"HTTP/1.1 502 Bad Gateway\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            return
        with contextlib.closing(upstream):
            if upstream_request is None:
                client.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                if leftover:  # bytes the client sent right after its request
                    upstream.sendall(leftover)
            else:
                upstream.sendall(upstream_request)
            _relay(client, upstream)


def _read_head(client: socket.socket) -> bytes | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(4096)
        if not chunk or len(data) > _HEAD_LIMIT:
            return None
        data += chunk
    return data


def _connect(host: str, port: int) -> socket.socket:
    """A connection to ``host:port``, through the builder's own HTTPS proxy when it has one and
    its ``NO_PROXY`` does not exempt the host (either case, as urllib reads them)."""
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get("https")
    if not proxy or urllib.request.proxy_bypass_environment(host, proxies):
        return socket.create_connection((host, port), timeout=60)
    parsed = urlsplit(proxy)
    upstream = socket.create_connection((parsed.hostname, parsed.port or 3128), timeout=60)
    upstream.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    head = _read_head(upstream) or b""
    if b" 200 " not in head.split(b"\r\n", 1)[0]:
        upstream.close()
        raise OSError(f"the builder's proxy refused {host}:{port}")
    return upstream


def _relay(one: socket.socket, other: socket.socket) -> None:
    """Copy both ways until either side closes."""
    one.settimeout(None)
    other.settimeout(None)

    def pump(source: socket.socket, target: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                target.sendall(chunk)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                target.shutdown(socket.SHUT_WR)

    back = threading.Thread(target=pump, args=(other, one), daemon=True)
    back.start()
    pump(one, other)
    back.join()
