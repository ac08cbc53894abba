"""The builds' index proxy: which hosts it lets through, and how it answers the others."""

import socket
import threading

import pytest

from validation.environments.index_proxy import ANY, IndexProxy, allowed_hosts


def test_allowed_hosts_are_pypi_the_index_settings_and_the_extra_ones():
    env = {
        "PIP_INDEX_URL": "https://mirror.example/simple",
        "PIP_EXTRA_INDEX_URL": "https://a.example/simple https://b.example/simple",
        "UV_INDEX": "internal=https://pkgs.example/simple",
        "PIP_FIND_LINKS": "/opt/wheels",
        "GITHUB_TOKEN": "https://not.an.index/",
    }
    assert allowed_hosts(env, ["git.example"]) == {
        "pypi.org", "files.pythonhosted.org", "mirror.example", "a.example", "b.example",
        "pkgs.example", "git.example",
    }  # fmt: skip


@pytest.fixture
def upstream():
    """A plain TCP server on loopback: it answers 'hello:' and the first bytes it got."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve():
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            got = client.recv(1024)
            client.sendall(b"hello:" + got)
            client.close()

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


def ask(path, request: bytes) -> bytes:
    client = socket.socket(socket.AF_UNIX)
    client.settimeout(10)
    client.connect(str(path))
    client.sendall(request)
    data = b""
    while chunk := client.recv(4096):
        data += chunk
    return data


def test_connect_to_an_allowed_host_is_relayed_and_others_are_refused(tmp_path, upstream):
    with IndexProxy(tmp_path / "s", frozenset({"127.0.0.1"})) as proxy:
        allowed = ask(tmp_path / "s", f"CONNECT 127.0.0.1:{upstream} HTTP/1.1\r\n\r\nhi".encode())
        assert allowed == b"HTTP/1.1 200 Connection Established\r\n\r\nhello:hi"
        refused = ask(tmp_path / "s", b"CONNECT example.com:443 HTTP/1.1\r\n\r\n")
        assert refused.startswith(b"HTTP/1.1 403 Forbidden")
        assert b"example.com is not a package index host" in refused
        plain = ask(
            tmp_path / "s", f"GET http://127.0.0.1:{upstream}/simple/ HTTP/1.1\r\n\r\n".encode()
        )
        assert plain == b"hello:GET /simple/ HTTP/1.1\r\n\r\n"
        assert ask(tmp_path / "s", b"nonsense\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert proxy.refused == ["example.com"]
    assert not (tmp_path / "s").exists()


def test_any_host_when_asked(tmp_path, upstream):
    with IndexProxy(tmp_path / "s", frozenset({ANY})) as proxy:
        assert proxy.permits("anything.example")
        reply = ask(tmp_path / "s", f"CONNECT localhost:{upstream} HTTP/1.1\r\n\r\nx".encode())
        assert reply == b"HTTP/1.1 200 Connection Established\r\n\r\nhello:x"


@pytest.mark.parametrize("no_proxy", ["*", "127.0.0.1", "example.org,127.0.0.1"])
def test_the_builders_no_proxy_exempts_hosts_from_its_proxy(
    tmp_path, upstream, monkeypatch, no_proxy
):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")  # would never answer
    monkeypatch.setenv("NO_PROXY", no_proxy)
    with IndexProxy(tmp_path / "s", frozenset({"127.0.0.1"})):
        reply = ask(tmp_path / "s", f"CONNECT 127.0.0.1:{upstream} HTTP/1.1\r\n\r\nx".encode())
    assert reply == b"HTTP/1.1 200 Connection Established\r\n\r\nhello:x"


def test_the_builders_proxy_carries_what_no_proxy_does_not_exempt(tmp_path, upstream, monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{upstream}")  # 'hello:' is no 200
    monkeypatch.setenv("NO_PROXY", "example.org")
    with IndexProxy(tmp_path / "s", frozenset({"127.0.0.1"})):
        reply = ask(tmp_path / "s", f"CONNECT 127.0.0.1:{upstream} HTTP/1.1\r\n\r\nx".encode())
    assert not reply.startswith(b"HTTP/1.1 200")  # the upstream proxy was asked, and refused


def test_a_client_that_goes_away_before_its_answer_ends_its_exchange_quietly(tmp_path):
    """A build step that ends mid-request left a thread's BrokenPipeError traceback in the
    builder's output for each such connection."""
    proxy = IndexProxy(tmp_path / "s", frozenset({"127.0.0.1"}))
    ours, theirs = socket.socketpair()
    theirs.sendall(b"CONNECT example.com:443 HTTP/1.1\r\n\r\n")
    theirs.close()  # gone before the answer: writing it fails with EPIPE
    proxy._handle(ours)  # no exception
    assert proxy.refused == ["example.com"]
    assert ours.fileno() == -1  # closed
