"""The one spec → install steps function: one resolution, tools and pins undated, build tools of
the environment's era (never older than its Python)."""

import dataclasses
import ensurepip
import json
import os
import select
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.wheels import write_wheel
from validation.environments.environment import (
    BUILD_TOOLS,
    COMPLETE,
    RETRY,
    EnvironmentBuildError,
    EnvironmentSpec,
    Interpreters,
    LocalEnvironments,
    install_steps,
    left_out,
)
from validation.environments.interpreters import find_uv

BASE = EnvironmentSpec(
    python="3.9",
    packages=("pytest==8.3.5", "hypothesis"),
    project=Path("/somewhere/mirror.git"),
    project_commit="a" * 40,
    exclude_newer="2021-05-02T21:31:55Z",
)
FAR = "2100-01-01T00:00:00Z"


def dated_for(argv):
    """package → the date its --exclude-newer-package gives it."""
    return dict(
        argv[index + 1].split("=", 1)
        for index, arg in enumerate(argv)
        if arg == "--exclude-newer-package"
    )


def dependencies_of(spec):
    steps = install_steps(spec, base_python="p", venv="/e", project_dir="/src")
    (dependencies,) = [step for step in steps if step.label == "dependencies"]
    return dependencies


def test_one_dated_resolution_with_pins_as_overrides():
    steps = install_steps(
        dataclasses.replace(BASE, extras=("test",), requirements=("req-test.txt",)),
        base_python="/py/bin/python3.9", venv="/env", project_dir="/src", uv="uv",
    )  # fmt: skip
    assert [s.label for s in steps] == ["venv", "overrides", "dependencies", "optional packages"]
    assert steps[0].argv == ("uv", "venv", "--quiet", "--python", "/py/bin/python3.9", "/env")
    overrides = subprocess.run(["sh", "-c", *steps[1].argv[2:3], "/dev/stdout", *steps[1].argv[4:]],
                               capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert steps[1].argv[3] == "/env/swt-overrides.txt" and overrides == "pytest==8.3.5\n"
    dependencies = steps[2].argv
    assert dependencies[dependencies.index("--exclude-newer") + 1] == BASE.exclude_newer
    assert dependencies[dependencies.index("--overrides") + 1] == "/env/swt-overrides.txt"
    assert dependencies[-4:] == ("pytest==8.3.5", "-r", "/src/req-test.txt", "/src[test]")
    assert "hypothesis" in steps[3].argv  # named bare beside a pin: an optional addition
    dates = dated_for(dependencies)
    # test tools undated (bounds the project puts on them still hold: same resolution)
    assert dates["pytest"] == dates["coverage"] == dates["pluggy"] == FAR
    assert dates["pytest-cov"] == dates["pytest-xdist"] == FAR
    assert "hypothesis" not in dates  # a testing library the tests import: dated
    # build tools of the environment's date (Python 3.9 was out by then): not named at all
    assert "setuptools" not in dates and "packaging" not in dates
    # pkg_resources, as `python -m venv` gave for years; of before setuptools 71 in 2021
    assert "setuptools<71" in dependencies


def test_an_inferred_specs_pins_are_requirements_the_rest_resolves_around():
    # sqlfluff 0.8 pins coverage==6.2 and names pytest-cov unbounded: as an override the pin
    # would also replace pytest-cov's own bound on coverage, and the undated pytest-cov (6.x
    # needs coverage 7.5) fails to import
    project = dataclasses.replace(BASE, packages=("coverage==6.2", "pytest-cov"))
    own = dataclasses.replace(project, pins_override=False)
    steps = install_steps(own, base_python="p", venv="/e", project_dir="/src")
    assert [s.label for s in steps] == ["venv", "dependencies"]
    argv = steps[-1].argv
    assert "--overrides" not in argv and "coverage==6.2" in argv
    assert dated_for(argv)["coverage"] == dated_for(argv)["pytest-cov"] == FAR  # still visible
    assert own.key() != project.key()
    overridden = install_steps(project, base_python="p", venv="/e", project_dir="/src")
    assert [s.label for s in overridden] == [
        "venv", "overrides", "dependencies", "optional packages"
    ]  # fmt: skip


def test_pins_are_visible_whatever_their_date_and_spec_plugins_are_tools():
    spec = dataclasses.replace(
        BASE, python="3.6", packages=("atomicwrites==1.4.1", "pytest<5", "pytest-Foo_bar")
    )
    dependencies = dependencies_of(spec)
    dates = dated_for(dependencies.argv)
    assert dates["atomicwrites"] == FAR  # its only release is of 2022: the pin needs it
    assert dates["pytest-foo-bar"] == FAR
    assert "pytest<5" in dependencies.argv  # the bound is the spec's: only the date is lifted


def test_pytest_is_the_newest_of_its_eras_major_series():
    # pytest 8 (2024-01-27) dropped the `path` argument of collection hooks, which plugins of
    # 2023 used — asdf's schema tester among them, a library dated with the code under test:
    # with an undated pytest no test of a 2023 environment could even be collected
    spec = dataclasses.replace(BASE, packages=("hypothesis",), exclude_newer="2023-04-24T00:00:00Z")
    dates = dated_for(dependencies_of(spec).argv)
    assert dates["pytest"] == "2024-01-27T21:47:53Z"  # 7.4.4, the last 7.x, is older
    assert dates["pluggy"] == dates["pytest-xdist"] == FAR  # they follow the pytest chosen
    # the era of the environment's Python when that is later (3.9's floor: April 2021 → 6.x)
    old = dataclasses.replace(spec, exclude_newer="2019-03-01T00:00:00Z")
    assert dated_for(dependencies_of(old).argv)["pytest"] == "2022-02-04T10:21:25Z"
    # before pytest 4: the 3.x series, which has every option the runner passes
    legacy = dataclasses.replace(old, python="3.6", exclude_newer="2018-02-07T00:00:00Z")
    assert dated_for(dependencies_of(legacy).argv)["pytest"] == "2018-11-14T17:09:38Z"
    # after the last major known here, and with a pin (BASE's pytest==8.3.5): no date
    recent = dataclasses.replace(spec, exclude_newer="2025-12-01T00:00:00Z")
    assert dated_for(dependencies_of(recent).argv)["pytest"] == FAR
    assert dated_for(dependencies_of(BASE).argv)["pytest"] == FAR


def test_build_tools_never_older_than_what_builds_legacy_projects():
    floor = dataclasses.replace(BASE, python="3.6", exclude_newer="2015-03-01T00:00:00Z")
    dependencies = dependencies_of(floor)
    dates = dated_for(dependencies.argv)
    assert dates["setuptools"] == "2019-02-05T23:59:59Z"  # 40.8.0
    # what the build tools need comes from their era too: packaging 19 with the pyparsing of
    # 2019 (pyparsing 2.0.2 of 2014 has no installable archive)
    assert dates["packaging"] == dates["pyparsing"] == dates["setuptools"]


def test_nothing_is_dated_before_the_environments_python():
    # a spec running a commit of 2019 on Python 3.9 (released 2020-10-05): nothing of 2019 has
    # wheels for it, nor does setuptools of 2019 import on it; half a year after its release
    old = dataclasses.replace(BASE, python="3.9", exclude_newer="2019-03-01T00:00:00Z")
    dependencies = dependencies_of(old)
    argv = dependencies.argv
    assert argv[argv.index("--exclude-newer") + 1] == "2021-04-05T23:59:59Z"
    dates = dated_for(argv)
    assert not set(BUILD_TOOLS) & set(dates)  # of that date with everything else
    # a date after the floor stays as it is
    assert dependencies_of(BASE).argv[dependencies_of(BASE).argv.index("--exclude-newer") + 1] == (
        BASE.exclude_newer
    )


def test_a_python_the_projects_ci_tested_keeps_the_environments_date():
    # requests 2.27 (2022-01-03) tested 3.10 (released 2021-10-04): its CI installed the
    # dependencies of that day, before MarkupSafe 2.1 (which its flask<2's Jinja2 cannot import)
    fresh = dataclasses.replace(BASE, python="3.10", exclude_newer="2022-01-03T18:00:00Z")
    raised = dependencies_of(fresh).argv
    assert raised[raised.index("--exclude-newer") + 1] == "2022-04-04T23:59:59Z"  # the floor
    tested = dependencies_of(dataclasses.replace(fresh, python_tested=True)).argv
    assert tested[tested.index("--exclude-newer") + 1] == fresh.exclude_newer
    assert not set(BUILD_TOOLS) & set(dated_for(tested))  # build tools of that date too


def test_runtime_setuptools_predates_vendored_typeguard_in_dated_environments_of_before():
    """setuptools 71 vendors typeguard, whose pytest plugin crashed pytest 5 in pvlib 0.7's
    dated environment (no test collected): environments dated before it get an older one."""

    def seed(spec):
        steps = install_steps(spec, base_python="p", venv="/e", project_dir="/src")
        (dependencies,) = [step for step in steps if step.label == "dependencies"]
        return [arg for arg in dependencies.argv if arg.startswith("setuptools<")]

    assert seed(dataclasses.replace(BASE, exclude_newer="2024-07-16T23:59:59Z")) == [
        "setuptools<71"
    ]
    assert seed(dataclasses.replace(BASE, exclude_newer="2024-07-17T00:00:00Z")) == [
        "setuptools<81"
    ]
    assert seed(dataclasses.replace(BASE, exclude_newer="")) == ["setuptools<81"]  # undated


def test_undated_pip_steps_system_packages_pre_install_and_custom_install():
    spec = dataclasses.replace(
        BASE,
        exclude_newer="",
        system_packages=("libgl1",),
        pre_install=("echo pre",),
        install_command="python setup.py develop",
    )
    steps = install_steps(spec, base_python="python3.9", venv="/env", project_dir="/src",
                          installer="pip")  # fmt: skip
    assert [s.label for s in steps] == [
        "system packages", "venv", "pre-install", "dependencies", "install command",
    ]  # fmt: skip
    assert steps[0].argv[:3] == ("apt-get", "install", "-y")
    assert steps[1].argv == ("python3.9", "-m", "venv", "/env")
    assert steps[2].in_project and steps[4].in_project
    assert steps[3].argv[:3] == ("/env/bin/python", "-m", "pip")
    assert steps[3].argv[-2:] == ("pytest==8.3.5", "hypothesis")  # no project: own command
    assert "--exclude-newer" not in steps[3].argv


def test_no_project_installs_only_packages():
    spec = EnvironmentSpec(python="3.11", packages=("pytest",))
    steps = install_steps(spec, base_python="p", venv="/env", project_dir=None)
    assert [s.label for s in steps] == ["venv", "dependencies"]
    assert steps[-1].argv[-2:] == ("setuptools<81", "pytest")
    own = dataclasses.replace(spec, packages=("pytest", "setuptools==75.0"))
    steps = install_steps(own, base_python="p", venv="/env", project_dir=None)
    assert "setuptools<81" not in steps[-1].argv  # a spec naming setuptools decides
    with pytest.raises(ValueError, match="need a project"):
        install_steps(dataclasses.replace(spec, extras=("x",)), base_python="p", venv="/e",
                      project_dir=None)  # fmt: skip


@pytest.mark.slow
def test_real_resolution_of_an_old_date_keeps_bounds_and_pins(tmp_path):
    """Dated 2015 on Python 3.6: the date is lifted to half a year after 3.6's release
    (2017-06-23); pytest the newest under the spec's bound (not of 2014), the pin atomicwrites
    1.4.1 (2022) installed in the same resolution, a plugin matching the pytest chosen, and the
    code under test's dependencies (requests) of that date."""
    interpreters = Interpreters()
    if interpreters.find("3.6") is None:
        pytest.skip("no Python 3.6 interpreter on this machine")
    spec = EnvironmentSpec(
        python="3.6",
        packages=("pytest<5", "pytest-timeout", "atomicwrites==1.4.1", "requests"),
        exclude_newer="2015-01-01T00:00:00Z",
    )
    venv = LocalEnvironments(tmp_path / "envs", interpreters).python(spec)
    out = subprocess.run(
        [str(venv), "-c", "import json, pytest, atomicwrites, requests, pytest_timeout, "
         "setuptools; print(json.dumps([pytest.__version__, atomicwrites.__version__, "
         "requests.__version__, setuptools.__version__]))"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    pytest_version, atomicwrites_version, requests_version, setuptools_version = json.loads(out)
    # not pytest 2.6.4 of 2014: the newest that attrs of 2017 (dated: the code's too) allows
    assert pytest_version == "3.4.2"
    assert atomicwrites_version == "1.4.1"
    assert requests_version == "2.18.1"  # of June 2017: dependencies keep the date
    # build tools of setuptools 40.8 (what builds a project without pyproject.toml, as the
    # atomicwrites sdist), not of 2017 nor of today
    assert setuptools_version.startswith("40.8.")


@pytest.mark.slow
def test_real_resolution_around_a_projects_pin_keeps_every_requirement(tmp_path):
    """A project's pin as a requirement: the undated pytest-cov is one that accepts the pinned
    coverage (``uv pip check`` finds nothing). As an override the pin voids pytest-cov's own
    bound on coverage, but pytest-cov, named bare, is an optional addition, resolved after the
    pinned stack with the pin as a constraint: a pytest-cov that accepts it, too."""
    interpreters = Interpreters()
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    project = EnvironmentSpec(
        python=here, packages=("coverage==6.5.0", "pytest-cov"), python_tested=True,
        exclude_newer="2023-01-15T00:00:00Z",
    )  # fmt: skip
    environments = LocalEnvironments(tmp_path / "envs", interpreters)
    checks = {}
    for override in (False, True):
        spec = dataclasses.replace(project, pins_override=override)
        venv = environments.python(spec)
        checks[override] = subprocess.run(
            [find_uv(), "pip", "check", "--python", str(venv)], capture_output=True, text=True
        )
    assert checks[False].returncode == 0, checks[False].stdout + checks[False].stderr
    assert checks[True].returncode == 0, checks[True].stdout + checks[True].stderr


def test_a_pinned_build_tool_also_constrains_isolated_builds():
    # xarray's spec pins setuptools 68 with a 2021 date: undated for the pin, the isolated
    # build of the project would otherwise take today's setuptools beside 2021's packaging
    spec = dataclasses.replace(
        BASE, python="3.10", packages=("setuptools==68.0.0", "numpy==1.23.0", "pytest")
    )
    steps = install_steps(spec, base_python="p", venv="/e", project_dir="/src")
    assert [s.label for s in steps] == [
        "venv", "overrides", "build constraints", "dependencies", "optional packages"
    ]  # fmt: skip
    written = subprocess.run(["sh", "-c", *steps[2].argv[2:3], "/dev/stdout", *steps[2].argv[4:]],
                             capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert steps[2].argv[3] == "/e/swt-build-constraints.txt"
    assert written == "setuptools==68.0.0\n"  # build tools only: numpy's pin is not one
    for argv in (steps[3].argv, steps[4].argv):  # the optional additions' builds too
        assert argv[argv.index("--build-constraints") + 1] == "/e/swt-build-constraints.txt"
    # no build tool pinned: no constraint file
    plain = install_steps(BASE, base_python="p", venv="/e", project_dir="/src")
    assert "build constraints" not in [s.label for s in plain]
    assert "--build-constraints" not in dependencies_of(BASE).argv


def test_an_environment_of_before_pytest_7_2_gets_py_as_the_pytest_of_its_date_did():
    """pytest 7.2 stopped installing ``py``; the pytest of an older environment's major series
    can be 7.2 or later, and the plugins of its date still call ``py.io``."""
    wanted = dependencies_of(BASE).argv  # dated 2021
    assert "py" in wanted and dated_for(wanted)["py"] == "2100-01-01T00:00:00Z"  # a test tool
    later = dataclasses.replace(BASE, exclude_newer="2023-03-01T00:00:00Z")
    assert "py" not in dependencies_of(later).argv
    floor = dataclasses.replace(BASE, python="3.12", exclude_newer="2021-05-02T00:00:00Z")
    assert "py" not in dependencies_of(floor).argv  # resolved as of 3.12's floor, 2024
    given = dataclasses.replace(BASE, packages=(*BASE.packages, "py==1.10.0"))
    assert [a for a in dependencies_of(given).argv if a in ("py", "py==1.10.0")] == ["py==1.10.0"]


def test_a_setuptools_pin_older_than_what_builds_an_sdist_stays_out_of_isolated_builds():
    """uv builds a project without pyproject.toml with setuptools ≥ 40.8 only: astropy 1.3's
    spec pins SWE-bench's setuptools 38.2.4, which as a build constraint made its MarkupSafe 1.0
    sdist unbuildable (the environment failed). The environment keeps the pin."""
    old = ("setuptools==38.2.4", "cython==0.27.3", "numpy==1.16.0")
    spec = dataclasses.replace(  # astropy 1.3's environment commit
        BASE, python="3.6", packages=old, exclude_newer="2018-10-01T01:18:05Z"
    )
    steps = install_steps(spec, base_python="p", venv="/e", project_dir="/src")
    assert steps[2].label == "build constraints"
    assert steps[2].argv[4:] == ("cython==0.27.3",)
    assert "setuptools==38.2.4" in steps[1].argv  # the overrides: the environment's own
    # and isolated builds keep the build tools' date (40.8 then), not the newest for 3.6, whose
    # setuptools has lost what the sdists of 2018 import (MarkupSafe 1.0: setuptools.Feature)
    argv = dependencies_of(spec).argv
    dated = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--exclude-newer-package"]
    assert [d for d in dated if d.startswith("setuptools=")] == ["setuptools=2019-02-05T23:59:59Z"]
    assert "cython=2100-01-01T00:00:00Z" in dated  # the other pins stay undated
    for pin, constrained in (
        ("setuptools==40.7.3", False),
        ("setuptools==40.8.0", True),
        ("setuptools==68.0.0", True),
    ):
        one = dataclasses.replace(BASE, python="3.6", packages=(pin,))
        steps = install_steps(one, base_python="p", venv="/e", project_dir="/src")
        assert ("build constraints" in [s.label for s in steps]) is constrained, pin


@pytest.mark.slow
def test_installed_packages_are_byte_compiled_as_pip_does(tmp_path):
    """blinker 1.4 has an invalid escape sequence: imported first under ``-W error`` (flask's
    ``filterwarnings = error``) an uncompiled copy compiles there and raises SyntaxError; the
    compiled one, as pip installs it, imports."""
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    spec = EnvironmentSpec(python=here, packages=("iniconfig==2.0.0",), python_tested=True)
    venv = LocalEnvironments(tmp_path / "envs", Interpreters()).python(spec)
    (package,) = venv.parent.parent.glob("lib/python*/site-packages/iniconfig")
    assert sorted(package.glob("__pycache__/__init__.*.pyc")), "installed without bytecode"
    argv = dependencies_of(dataclasses.replace(BASE, exclude_newer="")).argv
    assert "--compile-bytecode" in argv
    # uv's compile script needs Python 3.7: an older one is compiled by compileall afterwards
    old = install_steps(dataclasses.replace(BASE, python="3.6"), base_python="p", venv="/e",
                        project_dir="/src")  # fmt: skip
    assert not any("--compile-bytecode" in step.argv for step in old)
    assert old[-1].label == "bytecode" and "compileall" in old[-1].argv[2]


def test_a_test_tools_own_dependencies_the_project_declares_keep_its_date():
    """pytest's own repository declares pluggy: pluggy 1.7 beside its 2023 checkout broke
    two of its tests, so the dependencies it declares take the environment's date."""
    undated = dated_for(dependencies_of(BASE).argv)
    assert undated["pluggy"] == FAR and undated["iniconfig"] == FAR
    declared = dataclasses.replace(BASE, dated_tools=("pluggy", "iniconfig"))
    dated = dated_for(dependencies_of(declared).argv)
    assert "pluggy" not in dated and "iniconfig" not in dated  # the --exclude-newer date
    assert dated["py"] == FAR and dated["pytest-xdist"] == FAR
    assert declared.key() != BASE.key()


def test_a_package_with_no_release_uploaded_before_the_date_is_taken_undated(tmp_path):
    # a uv stand-in that answers as uv does while atomicwrites is dated (its releases up to
    # 1.4.0 were deleted and 1.4.1 uploaded in 2022), and installs once it is not
    uv = tmp_path / "uv"
    uv.write_text(
        "#!/bin/sh\n"
        'echo "$@" >> "$0.calls"\n'
        'case " $* " in *" atomicwrites=2100-01-01T00:00:00Z "*) echo installed; exit 0;; esac\n'
        "echo 'error: No solution found when resolving dependencies' >&2\n"
        "echo '  cause: Because there are no versions of atomicwrites and pytest==4.5.1 "
        "depends on atomicwrites>=1.0, we can conclude ...' >&2\n"
        "echo 'hint: `atomicwrites` was filtered by `exclude-newer` to only include packages "
        "uploaded before 2019-05-31T04:35:00Z.' >&2\n"
        "exit 1\n"
    )
    uv.chmod(0o755)
    spec = dataclasses.replace(BASE, dated_tools=("atomicwrites",))  # pytest's own, say
    step = install_steps(spec, base_python="p", venv="/e", project_dir="/src", uv=str(uv))
    (dependencies,) = [s for s in step if s.label == "dependencies"]
    done = subprocess.run(dependencies.argv, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "# undated: atomicwrites (no release of it uploaded before the date)" in done.stderr
    calls = (tmp_path / "uv.calls").read_text().splitlines()
    assert len(calls) == 2 and "atomicwrites=2100-01-01T00:00:00Z" in calls[1]
    assert calls[1].startswith(calls[0])  # the same install, one date option more

    # any other failure is the install's own: once, with its exit code and output
    uv.write_text('#!/bin/sh\necho "$@" >> "$0.calls"\necho \'error: disk full\' >&2\nexit 2\n')
    (tmp_path / "uv.calls").unlink()
    failed = subprocess.run(dependencies.argv, capture_output=True, text=True)
    assert failed.returncode == 2 and "disk full" in failed.stderr
    assert len((tmp_path / "uv.calls").read_text().splitlines()) == 1


def test_the_installs_output_reaches_the_log_while_it_runs(tmp_path):
    """A build stopped at its time limit still shows what uv wrote: the repairs read uv's
    output from a copy, never by holding it back until uv ends."""
    uv = tmp_path / "uv"
    uv.write_text("#!/bin/sh\necho 'Resolved 3 packages' >&2\nexec sleep 60\n")
    uv.chmod(0o755)
    step = install_steps(BASE, base_python="p", venv="/e", project_dir="/src", uv=str(uv))
    (dependencies,) = [s for s in step if s.label == "dependencies"]
    running = subprocess.Popen(dependencies.argv, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)  # fmt: skip
    try:
        readable, _, _ = select.select([running.stderr], [], [], 20)
        assert readable, "nothing of uv's output while it runs"
        assert running.stderr.readline() == "Resolved 3 packages\n"  # before uv ends
    finally:
        os.killpg(running.pid, signal.SIGKILL)
        running.wait()


def test_a_release_whose_metadata_uv_cannot_parse_is_installed_with_it_read_leniently(tmp_path):
    """pandas up to 0.24.2 requires ``pytz (>=2011k)``, which uv refuses: it skipped every such
    release, and a resolution of 2019 needing pandas found none (pvlib 0.6's environment).
    Real uv, offline on a local index of wheels with that metadata."""
    index = tmp_path / "index"
    write_wheel(index, "swt-fixture-legacy", "1.0",
                ["swt-fixture-dep (>=2011k)", "swt-fixture-more ; extra == 'more'"])  # fmt: skip
    write_wheel(index, "swt-fixture-dep", "2010.0")  # below the bound as read: never taken
    write_wheel(index, "swt-fixture-dep", "2019.1")
    write_wheel(index, "swt-fixture-more", "1.0")
    write_wheel(index, "swt-fixture-broken", "1.0", ["swt-fixture-dep ; python_version >> '3'"])
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    offline = (("UV_NO_INDEX", "1"), ("UV_FIND_LINKS", str(index)))
    spec = EnvironmentSpec(python=here, packages=("swt-fixture-legacy[more]",), env=offline)
    environments = LocalEnvironments(tmp_path / "envs", Interpreters(), sandbox="none")
    venv = environments.python(spec)
    listed = _installed(venv)
    assert {"swt-fixture-legacy==1.0", "swt-fixture-dep==2019.1", "swt-fixture-more==1.0"} <= set(
        listed
    )
    log = (tmp_path / "envs" / f"{spec.key()}.build.log").read_text()
    assert "# legacy metadata: swt-fixture-legacy==1.0 (uv cannot parse its metadata" in log
    assert (
        "# legacy metadata: swt-fixture-legacy==1.0: 'swt-fixture-dep (>=2011k)' read as "
        "'swt-fixture-dep>=2011'" in log
    )
    assert (venv.parent.parent / "swt-dependency-metadata.toml").is_file()
    assert '"$SWT_RETRY" swt-install' in log and "def lenient_requirement" not in log  # by name

    # metadata the lenient reading cannot mend (a marker uv refuses, kept as written): the
    # install ends with uv's error after one repair, never in a loop
    broken = dataclasses.replace(spec, packages=("swt-fixture-broken",))
    with pytest.raises(EnvironmentBuildError):
        environments.python(broken)
    log = (tmp_path / "envs" / f"{broken.key()}.build.log").read_text()
    assert log.count("# legacy metadata: swt-fixture-broken==1.0 (uv cannot parse") == 1
    assert "python_version >> '3'" in log.split("# legacy metadata: swt-fixture-broken")[-1]


def test_optional_additions_resolve_after_the_pinned_stack_without_its_overrides():
    """xarray's spec pins numpy 1.23.0 and adds sparse: as an override the pin voided numba's
    own ``numpy<1.22``, and a numba that cannot be imported was installed beside it."""
    spec = dataclasses.replace(
        BASE, packages=("numpy==1.23.0", "werkzeug<2.1", "sparse", "dask[array]", "zarr")
    )
    assert spec.optional == ("sparse", "dask[array]", "zarr")  # a bounded one steers the stack
    steps = install_steps(spec, base_python="p", venv="/e", project_dir="/src", uv="uv")
    assert [s.label for s in steps] == ["venv", "overrides", "dependencies", "optional packages"]
    stack, optional = steps[2].argv, steps[3].argv
    assert "werkzeug<2.1" in stack and not {"sparse", "dask[array]", "zarr"} & set(stack)
    assert optional[4:8] == ("/e", "uv", "/e/bin/python", "sparse dask[array] zarr")
    assert optional[8:13] == ("sh", "-c", RETRY, "swt-install", "uv")
    assert "--overrides" not in optional  # the pins meet them as installed: constraints
    # but a pinned build tool still overrides their bounds on it (numba 0.56: setuptools<60)
    tooled = dataclasses.replace(spec, packages=(*spec.packages, "setuptools==68.0.0"))
    last = install_steps(tooled, base_python="p", venv="/e", project_dir="/src")[-1].argv
    assert last[last.index("--overrides") + 1] == "/e/swt-build-constraints.txt"
    assert "/e/swt-overrides.txt" not in last
    assert dated_for(optional) == dated_for(stack)  # dated as the stack is
    assert "--exclude-newer" in optional
    # no pins that override: one resolution, as before (and the same key)
    inferred = dataclasses.replace(spec, pins_override=False)
    assert inferred.optional == ()
    assert "optional packages" not in [s.label for s in install_steps(
        inferred, base_python="p", venv="/e", project_dir="/src")]  # fmt: skip
    assert dataclasses.replace(BASE, packages=("pytest==8.3.5",)).optional == ()
    assert spec.key() != dataclasses.replace(spec, packages=spec.packages[:2]).key()


def test_a_build_tool_named_bare_is_installed_with_the_stack_before_the_install_command():
    """astropy's spec names ``pip`` bare beside its pins and installs the project with
    ``python -m pip install --no-build-isolation .``: as an optional addition pip came after
    that command, and every environment of it failed with "No module named pip"."""
    spec = dataclasses.replace(
        BASE,
        packages=("pip", "setuptools==38.2.4", "numpy==1.16.0", "jinja2"),
        install_command="python -m pip install --no-build-isolation .",
    )
    assert spec.optional == ("jinja2",)
    steps = install_steps(spec, base_python="p", venv="/e", project_dir="/src", uv="uv")
    labels = [s.label for s in steps]
    assert labels.index("dependencies") < labels.index("install command")
    assert "pip" in steps[labels.index("dependencies")].argv
    assert steps[-1].label == "optional packages" and "pip" not in steps[-1].argv[7].split()
    # such specs get a key of their own (their environments were built without pip before);
    # one without a bare build tool keeps its key
    assert spec.key_material()["bare_build_tools_in_stack"] is True
    assert (
        "bare_build_tools_in_stack"
        not in dataclasses.replace(spec, packages=spec.packages[1:]).key_material()
    )


@pytest.mark.slow
def test_an_optional_addition_that_cannot_coexist_with_the_pins_is_left_out(tmp_path):
    """A local index (no network): ``base`` pinned at 1.0; ``fits`` accepts it, ``needs-new``
    wants ``base>=2``. With the pin as an override it was installed beside base 1.0; now it is
    left out and named, and everything else is installed."""
    bundled = sorted((Path(ensurepip.__file__).parent / "_bundled").glob("setuptools-*.whl"))
    if not bundled:
        pytest.skip("this Python bundles no setuptools wheel for the local index")
    index = tmp_path / "index"
    index.mkdir()
    shutil.copy(bundled[0], index)
    setuptools = bundled[0].name.split("-")[1]
    write_wheel(index, "swt-fixture-base", "1.0")
    write_wheel(index, "swt-fixture-base", "2.0")
    write_wheel(index, "swt-fixture-fits", "1.0", ["swt-fixture-base"])
    write_wheel(index, "swt-fixture-needs-new", "1.0", ["swt-fixture-base>=2"])
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    spec = EnvironmentSpec(
        python=here,
        packages=(f"setuptools=={setuptools}", "swt-fixture-base==1.0", "swt-fixture-needs-new",
                  "swt-fixture-fits"),
        env=(("UV_NO_INDEX", "1"), ("UV_FIND_LINKS", str(index))),
    )  # fmt: skip
    environments = LocalEnvironments(tmp_path / "envs", Interpreters(), sandbox="none")
    venv = environments.python(spec)
    listed = _installed(venv)
    assert "swt-fixture-base==1.0" in listed and "swt-fixture-fits==1.0" in listed
    assert not [line for line in listed if line.startswith("swt-fixture-needs-new")]
    assert left_out(venv.parent.parent) == ("swt-fixture-needs-new",)
    record = json.loads((venv.parent.parent / COMPLETE).read_text())
    assert record["left_out"] == ["swt-fixture-needs-new"]
    log = (tmp_path / "envs" / f"{spec.key()}.build.log").read_text()
    assert "swt: left out swt-fixture-needs-new: it cannot be installed beside the pinned" in log


def test_a_specs_optional_packages_come_after_the_stack_with_uv_and_with_pip():
    """A spec's ``optional_packages`` (an inferred one's: what its CI installs from a VCS URL)
    are optional whatever its pins: never in the stack's resolution, never twice, never one
    the stack's packages name."""
    spec = dataclasses.replace(
        BASE,
        packages=("numpy==1.23.0", "sparse"),
        optional_packages=("some-data", "Sparse", "NumPy", "some_data", "charpyls"),
    )
    assert spec.optional == ("sparse", "some-data", "charpyls")
    for installer in ("uv", "pip"):
        steps = install_steps(spec, base_python="p", venv="/e", project_dir="/src",
                              installer=installer)  # fmt: skip
        (stack,) = [s.argv for s in steps if s.label == "dependencies"]
        optional = steps[-1].argv
        assert steps[-1].label == "optional packages"
        assert not {"some-data", "charpyls"} & set(stack)
        script = optional[2]
        if installer == "uv":
            assert optional[7] == "sparse some-data charpyls"
            assert '"$uv" pip list --python "$python" --format freeze' in script
            assert "--constraints" in script and "sparse" not in stack
        else:  # pip: the optional additions stay in the stack, as before
            assert optional[7] == "some-data charpyls" and "sparse" in stack
            assert '"$python" -m pip list --format freeze' in script
            assert '--constraint "$stack"' in script and "--constraints" not in script
    # an inferred spec (no pins that override) gets the step for them alone
    inferred = dataclasses.replace(spec, pins_override=False)
    assert inferred.optional == ("some-data", "charpyls")
    # unset, the keys of every other environment stay as they were
    assert dataclasses.replace(BASE, optional_packages=()).key() == BASE.key()
    assert spec.key() != dataclasses.replace(spec, optional_packages=("some-data",)).key()
    assert "optional packages" not in [s.label for s in install_steps(
        dataclasses.replace(BASE, packages=("pytest",)), base_python="p", venv="/e",
        project_dir="/src")]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_an_optional_package_the_index_lacks_is_left_out_and_the_environment_builds(
    tmp_path, installer
):
    """A local index (no network): CI installed ``swt-fixture-missing`` from a GitHub URL, and
    no index has a distribution of that name; ``swt-fixture-fits`` is there. The environment
    builds, with the one and without the other, which is named."""
    bundled = sorted((Path(ensurepip.__file__).parent / "_bundled").glob("setuptools-*.whl"))
    if not bundled:
        pytest.skip("this Python bundles no setuptools wheel for the local index")
    if installer == "uv" and find_uv() is None:
        pytest.skip("uv is not installed")
    index = tmp_path / "index"
    index.mkdir()
    shutil.copy(bundled[0], index)
    write_wheel(index, "swt-fixture-base", "1.0")
    write_wheel(index, "swt-fixture-fits", "1.0", ["swt-fixture-base"])
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    offline = (("UV_NO_INDEX", "1"), ("UV_FIND_LINKS", str(index)), ("PIP_NO_INDEX", "1"),
               ("PIP_FIND_LINKS", str(index)))  # fmt: skip
    spec = EnvironmentSpec(
        python=here,
        packages=("swt-fixture-base",),
        optional_packages=("swt-fixture-missing", "swt-fixture-fits"),
        pins_override=False,
        env=offline,
    )
    environments = LocalEnvironments(
        tmp_path / "envs", Interpreters(), installer=installer, sandbox="none"
    )
    venv = environments.python(spec)
    listed = _installed(venv, installer)
    assert "swt-fixture-base==1.0" in listed and "swt-fixture-fits==1.0" in listed
    assert not [line for line in listed if line.startswith("swt-fixture-missing")]
    assert left_out(venv.parent.parent) == ("swt-fixture-missing",)
    record = json.loads((venv.parent.parent / COMPLETE).read_text())
    assert record["left_out"] == ["swt-fixture-missing"] and record["installer"] == installer
    assert record["optional_packages"] == ["swt-fixture-missing", "swt-fixture-fits"]
    log = (tmp_path / "envs" / f"{spec.key()}.build.log").read_text()
    assert "swt: left out swt-fixture-missing: it cannot be installed beside the pinned" in log


def _installed(venv: Path, installer: str = "uv") -> list[str]:
    """What the environment's installer lists as installed, ``name==version`` each."""
    argv = (
        [str(venv), "-m", "pip", "list", "--format", "freeze"]
        if installer == "pip"
        else [find_uv(), "pip", "list", "--python", str(venv), "--format", "freeze"]
    )
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()
