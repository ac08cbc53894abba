"""Runs reproduction scripts one after another, as ``python SCRIPT`` would, and writes each one's
outcome to a report file; run by the environment's interpreter (Python ≥ 3.6, stdlib only).

    python script_runner.py REPORT SCRIPT [SCRIPT ...]

A script passes when it ends normally or with ``sys.exit(0)``/``sys.exit(None)``; any other exit
status or an exception fails it. Each script runs as ``__main__`` with its directory first on
``sys.path``, in this one interpreter (so coverage.py measures it). One JSON line per script is
appended to REPORT as soon as it ends: a script that ends the interpreter itself (``os._exit``)
is left unreported with the ones after it, and they count as failed.
"""

import json
import os
import runpy
import sys
import traceback


def run(path):
    """0 when the script passed, else its exit status (1 for an exception)."""
    saved = list(sys.path)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        runpy.run_path(path, run_name="__main__")
        return 0
    except SystemExit as stop:
        code = stop.code
        if code is None:
            return 0
        return code if isinstance(code, int) else 1
    except BaseException:  # noqa: BLE001 - a script's failure of any kind is its outcome
        traceback.print_exc()
        return 1
    finally:
        sys.path[:] = saved


def main(argv):
    report, scripts = argv[0], argv[1:]
    for script in scripts:
        print("=== running " + script, flush=True)
        status = run(script)
        print("=== " + script + " exit status " + str(status), flush=True)
        with open(report, "a") as handle:
            handle.write(json.dumps({"script": script, "status": status}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
