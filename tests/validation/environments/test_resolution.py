"""Which Python a resolved environment gets, where that choice came from, and the date it
resolves as of."""

import json

import pytest
from pydantic import ValidationError

from builder.core.config import ValidationConfig, load_config
from tests.support.git import GIT_ENV
from tests.support.records import candidate
from validation.environments.environment import python_floor
from validation.environments.resolution import RESOLUTION_VERSION, EnvironmentResolver, resolve
from validation.environments.specs import RepoSpec, Settings, load_spec

AVAILABLE = ["3.8", "3.9", "3.10", "3.11", "3.12"]


def test_a_tested_python_wins_over_the_era(git_repo):
    # commits are dated 2024-01-01: the era rule alone gives 3.11 (3.12 is under a year old)
    base = git_repo.commit(
        {
            "setup.py": "setup(name='w', version='1.0', python_requires='>=3.8')\n",
            "tox.ini": "[tox]\nenvlist = py{38,39,310}\n",
        }
    )
    spec = RepoSpec(repo="acme/widgets")
    resolution = resolve(spec, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE)
    assert resolution.spec.python == "3.9" and resolution.python_source == "tox envlist"
    assert resolution.metadata()["python_source"] == "tox envlist"
    assert resolution.spec.python_tested  # its CI ran it then: no floor raises the date
    newest = resolve(
        spec, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE,
        python_choice="newest",
    )  # fmt: skip
    assert newest.spec.python == "3.10"
    # a tested Python not available here is no candidate: the median of the other two
    older = resolve(spec, mirror=git_repo.path, base_commit=base, available_pythons=["3.8", "3.9"])
    assert older.spec.python == "3.9"


def test_a_golden_test_importing_a_newer_standard_module_gets_a_python_that_has_it(git_repo):
    """CI tested 3.9-3.11 (median 3.10); the golden test starts to import ``tomllib`` (3.11+):
    only 3.11 of them has it. A test patch importing nothing of the kind keeps the median."""
    base = git_repo.commit({"setup.py": "setup(name='w')\n",
                            "tox.ini": "[tox]\nenvlist = py{39,310,311}\n"})  # fmt: skip
    spec = RepoSpec(repo="acme/widgets")
    plain = resolve(spec, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE)
    assert plain.spec.python == "3.10"
    needs = resolve(
        spec, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE,
        stdlib_modules=["tomllib"],
    )  # fmt: skip
    assert needs.spec.python == "3.11" and needs.python_source == "tox envlist"
    gone = resolve(
        spec, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE,
        stdlib_modules=["distutils"],
    )  # fmt: skip
    assert gone.spec.python == "3.10"  # 3.12 lacks it: the tested median of 3.9-3.11 stays


def test_a_golden_test_skipped_on_the_median_python_gets_one_that_runs_it(git_repo, tmp_path):
    """CI tested 3.8-3.11 (median 3.10); the golden test the patch changes is skipped from 3.10
    on (its decorator is no line of the patch): of the tested Pythons that run it, the median,
    3.9. A change to a test with no such skip keeps 3.10."""
    test = (
        "import sys\nimport pytest\n\n\n"
        "@pytest.mark.skipif(sys.version_info >= (3, 10), reason='old API')\n"
        "def test_old():\n    assert 1\n\n\ndef test_any():\n    assert 1\n"
    )
    base = git_repo.commit({"setup.py": "setup(name='w')\n", "tests/test_w.py": test,
                            "tox.ini": "[tox]\nenvlist = py{38,39,310,311}\n"})  # fmt: skip

    def change(line: int) -> str:
        lines = test.splitlines()
        return (
            "--- a/tests/test_w.py\n+++ b/tests/test_w.py\n"
            f"@@ -{line},1 +{line},1 @@\n-{lines[line - 1]}\n+    assert 2\n"
        )

    resolver = EnvironmentResolver(
        ValidationConfig(bundled_specs=False), tmp_path, lambda: AVAILABLE
    )
    old = resolver.resolve(candidate(repo="acme/w", base_commit=base, test_patch=change(7)),
                           git_repo.path)  # fmt: skip
    assert (old.spec.python, old.python_source) == ("3.9", "tox envlist")
    other = resolver.resolve(candidate(repo="acme/w", base_commit=base, test_patch=change(11)),
                             git_repo.path)  # fmt: skip
    assert other.spec.python == "3.10"


def test_the_golden_tests_skips_are_read_only_when_a_python_is_chosen_here(git_repo):
    base = git_repo.commit({"setup.py": "setup(name='w')\n"})

    def unread():
        raise AssertionError("read although the spec names the Python")

    spec = RepoSpec.model_validate({"repo": "acme/w", "defaults": {"python": "3.9"}})
    named = resolve(spec, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE,
                    golden_skips=unread)  # fmt: skip
    assert named.spec.python == "3.9"


def test_the_projects_pins_are_floors_on_a_python_its_ci_did_not_test(git_repo):
    # CI tested 3.3 only, which is not available: the era's Python runs it, where pytest 2.3.4
    # (the project's pin of 2013) cannot
    base = git_repo.commit({"setup.py": "setup(name='w')\n",
                            ".travis.yml": "python:\n  - 2.7\n  - 3.3\n"})  # fmt: skip
    pins = ["py==1.4.12", "pytest==2.3.4", "mock>=1.0", "six==1.*"]
    inferred = RepoSpec(repo="acme/widgets", defaults=Settings(packages=pins, pins_override=False))
    resolution = resolve(
        inferred, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE
    )
    assert resolution.python_source == "era"
    assert resolution.spec.packages == ("py>=1.4.12", "pytest>=2.3.4", "mock>=1.0", "six==1.*")
    assert resolution.relaxed_pins == ("py==1.4.12", "pytest==2.3.4")
    assert json.loads(resolution.metadata()["relaxed_pins"]) == ["py==1.4.12", "pytest==2.3.4"]
    # a spec author's pins hold as written, and so do the project's on a Python its CI ran
    authored = RepoSpec(repo="acme/widgets", defaults=Settings(packages=pins))
    kept = resolve(authored, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE)
    assert kept.spec.packages == tuple(pins) and "relaxed_pins" not in kept.metadata()
    tested = git_repo.commit({".travis.yml": "python:\n  - 3.9\n"})
    on_tested = resolve(
        inferred, mirror=git_repo.path, base_commit=tested, available_pythons=AVAILABLE
    )
    assert on_tested.python_source == "travis" and on_tested.spec.packages == tuple(pins)


def test_the_test_tools_own_dependencies_the_project_declares_are_dated(git_repo):
    setup_cfg = (
        "[metadata]\nname = pytest\n[options]\ninstall_requires =\n"
        "    pluggy>=0.12,<2.0\n    iniconfig\n    packaging\n"
        '    exceptiongroup>=1.0.0rc8;python_version<"3.11"\n'
    )
    base = git_repo.commit({"setup.py": "from setuptools import setup\nsetup()\n",
                            "setup.cfg": setup_cfg})  # fmt: skip
    spec = RepoSpec(repo="pytest-dev/pytest")
    resolution = resolve(spec, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE)
    assert resolution.spec.dated_tools == ("pluggy", "iniconfig", "exceptiongroup")
    undated = resolve(
        spec, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE,
        dated_default=False,
    )  # fmt: skip
    assert undated.spec.dated_tools == ()  # nothing is dated there


def test_classifiers_then_the_era_then_the_spec_python(git_repo):
    base = git_repo.commit({"setup.py": "classifiers=['Programming Language :: Python :: 3.12']\n"})
    spec = RepoSpec(repo="acme/widgets")
    named = resolve(spec, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE)
    assert (named.spec.python, named.python_source) == ("3.12", "classifiers")
    plain = git_repo.commit({"setup.py": "setup(name='w', version='1.0')\n"})
    era = resolve(spec, mirror=git_repo.path, base_commit=plain, available_pythons=AVAILABLE)
    assert (era.spec.python, era.python_source) == ("3.11", "era")
    pinned = RepoSpec(repo="acme/widgets", defaults=Settings(python="3.8"))
    given = resolve(pinned, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE)
    assert (given.spec.python, given.python_source) == ("3.8", "spec")
    assert not any(r.spec.python_tested for r in (named, era, given))  # nothing says it ran
    assert all(r.spec.pins_override for r in (named, era, given))  # a spec's pins win


def test_the_metadata_says_the_date_the_environment_was_resolved_as_of(git_repo):
    # commits are dated 2024-01-01, under WHEELS_LAG_DAYS after 3.12.0 (2023-10-02)
    spec = RepoSpec(repo="acme/widgets")
    classifier = git_repo.commit(
        {"setup.py": "classifiers=['Programming Language :: Python :: 3.12']\n"}
    )
    named = resolve(spec, mirror=git_repo.path, base_commit=classifier, available_pythons=AVAILABLE)
    metadata = named.metadata()
    assert metadata["exclude_newer"] == "2024-01-01T00:00:00Z"  # the environment commit's
    assert metadata["resolved_as_of"] == python_floor("3.12") > metadata["exclude_newer"]
    tested = git_repo.commit({"tox.ini": "[tox]\nenvlist = py312\n"})  # 3.12.1 was out
    ran = resolve(spec, mirror=git_repo.path, base_commit=tested, available_pythons=AVAILABLE)
    assert ran.metadata()["resolved_as_of"] == ran.metadata()["exclude_newer"]
    undated = RepoSpec(repo="acme/widgets", defaults=Settings(dated=False))
    plain = resolve(undated, mirror=git_repo.path, base_commit=tested, available_pythons=AVAILABLE)
    assert plain.metadata()["resolved_as_of"] == plain.metadata()["exclude_newer"] == ""


def test_inferred_at_the_environment_commit_and_written_per_version(tmp_path, git_repo):
    old = git_repo.commit({"setup.py": "setup(name='w', version='1.0')\n", "tox.ini": TOX})
    git_repo.git("tag", "v1.0.0")
    base_1 = git_repo.commit({"w.py": "x = 1\n"})
    new = git_repo.commit(
        {"setup.py": "setup(name='w', version='2.0')\n", "requirements-test.txt": "mock\n"}
    )
    base_2 = git_repo.commit({"w.py": "x = 2\n"})
    settings = ValidationConfig(bundled_specs=False)
    resolver = EnvironmentResolver(settings, tmp_path / "inferred", lambda: AVAILABLE)
    first = resolver.resolve(candidate(repo="acme/w", base_commit=base_1), git_repo.path)
    assert first.environment_commit == old and first.version == "1.0"  # the release tag
    assert first.spec.python == "3.9" and first.python_source == "tox envlist"
    assert first.spec.packages == ("pytest",)
    assert not first.spec.pins_override  # the project's own pins are requirements
    second = resolver.resolve(
        candidate(repo="acme/w", base_commit=base_2, environment_setup_commit=new),
        git_repo.path,
    )
    assert second.version == "2.0" and set(second.spec.packages) == {"mock", "pytest"}
    written = load_spec(tmp_path / "inferred" / "acme__w.toml")
    assert written.version.setup_commits == {"1.0": old, "2.0": new}
    assert [e.versions for e in written.environments] == ["==1.0", "==2.0"]
    assert written.settings("2.0").packages == ["mock", "pytest"]
    assert written.settings("1.0").packages == ["pytest"] and "1.0: Inferred" in written.note
    # moved into a spec directory, the review copy keeps its pins as requirements
    assert written.settings("2.0").pins_override is False
    moved = resolve(
        written, mirror=git_repo.path, base_commit=base_2, record_version="2.0",
        record_setup_commit=new, available_pythons=AVAILABLE, spec_source="specs/acme__w.toml",
    )  # fmt: skip
    assert not moved.spec.pins_override


TOX = "[tox]\nenvlist = py38,py39\n[testenv]\ncommands = pytest\n"


def test_unpinned_packages_resolve_as_of_a_given_date_python_still_by_the_commit(git_repo):
    """``resolve_as_of``: a reference's build date for every dated environment; the Python is
    still the environment commit's era's (commits here are dated 2024-01-01)."""
    base = git_repo.commit({"setup.py": "setup(name='w', version='1.0')\n"})
    spec = RepoSpec(repo="acme/widgets")
    own = resolve(spec, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE)
    assert own.spec.exclude_newer.startswith("2024-01-01T")
    later = resolve(spec, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE,
                    resolve_as_of="2024-06-01")  # fmt: skip
    assert later.spec.exclude_newer == "2024-06-01T00:00:00Z"
    assert later.spec.python == own.spec.python == "3.11"
    undated = resolve(
        RepoSpec(repo="acme/widgets", defaults=Settings(dated=False)), mirror=git_repo.path,
        base_commit=base, available_pythons=AVAILABLE, resolve_as_of="2024-06-01",
    )  # fmt: skip
    assert undated.spec.exclude_newer == ""  # a spec's dated = false wins


def test_a_tested_python_keeps_only_its_own_date(git_repo):
    """A Python the CI ran says the dependencies of the environment's own date installed on it;
    of another date (``resolve_as_of``) or undated, it says nothing."""
    base = git_repo.commit({"setup.py": "setup(name='w')\n", "tox.ini": "[tox]\nenvlist=py311\n"})
    spec = RepoSpec(repo="acme/widgets")
    own = resolve(spec, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE)
    assert own.spec.python == "3.11" and own.spec.python_tested
    later = resolve(spec, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE,
                    resolve_as_of="2024-06-01")  # fmt: skip
    assert later.spec.python == "3.11" and not later.spec.python_tested
    undated = resolve(spec, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE,
                      dated_default=False)  # fmt: skip
    assert not undated.spec.python_tested
    # the rule changes what stored results mean: they are recomputed
    resolver = EnvironmentResolver(ValidationConfig(), git_repo.path / "inferred", lambda: [])
    assert resolver.fingerprint()["resolution_version"] == RESOLUTION_VERSION >= 2


def test_a_python_weeks_old_keeps_the_floor(git_repo, monkeypatch):
    """A month after 3.12.0 (before 3.12.1, 2023-12-07) a CI on 3.12 built from sdists what
    had no wheels for it: the tested Python is taken, its resolution still raised."""
    monkeypatch.setitem(GIT_ENV, "GIT_COMMITTER_DATE", "2023-11-01T00:00:00+00:00")
    base = git_repo.commit({"setup.py": "setup(name='w')\n", "tox.ini": "[tox]\nenvlist=py312\n"})
    spec = RepoSpec(repo="acme/widgets")
    fresh = resolve(spec, mirror=git_repo.path, base_commit=base, available_pythons=AVAILABLE)
    assert (fresh.spec.python, fresh.python_source) == ("3.12", "tox envlist")
    assert not fresh.spec.python_tested
    monkeypatch.setitem(GIT_ENV, "GIT_COMMITTER_DATE", "2023-12-08T00:00:00+00:00")
    later = git_repo.commit({"w.py": "x = 1\n"})
    stable = resolve(spec, mirror=git_repo.path, base_commit=later, available_pythons=AVAILABLE)
    assert stable.spec.python == "3.12" and stable.spec.python_tested


def test_resolve_as_of_takes_a_date_and_is_in_the_fingerprint(tmp_path):
    with pytest.raises(ValidationError):
        ValidationConfig(resolve_as_of="June 2024")
    config = tmp_path / "swt-builder.toml"
    config.write_text("[validation]\nresolve_as_of = 2024-06-01\n")  # a TOML date
    assert load_config(config).validation.resolve_as_of == "2024-06-01"
    given = load_config(None, ["validation.resolve_as_of=2024-06-02"], cwd=tmp_path)
    assert given.validation.resolve_as_of == "2024-06-02"
    prints = [
        EnvironmentResolver(
            ValidationConfig(resolve_as_of=when), tmp_path, lambda: AVAILABLE
        ).fingerprint()["resolve_as_of"]
        for when in ("", "2024-06-01")
    ]
    assert prints == ["", "2024-06-01"]
