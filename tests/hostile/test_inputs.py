"""One bad input among good ones: a prediction that is no text, a conda name that is a shell
command, an output dir the kernel refuses, a patch that may not be applied, a test id that holds
data of the machine, an import name anybody could register. Each is named with its reason and
the rest goes on; none ends in a traceback, none installs or publishes what nobody declared."""

import json
from pathlib import Path

import pytest

from builder.cli import main
from builder.core.config import ValidationConfig
from builder.core.writable import problem
from builder.evaluate.predictions import read_predictions
from builder.evaluate.strict.prediction_patch import prepare
from tests.support.git import GitRepo
from tests.support.instances import make_instance, make_release
from tests.support.records import candidate
from validation.environments.declared import declared_names
from validation.environments.resolution import EnvironmentResolver
from validation.environments.test_imports import distribution


@pytest.mark.parametrize("field", ["model_patch", "model_name_or_path"])
def test_a_prediction_holding_a_lone_surrogate_is_named_and_the_rest_read(tmp_path, field):
    path = tmp_path / "predictions.jsonl"
    rows = [{"instance_id": "a-1", field: "x\ud800y"}, {"instance_id": "a-2", "model_patch": "p"}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))  # JSON: "x\ud800y"
    bad, good = read_predictions(path)
    assert f"a lone surrogate in {field} (character 1)" in bad.invalid
    assert getattr(bad, field) == "x\\ud800y"  # text now: a report can be written of it
    assert getattr(bad, field).encode("utf-8") and good.invalid == ""


EXPORT = """\
dependencies:
  - python=3.9.20=he870216_1
  - numpy=1.26.4=py39h5f9d8c6_0
  - {name}=1.0={build}
"""


@pytest.mark.parametrize(
    ("name", "build"),
    [("foo;touch /tmp/pwned", "py39_0"), ("bar$(id)", "h0"), ("baz`id`+x", "pyhd8ed1ab_0")],
    ids=["semicolon", "command_substitution", "backticks"],
)
def test_a_conda_name_with_shell_metacharacters_is_named_not_pinned(tmp_path, name, build):
    repo = GitRepo(tmp_path / "repo")
    base = repo.commit({"setup.py": "setup(name='widgets', version='1.0')\n"})
    files = tmp_path / "files"
    target = files / "acme__widgets" / "7" / "environment.yml"
    target.parent.mkdir(parents=True)
    target.write_text(EXPORT.format(name=name, build=build))
    settings = ValidationConfig(bundled_specs=False, reference_environments=str(files))
    resolver = EnvironmentResolver(settings, tmp_path / "inferred", lambda: ["3.9"])
    record = candidate(instance_id="acme__widgets-7", repo="acme/widgets", base_commit=base)
    resolution = resolver.resolve(record, repo.path)
    assert resolution.spec.pins == ("numpy==1.26.4",)
    assert name not in " ".join(resolution.reference.system)
    assert f"{name}=1.0" in resolution.metadata()["reference_unmapped"]


@pytest.mark.parametrize("root", ["/proc", "/sys"])
def test_an_output_dir_the_kernel_refuses_is_found_before_any_work(root):
    # root may write anywhere by the permission bits (os.access), not in /proc or /sys
    found = problem(Path(root) / "swt-hostile" / "dist")
    assert found is not None and f"cannot be made in {root}" in found


def test_a_build_into_proc_is_one_line_before_any_work(tmp_path, capsys):
    source = tmp_path / "source.jsonl"
    source.write_text("")
    argv = ["build", "--source", str(source), "--work-dir", str(tmp_path / "work")]
    code = main([*argv, "--output-dir", "/proc/swt-hostile", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    (line,) = err.splitlines()
    assert "output dir /proc/swt-hostile/swt-dataset cannot be made in /proc" in line
    assert not (tmp_path / "work" / "store").exists()


def _new(path: str) -> str:
    return f"diff --git a/{path} b/{path}\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x = 1\n"


REFUSALS = {
    "inside_git": (_new(".git/hooks/post-checkout"), ".git/hooks/post-checkout (inside .git)"),
    "absolute": (_new("/etc/cron.d/x"), "(absolute path)"),
    "climbing": (_new("tests/../../x.py"), "tests/../../x.py (leaves the repository ('..'))"),
    "symlink": (
        "diff --git a/tests/test_l.py b/tests/test_l.py\nnew file mode 120000\n"
        "--- /dev/null\n+++ b/tests/test_l.py\n@@ -0,0 +1 @@\n+/etc/shadow\n"
        "\\ No newline at end of file\n",
        "tests/test_l.py (symbolic link to /etc/shadow)",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_a_refused_prediction_patch_says_why(case):
    text, why = REFUSALS[case]
    prepared = prepare(text, {"pkg/a.py": "x = 0\n"}.get)
    assert not prepared.applicable
    assert prepared.not_applicable.startswith("the patch names a path it may not write: ")
    assert why in prepared.not_applicable


@pytest.mark.parametrize(
    ("test_id", "why"),
    [
        ("tests/test_a.py::test_read[/home/alice/.ssh/id_rsa]", "an absolute path under /home"),
        ("tests/test_a.py::test_id[x-/work/main/.swt-work/envs]", "an absolute path under /work"),
        ("tests/test_a.py::test_id[3f2a9c0e1b7d4e5f8a6b2c1d0e9f8a7b]", "a 32-hex token"),
    ],
    ids=["home", "work_dir", "machine_id"],
)
def test_a_release_flags_test_ids_that_look_like_host_data(tmp_path, test_id, why):
    clean = make_instance(1)
    leaky = make_instance(2, PASS_TO_PASS=(test_id, "tests/test_a.py::test_ok[<home>/x]"))
    config, _ = make_release(tmp_path / "dist", [clean, leaky], size=0)
    stats = json.loads((config.dataset_dir / "stats.json").read_text())
    assert [(i, t) for i, t, _ in stats["flagged_test_ids"]] == [("owner__repo-2", test_id)]
    assert why in stats["flagged_test_ids"][0][2]


PYTEST_2019_TOX = """\
[tox]
envlist =
    linting
    py37
    {py27,py37}-{pexpect,xdist,twisted,numpy,pluggymaster}

[testenv]
setenv =
    xdist: _PYTEST_TOX_POSARGS_XDIST=-n auto
deps =
    xdist: pytest-xdist>=1.13
    numpy: numpy
"""


@pytest.mark.parametrize(
    ("files", "name"),
    [
        ({"tox.ini": PYTEST_2019_TOX}, "xdist"),  # a factor and an environment name
        ({".github/workflows/ci.yml": "jobs:\n  flaky:\n    xdist:\n      n: 2\n"}, "xdist"),
        ({"tox.ini": "[testenv]\n# we run leftpad in CI\ndeps = -rreq.txt\n"}, "leftpad"),
        ({"setup.cfg": "[tool:pytest]\naddopts = -p cachefixture --strict\n"}, "cachefixture"),
    ],
    ids=["tox_factor", "yaml_key", "prose_comment", "pytest_plugin_option"],
)
def test_a_word_in_a_declaring_file_is_no_declaration(tmp_path, files, name):
    repo = GitRepo(tmp_path / "repo")
    base = repo.commit(files)
    assert name not in declared_names(repo.path, base)


def test_xdist_is_pytest_xdist_not_the_index_s_distance_library():
    assert distribution("xdist") == "pytest-xdist"
    assert distribution("xdist.plugin") == "pytest-xdist"
