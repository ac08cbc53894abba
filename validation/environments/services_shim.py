"""Starts the run's local stand-ins for network services, runs a command, stops them.

Run by the environment's interpreter (any Python from 3.6 on, standard library only), copied into
the run (see ``services.SHIM``): ``python _swt_services.py NAME[,NAME…] COMMAND...`` serves each
named service on the loopback of the run's own network namespace (a free port), exports the
variable the tests read (``HTTPBIN_URL``), runs COMMAND as its child and exits with its status
once the services are stopped. A service that cannot start (its package is not installed) is
named on stderr and the command runs without it.
"""

import os
import signal
import subprocess
import sys
import threading
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args):  # the tests' output is the run's log, not the service's
        pass


def httpbin():
    """httpbin's WSGI app (the ``httpbin`` package) and the variable its URL goes in."""
    from httpbin import app

    return app, "HTTPBIN_URL"


SERVICES = {"httpbin": httpbin}


def start(name):
    """The running server of service ``name`` and its variables, or None (said on stderr)."""
    try:
        app, variable = SERVICES[name]()
    except Exception as error:  # any failure to load it: the tests run without it
        sys.stderr.write(f"swt: service {name} not started: {error!r}\n")
        return None
    server = make_server("127.0.0.1", 0, app, server_class=_Server, handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    return server, {variable: url}


def main(argv):
    names, command = argv[0], argv[1:]
    env = dict(os.environ)
    servers = []
    for name in filter(None, names.split(",")):
        started = start(name)
        if started is not None:
            servers.append(started[0])
            env.update(started[1])
    sys.stdout.flush()
    sys.stderr.flush()
    child = subprocess.Popen(command, env=env)
    for forwarded in (signal.SIGTERM, signal.SIGINT):
        signal.signal(forwarded, lambda number, frame: child.send_signal(number))
    code = child.wait()
    for server in servers:
        server.shutdown()
        server.server_close()
    if code < 0:  # killed by a signal: end the same way
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
