"""Hostile predictions, scored by ``evaluate`` on a one-instance release (local backend; the
sandbox is the validation stage's, which test_code.py runs on both backends): a patch that
cannot be trusted is not applicable with its reason in the instance's report; test code that
misbehaves runs contained, and the report shows how its runs ended."""

import json
import socket

import pytest

from builder.core.config import Config, LimitsConfig, ValidationConfig
from builder.evaluate.run import Request, evaluate
from tests.support import docker as docker_support
from tests.support.hostile import MARK, Listener, Project, hostile_tests, stage
from tests.support.instances import make_release

PREDICTED = "tests/test_predicted.py"
LIMITS = {"timeout_s": 8.0, "memory_mb": 512}
RAW = "<raw 0xff byte>"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return Project(tmp_path_factory.mktemp("hostile-predictions") / "repo", repo="hostile/preds")


@pytest.fixture(scope="module")
def released(project, work_dir, env_dir):
    """A release of the project's one validated instance (copied under ids ``hostile-1``…),
    and the settings an evaluation of it runs with."""
    # the environment is built without the runs' memory limit (uv may need more), and shared
    validate = stage(work_dir / "preds-validate", "local", [project], env_dir=env_dir)
    outcome = validate.process(project.candidate("base", project.diff(hostile_tests(""))))
    assert outcome.verdict.kept, outcome.verdict
    copies = [
        outcome.output.model_copy(update={"instance_id": f"hostile-{n}"}) for n in range(1, 11)
    ]
    release, _ = make_release(work_dir / "preds-dist", copies, size=0)
    settings = ValidationConfig(
        backend="local",
        python=docker_support.PYTHON,
        timeout_s=LIMITS["timeout_s"],
        repetitions=1,
        coverage=False,
        env_dir=str(env_dir),
        limits=LimitsConfig(memory_mb=LIMITS["memory_mb"]),
    )
    config = Config(
        work_dir=work_dir / "preds-work",
        output_dir=work_dir / "preds-out",
        repos={project.repo: str(project.git.path)},
        jobs=2,
        validation=settings,
    )
    return release.dataset_dir, config


def _evaluate(released, tmp_path, run_id, patches, semantics="strict"):
    """Score ``patches`` (instance number → model_patch); each instance's report by number."""
    directory, config = released
    predictions = tmp_path / f"{run_id}.jsonl"
    rows = [
        {"instance_id": f"hostile-{n}", "model_name_or_path": "hostile", "model_patch": patch}
        for n, patch in patches.items()
    ]
    # RAW in a patch stands for a byte that is not UTF-8, written into the file as it is
    lines = [json.dumps(row).encode().replace(RAW.encode(), b"\xff") + b"\n" for row in rows]
    predictions.write_bytes(b"".join(lines))
    request = Request(
        semantics=semantics,
        dataset=str(directory),
        predictions=str(predictions),
        run_id=run_id,
        instances=tuple(f"hostile-{n}" for n in patches),
    )
    summary = evaluate(request, config, echo=lambda _: None)
    out = config.output_dir / "evaluations" / run_id
    reports = {
        n: json.loads((out / "instances" / f"hostile-{n}.json").read_text()) for n in patches
    }
    return summary, reports, json.loads((out / "summary.json").read_text())


def _new_file(path: str, body: str) -> str:
    lines = body.splitlines()
    added = "".join(f"+{line}\n" for line in lines)
    return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{added}"


def test_untrusted_patches_are_not_applicable_with_their_reason(
    released, tmp_path, project, canary
):
    test = "def test_x():\n    assert True"
    patches = {
        1: "",
        2: "this is not a patch\n",
        3: _new_file("tests/../../../escaped_test.py", test),
        4: _new_file(str(canary.folder / "test_planted.py"), test),
        5: project.link_diff("tests/test_link.py", str(canary.folder / "notes.txt")),
        6: project.diff({"tests/test_data.bin": bytes(range(256)) * 4}),
        7: _new_file(PREDICTED, test + "\n" + "# padding\n" * 250_000),
        8: _new_file(PREDICTED, "def test_x():\n    assert '\ud800'"),
        9: f"diff\n{canary.folder / 'test_planted.py'}\ninsert\nEOF\n{test}\nend diff\n",
        10: _new_file(PREDICTED, f"def test_x():\n    assert '{RAW}'"),
    }
    expected = {
        1: "the patch is empty",
        2: "no file header",
        3: "tests/../../../escaped_test.py (leaves the repository ('..'))",
        4: "test_planted.py (absolute path)",
        5: "symbolic link",
        6: "binary file",
        7: "more than the 2000000 allowed",
        8: "not valid UTF-8",
        9: "relative path inside",
        10: "the prediction is not valid UTF-8 at line 10",
    }
    summary, reports, document = _evaluate(released, tmp_path, "untrusted", patches)
    reasons = {n: report["score"]["not_applicable"] for n, report in reports.items()}
    assert {n: expected[n] in reasons[n] for n in patches} == dict.fromkeys(patches, True), reasons
    assert all(
        not report["runs"] and not report["score"]["applicable"] for report in reports.values()
    )
    assert document["not_applicable"] == {f"hostile-{n}": reasons[n] for n in patches}
    assert summary.applicability == 0.0 and summary.instances == len(patches)
    # and the guard finds the canary folder, with notes.txt, unchanged


def test_test_code_that_loops_is_stopped_at_the_timeout(released, tmp_path):
    code = "def test_loop():\n    while True:\n        pass\n"
    patch = _new_file(PREDICTED, hostile_tests(code)["tests/test_hostile.py"])
    summary, reports, _ = _evaluate(released, tmp_path, "loops", {1: patch})
    runs = reports[1]["runs"]
    assert [(run["side"], run["timed_out"]) for run in runs] == [("before", True), ("after", True)]
    assert all(run["duration_s"] < 60 for run in runs)
    assert reports[1]["score"]["applicable"] and summary.success == 0.0


def test_test_code_that_forks_writes_outside_and_connects_is_contained(released, tmp_path, canary):
    targets = [canary.folder / "notes.txt", canary.home / ".bashrc", canary.folder / "new.py"]
    hosts = ["127.0.0.1", socket.gethostname()]
    with Listener() as listener:
        code = (
            "import pathlib\nimport socket\nimport subprocess\nimport sys\n\n\n"
            "def test_misbehaves():\n"
            "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', "
            f"{MARK!r}], start_new_session=True, stdin=subprocess.DEVNULL,\n"
            "                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            "    reached = []\n"
            f"    for target in {[str(t) for t in targets]!r}:\n"
            "        try:\n"
            "            pathlib.Path(target).write_text('written by a prediction')\n"
            "            reached.append(target)\n"
            "        except OSError:\n"
            "            pass\n"
            f"    for host in {hosts!r}:\n"
            "        try:\n"
            f"            socket.create_connection((host, {listener.port}), timeout=2).close()\n"
            "            reached.append(host)\n"
            "        except OSError:\n"
            "            pass\n"
            "    assert not reached, reached\n"
        )
        patch = _new_file(PREDICTED, hostile_tests(code)["tests/test_hostile.py"])
        summary, reports, _ = _evaluate(released, tmp_path, "contained", {1: patch})
    assert listener.accepted == 0
    transitions = {t["test"]: (t["before"], t["after"]) for t in reports[1]["score"]["transitions"]}
    assert transitions == {
        "tests/test_predicted.py::test_add": ("fail", "pass"),
        "tests/test_predicted.py::test_misbehaves": ("pass", "pass"),  # nothing it tried worked
    }
    assert summary.success == 100.0
    # and the guard finds the canary unchanged and no process naming MARK


def test_test_code_that_allocates_without_end_meets_the_memory_limit(released, tmp_path):
    code = (
        "def test_memory():\n    hoard = []\n    try:\n        while True:\n"
        "            hoard.append(bytearray(64 * 2**20))\n    except MemoryError:\n"
        "        pass\n"
    )
    patch = _new_file(PREDICTED, hostile_tests(code)["tests/test_hostile.py"])
    summary, reports, _ = _evaluate(released, tmp_path, "memory", {1: patch})
    transitions = {t["test"]: (t["before"], t["after"]) for t in reports[1]["score"]["transitions"]}
    assert transitions["tests/test_predicted.py::test_memory"] == ("pass", "pass")
    assert not any(run["timed_out"] for run in reports[1]["runs"])


FORGED_REFUSAL = "bwrap: Can't create file at /root/.ssh: Is a directory"
FORGING_SITECUSTOMIZE = (
    f"import os, sys\nsys.stderr.write({FORGED_REFUSAL!r} + '\\n')\nsys.stderr.flush()\n"
    "os._exit(1)\n"
)


def test_test_code_printing_the_sandbox_s_refusal_gets_its_report(released, tmp_path):
    """A prediction whose ``sitecustomize.py`` prints a line shaped like bubblewrap's refusal
    and exits 1 (SWT-Bench's semantics apply the whole patch): its runs are its own, for the
    sandbox runs ``true`` for no prediction, so the instance gets its report."""
    patch = _new_file("sitecustomize.py", FORGING_SITECUSTOMIZE) + _new_file(
        PREDICTED, "def test_x():\n    assert True"
    )
    summary, reports, _ = _evaluate(released, tmp_path, "forged", {1: patch}, "swt-bench")
    forged = []
    for run in reports[1]["runs"]:
        with open(run["log_path"], encoding="utf-8") as log:
            if log.read().strip() == FORGED_REFUSAL:  # just what a refusal looks like
                forged.append((run["exit_code"], run["timed_out"]))
    assert forged and set(forged) == {(1, False)}  # the prediction's runs, in its report
    assert summary.instances == 1
