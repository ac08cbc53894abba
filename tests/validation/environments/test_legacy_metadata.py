"""Metadata uv refuses (bounds that are no PEP 440 version), read leniently into uv's
``dependency-metadata``; the script runs on the oldest Python an environment may have."""

import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from validation.environments import legacy_metadata
from validation.environments.legacy_metadata import entry, lenient_requirement


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("pytz (>=2011k)", "pytz>=2011"),  # pandas <= 0.24.2
        ("pytz>=2011k", "pytz>=2011"),
        ("foo (>=3.)", "foo>=3"),
        ("foo (>=abc)", "foo"),  # no release number: the bound is left out, not the package
        ("foo (>=abc,<2)", "foo<2"),
        ("Foo_Bar[x,y] (>=2011k,<2020) ; python_version < '3'",
         "Foo_Bar[x,y]>=2011,<2020; python_version < '3'"),
        ("foo (==1.x.*)", "foo==1"),
    ],
)  # fmt: skip
def test_a_bound_that_is_no_pep440_version_is_read_as_its_release_number(written, read):
    assert lenient_requirement(written) == read


@pytest.mark.parametrize(
    "written",
    [
        "numpy (>=1.12.0)",
        "numpy>=1.12.0",
        "foo (>=1.0rc1)",
        "foo>=1.0.post1,!=1.1.*",
        "foo>=1.0-1",  # an implicit post-release
        "foo>=1!2.0.dev3+local.7",
        "foo===2011k",  # arbitrary equality takes any string
        "foo",
        "foo ; extra == 'test'",
        "foo @ https://example.invalid/foo-2011k.whl",
    ],
)
def test_what_uv_reads_stays_as_written(written):
    assert lenient_requirement(written) is None


METADATA = """\
Metadata-Version: 2.1
Name: pandas
Version: 0.24.2
Summary: Powerful data structures
Requires-Python: >=2.7,!=3.0.*,!=3.1.*,!=3.2.*,!=3.3.*,!=3.4.*
Requires-Dist: python-dateutil (>=2.5.0)
Requires-Dist: pytz (>=2011k)
Requires-Dist: numpy (>=1.12.0)
Requires-Dist: pytest (>=4.0.2) ; extra == 'test'
Provides-Extra: test
Description: a body line that looks like
        Requires-Dist: a field (>=0x)

Requires-Dist: not-a-field (>=9z)
"""


def test_an_entry_keeps_everything_but_the_bounds_uv_refuses():
    text, rewritten = entry(METADATA, "pandas", "0.24.2")
    (read,) = tomllib.loads(text)["dependency-metadata"]
    assert read == {
        "name": "pandas",
        "version": "0.24.2",
        "requires-dist": ["python-dateutil (>=2.5.0)", "pytz>=2011", "numpy (>=1.12.0)",
                          "pytest (>=4.0.2) ; extra == 'test'"],
        "requires-python": ">=2.7,!=3.0.*,!=3.1.*,!=3.2.*,!=3.3.*,!=3.4.*",
        "provides-extras": ["test"],
    }  # fmt: skip
    assert rewritten == [("pytz (>=2011k)", "pytz>=2011")]


def test_a_requires_python_uv_refuses_is_read_the_same_way():
    text, rewritten = entry("Name: old\nVersion: 1.0\nRequires-Python: >=2.6.x\n", "old", "1.0")
    assert tomllib.loads(text)["dependency-metadata"][0]["requires-python"] == ">=2.6"
    assert rewritten == [("Requires-Python: >=2.6.x", "Requires-Python: >=2.6")]


def test_the_script_on_the_oldest_python_appends_an_entry_per_release(tmp_path):
    oldest = Path("/root/.pyenv/versions/3.6.15/bin/python3.6")
    python = str(oldest) if oldest.exists() else sys.executable
    config = tmp_path / "uv.toml"
    source = Path(legacy_metadata.__file__).read_text()
    for name, version in (("pandas", "0.24.2"), ("other", "1.0")):
        info = tmp_path / name / f"{name}-{version}.dist-info"
        info.mkdir(parents=True)
        metadata = METADATA.replace("pandas", name).replace("0.24.2", version)
        (info / "METADATA").write_text(metadata, encoding="utf-8")
        release = f"{name}=={version}"
        done = subprocess.run([python, "-c", source, str(info.parent), str(config), release],
                              capture_output=True, text=True, check=True)  # fmt: skip
        assert (
            done.stdout == f"# legacy metadata: {release}: 'pytz (>=2011k)' read as 'pytz>=2011'\n"
        )
    entries = tomllib.loads(config.read_text())["dependency-metadata"]
    assert [(e["name"], e["version"]) for e in entries] == [("pandas", "0.24.2"), ("other", "1.0")]
    # the release uv named, never what a file says it is
    named = tomllib.loads(entry(METADATA, "other", "2.0")[0])["dependency-metadata"][0]
    assert (named["name"], named["version"]) == ("other", "2.0")
    failed = subprocess.run([python, "-c", source, str(tmp_path / "none"), str(config), "x==1"],
                            capture_output=True, text=True)  # fmt: skip
    assert failed.returncode == 1 and "no METADATA" in failed.stderr
