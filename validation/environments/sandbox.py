"""bubblewrap command lines for untrusted code: a test run, or an environment build.

Both get new PID, IPC and UTS namespaces (a run also a network one, loopback only), no
capabilities, an unprivileged uid (a new user namespace; or, when the builder is root, a host
uid of their own: ``sandbox_user``), a minimal root (``sandbox_root``: the system directories
read-only and only the paths the caller names), a fresh ``/proc``, ``/dev`` and ``/tmp``, their
own session, and die with the builder. The PID namespace ends with its first process: whatever
a run or build left behind (a double-forked daemon too) is killed by the kernel when it exits.
Only the mounts a caller names are writable.
"""

from __future__ import annotations

import functools
import json
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from builder.core.errors import SwtError
from validation.environments import sandbox_root
from validation.environments.sandbox_root import Link, Mount
from validation.environments.sandbox_user import User

SANDBOXES = ("bwrap", "none")
SANDBOX_VERSION = 2
"""Bump when what a sandboxed run sees changes (part of the local backend's fingerprint, so
results made in another sandbox are not reused). 2: the minimal root, an unprivileged uid
for a root builder, a writable /dev/shm."""
"""The values of ``validation.sandbox``."""
TESTBED = "/testbed"
"""Where a run sees its checkout (as in the Docker backend): logs and test ids name no host path."""
RUN_ROOT = "/swt"
"""Where a run sees its run dir: HOME, TMPDIR, scratch files and the toolkit's runtime files."""
FIX = 'apt-get install bubblewrap, or opt out with validation.sandbox = "none"'
"""What to do when bubblewrap cannot run (the error names it)."""
_PROBE = ("--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true")

_PRLIMIT_OPTIONS = {
    "RLIMIT_CPU": "--cpu",
    "RLIMIT_AS": "--as",
    "RLIMIT_NPROC": "--nproc",
    "RLIMIT_FSIZE": "--fsize",
}
_LIMITS = r"""
import json, os, resource, sys
for name, value in json.loads(sys.argv[1]).items():
    if value:
        which = getattr(resource, name)
        soft, hard = resource.getrlimit(which)
        hard = value if hard == resource.RLIM_INFINITY else min(hard, value)
        resource.setrlimit(which, (min(value, hard), hard))
os.execvp(sys.argv[2], sys.argv[2:])
"""
"""Exec shim: set resource limits (setrlimit), then exec the command (``python -I``: the
command's PYTHONPATH, which names untrusted code, is not read by the shim)."""


class SandboxUnavailable(SwtError, RuntimeError):
    """``validation.sandbox = "bwrap"`` but bubblewrap is missing or cannot make namespaces."""


def layered(directory: Path) -> list[Mount]:
    """``directory`` (where the sandbox sees it already) writable for the sandbox alone: a tmpfs
    holding each of its entries read-only; what the sandbox adds there vanishes with it (coverage
    writes its subprocess ``.pth`` file into site-packages, an environment runs share)."""
    directory = Path(os.path.realpath(directory))
    entries = sorted(directory.iterdir()) if directory.is_dir() else []
    return [Mount(None, str(directory)), *(Mount(entry, str(entry)) for entry in entries)]


def find_bwrap() -> str | None:
    """bubblewrap on PATH, or None."""
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=4)
def _probe(bwrap: str) -> str:
    """Why ``bwrap`` cannot make the sandbox's namespaces here; empty when it can."""
    completed = subprocess.run([bwrap, *_PROBE], capture_output=True, text=True, timeout=30)
    if completed.returncode == 0:
        return ""
    return (completed.stderr.strip() or f"exit {completed.returncode}").splitlines()[0]


def require(kind: str) -> str | None:
    """The bwrap binary for ``kind = "bwrap"`` (None for ``"none"``); raise SandboxUnavailable
    when bubblewrap is missing or cannot run here, naming the fix."""
    if kind == "none":
        return None
    if kind != "bwrap":
        raise ValueError(f"unknown sandbox {kind!r} (known: {', '.join(SANDBOXES)})")
    bwrap = find_bwrap()
    if bwrap is None:
        raise SandboxUnavailable(
            "the local backend runs untrusted code only in a bubblewrap sandbox, and bwrap is "
            f"not on PATH; fix: {FIX}"
        )
    why = _probe(bwrap)
    if why:
        raise SandboxUnavailable(
            f"{bwrap} cannot make the sandbox's namespaces here ({why}); fix: allow "
            f"unprivileged user namespaces (kernel.unprivileged_userns_clone=1), or {FIX}"
        )
    return bwrap


PROXY_PORT = 3128
"""Where a build's forwarder listens, on the loopback of the build's own network namespace."""
PROXY_DIR = "/swt-net"
"""Where a build sees the folder of the builder's index proxy socket (``index_proxy``)."""

_FORWARD = r"""
import os, socket, sys, threading
path, port, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
server = socket.socket()
server.bind(("127.0.0.1", port))
server.listen(64)
if os.fork() == 0:
    def pump(source, target):
        try:
            while True:
                chunk = source.recv(65536)
                if not chunk:
                    break
                target.sendall(chunk)
        except OSError:
            pass
        try:
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass
    def handle(client):
        upstream = socket.socket(socket.AF_UNIX)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            return
        threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
        pump(client, upstream)
    while True:
        client, _ = server.accept()
        threading.Thread(target=handle, args=(client,), daemon=True).start()
server.close()
os.execvp(argv[0], argv)
"""
"""Exec shim of a build: a child forwards ``127.0.0.1:PORT`` (in the build's own network
namespace) to the builder's index proxy socket, then the build command runs; the forwarder ends
with the namespace."""


def forwarded(python: str, socket_path: str, port: int, command: Sequence[str]) -> list[str]:
    """``command`` with a forwarder from ``127.0.0.1:port`` to the Unix socket ``socket_path``
    beside it (the build's only way to the network: see ``index_proxy``), run by ``python``
    (an interpreter the sandbox sees: the build's own; the script keeps to Python 3.6)."""
    return [python, "-I", "-c", _FORWARD, socket_path, str(port), *command]


def limited(rlimits: Mapping[str, int], command: Sequence[str]) -> list[str]:
    """``command`` with ``rlimits`` set (resource name → value, 0 = none): by ``prlimit(1)``
    (util-linux) where there is one, else by a Python exec shim. Either lowers the soft and
    hard limit to the value, never raising a hard limit the builder already has below it."""
    prlimit = _prlimit()
    if prlimit is None or not set(rlimits) <= set(_PRLIMIT_OPTIONS):
        return [sys.executable, "-I", "-c", _LIMITS, json.dumps(dict(rlimits)), *command]
    options = []
    for name, value in rlimits.items():
        if value:
            _, hard = resource.getrlimit(getattr(resource, name))
            hard = value if hard == resource.RLIM_INFINITY else min(hard, value)
            options.append(f"{_PRLIMIT_OPTIONS[name]}={min(value, hard)}:{hard}")
    return [prlimit, *options, "--", *command]


@functools.lru_cache(maxsize=1)
def _prlimit() -> str | None:
    return shutil.which("prlimit")


def command(
    bwrap: str,
    argv: Sequence[str],
    *,
    mounts: Iterable[Mount | Link],
    network: bool,
    cwd: str,
    user: User | None = None,
) -> list[str]:
    """``argv`` in a new sandbox: the system directories read-only (``sandbox_root``), ``mounts``
    on top (in order), nothing else of the host, the network cut unless ``network``, started in
    ``cwd``; as ``user`` (the builder is root: no user namespace, whose uid 0 would be the
    host's, but the host uid ``user``, every capability dropped) or as the builder's own uid."""
    shown = list(mounts)
    args = [bwrap, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    args += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if user is None:
        args.insert(1, "--unshare-user")
    else:  # bubblewrap keeps what the switch needs; setpriv drops it with root
        args += [item for cap in _SWITCH_CAPS for item in ("--cap-add", cap)]
        argv = _switched(user, argv)
    if sys.executable in argv:  # a shim of the builder's (no prlimit or setpriv here)
        shown += sandbox_root.interpreter(sys.executable)
    if not network:
        args.append("--unshare-net")  # bubblewrap brings loopback up in it
    args += sandbox_root.system()
    args += sandbox_root.layout(shown)
    args += ["--remount-ro", "/", "--chdir", cwd, "--", *argv]
    return args


SELF_TEST_TIMEOUT_S = 60.0
TRUE = shutil.which("true") or "/bin/true"
"""The command of a self-test: it reads nothing and prints nothing."""


def self_test(
    bwrap: str, rlimits: Mapping[str, int], user: User | None = None, mounts: Sequence = ()
) -> str | None:
    """Why a sandbox made now cannot run ``true`` (bubblewrap, the user switch and the limits
    as a run or build has them, ``mounts`` too), or None when it can: see :func:`attempt`."""
    argv = command(
        bwrap, limited(rlimits, [TRUE]), mounts=mounts, network=False, cwd="/", user=user
    )
    return attempt(argv)


def attempt(argv: Sequence[str]) -> str | None:
    """Run ``argv`` (a launcher chain ending in ``true``), for no record: None when it exits
    0, else its first line of complaint or its exit. Nothing of any record runs in it and the
    builder reads the launcher's exit itself, so this, unlike a refusal-shaped line in a run's
    output (which its code may have printed, ``refusal``), can decide a fault of the machine."""
    try:
        completed = subprocess.run(
            list(argv), capture_output=True, text=True, errors="replace",
            timeout=SELF_TEST_TIMEOUT_S, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"a sandbox running `true` did not end in {SELF_TEST_TIMEOUT_S:g} s"
    except OSError as error:
        return f"{argv[0]} cannot be started: {error.strerror or error}"
    if completed.returncode == 0:
        return None
    said = (completed.stderr.strip() or completed.stdout.strip()).splitlines()
    return said[0] if said else f"a sandbox running `true` exited {completed.returncode}"


_SWITCH_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
"""What the sandbox's first process keeps to become ``user`` (and drop its bounding set)."""
_SWITCH = r"""
import os, sys
uid, gid = int(sys.argv[1]), int(sys.argv[2])
os.setgroups([])
os.setresgid(gid, gid, gid)
os.setresuid(uid, uid, uid)
os.execvp(sys.argv[3], sys.argv[3:])
"""
"""Exec shim where there is no setpriv(1): become the unprivileged user, then exec."""


def _switched(user: User, argv: Sequence[str]) -> list[str]:
    """``argv`` run as ``user``: no groups, no capabilities (none inheritable, an empty bounding
    set), no new privileges (a setuid program cannot raise them again)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return [sys.executable, "-I", "-c", _SWITCH, str(user.uid), str(user.gid), *argv]
    return [
        setpriv, f"--reuid={user.uid}", f"--regid={user.gid}", "--clear-groups",
        "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--", *argv,
    ]  # fmt: skip


__all__ = [
    "FIX",
    "Link",
    "RUN_ROOT",
    "SANDBOXES",
    "TESTBED",
    "Mount",
    "SandboxUnavailable",
    "command",
    "find_bwrap",
    "layered",
    "limited",
    "require",
    "attempt",
    "self_test",
]
