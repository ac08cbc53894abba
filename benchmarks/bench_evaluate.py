"""Benchmark: the evaluation's cost per prediction, and what --mutation adds per instance.

A fixture repository (a package with a bug, a test file of ``--tests`` tests; the golden patch
fixes the bug and its test patch adds a test) is validated with coverage and released as a
dataset of ``--rounds`` copies of the instance (each its own version, so no two share stored
runs). A gold evaluation warms the environment and every instance's baseline; then one
evaluation (``--semantics strict``) runs ``--rounds`` predictions, each a different new test
(none is reused from the store), one at a time. Reported:

- wall time per prediction / the summed durations of its test runs (goal ≤ 1.3×): what the
  evaluation adds to the test time (checkout, patch reading and applying, reports);
- with ``--mutation`` (``--mutants`` per instance): the wall time per prediction and its ratio
  to the same prediction without mutation;
- under ``--semantics swt-bench``, a first and a second method (other new tests in the same
  file), then one whose predictions also create a test file and one whose predictions also
  edit the code (:data:`SHAPES`): the runs each makes per instance (the first makes the
  instance's base and gold runs; a later one reads them from the store when it runs the same
  files, and makes the base runs of other files itself) and its wall time per prediction.

``--counter-overhead`` measures instead what counting the golden patch's lines costs (SWT-Bench's
execution counts, ``validation/coverage/counter.py``): one pytest run of a generated package
doing real work (a sieve, word counts; ``--counter-tests`` tests, a few seconds plain), run
``--counter-rounds`` times alternated three ways in the interpreter ``--python`` (it needs pytest
and coverage.py): plain; under the counter, with patch lines in the hot loop, once per call of
the hot functions, or in another function of the file (:data:`COUNTED_LINES`); and under
coverage.py as validation's measured runs run it (``measured_command``, our rcfile and context
plugin). Reported: median wall times and the median ratios counter/plain and coverage/plain.

Run with ``.venv/bin/python -m benchmarks.bench_evaluate``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_validation import _fixture
from builder.core.config import Config, ValidationConfig
from builder.evaluate.run import Request, evaluate
from recipes.swe_bench import make_record, to_candidate
from validation.stage import ValidateStage

GOAL = 1.3
REPO = "bench/calc"


def _dataset(root: Path, tests: int, copies: int) -> tuple[Path, Config]:
    from builder.core.records import write_jsonl
    from builder.release.write import write_config_json, write_release

    repo, base, patch, test_patch = _fixture(root, tests, "framework")
    settings = ValidationConfig(
        backend="local", python="3.11", packages=["pytest"], timeout_s=300, repetitions=1
    )
    candidate = to_candidate(make_record(REPO, 1, base, patch, test_patch))
    outcome = ValidateStage(settings, root / "work", {REPO: str(repo)}).process(candidate)
    assert outcome.verdict.kept, outcome.verdict
    config = Config(
        name="bench", output_dir=root / "dist", work_dir=root / "work",
        repos={REPO: str(repo)}, jobs=1, validation=settings,
    )  # fmt: skip
    instances = [  # each copy its own version: the stored base and gold runs are not shared
        outcome.output.model_copy(update={"instance_id": _instance_id(n), "version": f"1.{n}"})
        for n in range(copies)
    ]
    write_jsonl(config.dataset_dir / "instances.jsonl", instances)
    write_config_json(config, config.dataset_dir)
    write_release(config, instances, [], echo=lambda _: None)
    return config.dataset_dir, config


def _instance_id(number: int) -> str:
    return f"bench__calc-{number + 1}"


def _prediction(number: int) -> str:
    """A new test after the file's import line, as a diff git applies (context both sides)."""
    body = f"def test_added_{number}():\n    assert add({number}, 1) == {number + 1}\n"
    lines = ["", "", *body.splitlines()]
    added = "".join(f"+{line}\n" for line in lines)
    header = "--- a/tests/test_pkg.py\n+++ b/tests/test_pkg.py\n"
    hunk = f"@@ -1,4 +1,{len(lines) + 4} @@\n"
    return f"{header}{hunk} from pkg import add, work\n{added} \n \n def test_work_0():\n"


def _new_file(number: int) -> str:
    """A second test file the prediction creates, as ``diff --git`` names it."""
    path = f"tests/test_new_{number}.py"
    body = (
        f"from pkg import add\n\n\ndef test_new_{number}():\n"
        f"    assert add(1, {number}) == {number + 1}\n"
    )
    lines = body.splitlines()
    added = "".join(f"+{line}\n" for line in lines)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{added}"
    )


def _code_edit(number: int) -> str:
    """A comment added at the end of the package (after ``work``, which the golden patch does
    not touch): a code edit, as ``diff --git`` names it."""
    return (
        "diff --git a/pkg/__init__.py b/pkg/__init__.py\n--- a/pkg/__init__.py\n"
        "+++ b/pkg/__init__.py\n@@ -5,2 +5,3 @@\n def work(n):\n     return sum(range(n))\n"
        f"+# note {number}\n"
    )


SHAPES = {
    "same": lambda n: _prediction(n),
    "new-file": lambda n: (
        "diff --git a/tests/test_pkg.py b/tests/test_pkg.py\n" + _prediction(n) + _new_file(n)
    ),
    "code-edit": lambda n: (
        "diff --git a/tests/test_pkg.py b/tests/test_pkg.py\n" + _prediction(n) + _code_edit(n)
    ),
}
"""What a later method's predictions look like: tests in the same file as the first method's
(its files are the same), in the same file and a new one, or with a code edit (both name
other files, whose base runs no earlier method made)."""


def _evaluate(
    directory: Path,
    config: Config,
    root: Path,
    name: str,
    count: int,
    mutants: int,
    semantics: str = "strict",
    offset: int = 0,
    shape: str = "same",
):
    """One evaluation of ``count`` predictions (gold when ``name`` is "gold"; ``offset`` varies
    the predicted tests): (wall time, the summed durations of the test runs it made, the runs
    it made per instance)."""
    predictions = root / f"{name}.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"instance_id": _instance_id(n), "model_patch": SHAPES[shape](n + offset)})
            + "\n"
            for n in range(count)
        )
    )
    request = Request(
        dataset=str(directory),
        predictions="gold" if name == "gold" else str(predictions),
        run_id=name,
        mutants=mutants,
        semantics=semantics,
    )
    started = time.perf_counter()
    evaluate(request, config, echo=lambda _: None)
    wall = time.perf_counter() - started
    tests, made = 0.0, 0
    for path in (config.output_dir / "evaluations" / name / "instances").glob("*.json"):
        result = json.loads(path.read_text())
        if semantics == "swt-bench":  # runs read from the store took no time here
            names = result["run_names"]
            runs = [
                r for n, r in zip(names, result["runs"], strict=True) if n in result["runs_made"]
            ]
        else:
            runs = result["runs"]
        tests += sum(run["duration_s"] for run in runs)
        made += len(runs)
    return wall, tests, made / count


COUNTED_MODULE = """\
def primes(n):
    sieve = [True] * (n + 1)
    found = []
    for i in range(2, n + 1):
        if sieve[i]:
            found.append(i)
            for j in range(i * i, n + 1, i):
                sieve[j] = False
    return found


def words(text):
    counts = {}
    for word in text.split():
        word = word.strip(".,").lower()
        counts[word] = counts.get(word, 0) + 1
    return counts


def describe(found):
    largest = found[-1] if found else None
    return f"{len(found)} primes up to {largest}"
"""
COUNTED_LINES = {
    "hot": {"pkg/calc.py": [5, 6, 9, 14, 15, 17]},  # 5: every i of the sieve; 14-15: every word
    "cold": {"pkg/calc.py": [2, 3, 9, 13, 17]},  # once per call of the hot functions
    "elsewhere": {"pkg/calc.py": [21, 22]},  # a function run once per test
}
"""Golden patch lines: in the hot loop, run once per call of the hot functions, elsewhere."""


def _counted_repo(root: Path, tests: int) -> Path:
    repo = root / "counted"
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "calc.py").write_text(COUNTED_MODULE)
    text = "The quick brown fox, jumps over the lazy dog. " * 400
    body = f"from pkg.calc import describe, primes, words\n\nTEXT = {text!r}\n"
    body += "".join(
        f"\n\ndef test_work_{i}():\n    found = primes({40000 + i})\n"
        f"    assert describe(found).startswith('4')\n    assert words(TEXT)['the'] == 800\n"
        for i in range(tests)
    )
    (repo / "tests" / "test_calc.py").write_text(body)
    return repo


def counter_overhead(python: str, tests: int, rounds: int) -> None:
    """Plain / counted / coverage-measured runs of one pytest workload (see the docstring)."""
    from validation.coverage import CONTEXT_PLUGIN, RUNTIME, measured_command, rcfile
    from validation.coverage.counts import COUNTER, counted_command, read_counts

    python = os.path.abspath(python)  # the runs' working directory is the generated repo
    version = subprocess.run(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        repo = _counted_repo(root, tests)
        scratch = root / "scratch"
        plain = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
        commands = {"plain": plain}
        for name, lines in COUNTED_LINES.items():
            report = str(scratch / f"counts-{name}.json")
            commands[f"counter ({name} lines)"] = counted_command(
                plain, str(COUNTER.place(root / "tools")), report, lines
            )
        commands["coverage"] = measured_command(
            [*plain, "-p", CONTEXT_PLUGIN],
            str(RUNTIME.place(root / "tools")),
            str(scratch / "rc"),
            rcfile(["pkg/calc.py"], str(scratch / "data"), contexts="runner", python=version),
            str(scratch / "coverage.json"),
            COUNTED_LINES["hot"],
        )
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        times: dict[str, list[float]] = {name: [] for name in commands}
        for round_ in range(rounds + 1):  # the first round warms the caches, untimed
            for name, command in commands.items():
                started = time.perf_counter()
                done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
                elapsed = time.perf_counter() - started
                if done.returncode != 0:
                    raise RuntimeError(f"{name} failed: {done.stdout[-2000:]}{done.stderr[-2000:]}")
                if round_:
                    times[name].append(elapsed)
        counts = read_counts((scratch / "counts-hot.json").read_bytes())
    assert counts is not None and counts.counts["pkg/calc.py"][5] > 0, counts
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratios = {
        name: statistics.median(a / b for a, b in zip(values, times["plain"], strict=True))
        for name, values in times.items()
    }
    print(f"Python {version} ({python}), {tests} tests, {rounds} alternated rounds (medians)")
    for name in commands:
        print(f"{name:>27}: {medians[name]:6.2f} s  {ratios[name]:5.2f}× plain")
    print(f"hot line 5 counted {counts.counts['pkg/calc.py'][5]} times")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--mutants", type=int, default=5)
    parser.add_argument(
        "--counter-overhead", action="store_true", help="measure the line counter's cost instead"
    )
    parser.add_argument("--counter-tests", type=int, default=450)
    parser.add_argument("--counter-rounds", type=int, default=3)
    parser.add_argument("--python", default=sys.executable, help="for --counter-overhead")
    args = parser.parse_args()
    if args.counter_overhead:
        counter_overhead(args.python, args.counter_tests, args.counter_rounds)
        return
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        dataset, config = _dataset(root, args.tests, args.rounds)
        _evaluate(dataset, config, root, "gold", args.rounds, 0)  # warm
        wall, tests, _ = _evaluate(dataset, config, root, "plain", args.rounds, 0)
        mutated, _, _ = _evaluate(dataset, config, root, "mutated", args.rounds, args.mutants)
        first = _evaluate(dataset, config, root, "first", args.rounds, 0, "swt-bench", 100)
        second = _evaluate(dataset, config, root, "second", args.rounds, 0, "swt-bench", 200)
        new_file = _evaluate(
            dataset, config, root, "new-file", args.rounds, 0, "swt-bench", 300, "new-file"
        )
        code_edit = _evaluate(
            dataset, config, root, "code-edit", args.rounds, 0, "swt-bench", 400, "code-edit"
        )
    ratio = wall / tests
    verdict = "met" if ratio <= GOAL else "NOT met"
    print(f"{args.tests} tests in the file, {args.rounds} predictions, warm caches")
    print(f"wall / test time: {ratio:.2f}× (goal ≤ {GOAL}×: {verdict})")
    print(f"wall per prediction: {wall / args.rounds:.2f} s, test time {tests / args.rounds:.2f} s")
    print(
        f"with --mutation (≤ {args.mutants} mutants): {mutated / args.rounds:.2f} s per "
        f"prediction, {mutated / wall:.2f}× without"
    )
    methods = (("first", first), ("second", second), ("new-file", new_file),
               ("code-edit", code_edit))  # fmt: skip
    for label, (seconds, _, runs) in methods:
        print(
            f"--semantics swt-bench, {label} method: {runs:.1f} runs per instance, "
            f"{seconds / args.rounds:.2f} s per prediction"
        )


if __name__ == "__main__":
    main()
