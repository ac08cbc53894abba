"""A reference's per-instance environment files (SWE-bench's conda exports) read as pins,
Debian packages and what neither stands for; resolved as the instance's environment."""

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from builder.core.config import DockerConfig, ValidationConfig, load_config
from tests.support.records import candidate
from validation.environments.docker_environments import build_script
from validation.environments.environment import (
    EnvironmentSpec,
    LocalEnvironments,
    install_steps,
)
from validation.environments.interpreters import Interpreters
from validation.environments.reference import (
    ReferenceFileError,
    read_reference,
    reference_file,
)
from validation.environments.resolution import EnvironmentResolver
from validation.environments.specs import SpecError

AVAILABLE = ["3.8", "3.9", "3.10", "3.11", "3.12"]
HERE = f"{sys.version_info.major}.{sys.version_info.minor}"

EXPORT = """\
name: testbed
channels:
  - defaults
  - conda-forge
dependencies:
  - _libgcc_mutex=0.1=main
  - ca-certificates=2024.9.24=h06a4308_0
  - openssl=3.0.15=h5eee18b_0
  - python=3.9.20=he870216_1
  - python_abi=3.9=5_cp39
  - pip=24.2=py39h06a4308_0
  - setuptools=75.1.0=py39h06a4308_0
  - backports.zoneinfo=0.2.1=py39hf3d152e_9
  - click=8.1.7=unix_pyh707e725_0
  - h5py=3.11.0=nompi_py39hf054cd7_102
  - hdf5=1.14.3=nompi_hdf9ad27_105
  - matplotlib-base=3.9.2=py39h68603db_1
  - msgpack-python=1.1.0=py39h3788b33_0
  - pytorch=2.1.0=py3.9_cpu_0
  - seaborn=0.13.2=hd8ed1ab_2
  - seaborn-base=0.13.2=pyhd8ed1ab_2
  - cdms2=3.1.5=py39h366d46e_22
  - aws-c-common=0.9.28=hb9d3cd8_0
  - widgets=1.0=py39_0
  - pip:
      - astroid==2.11.7
      - click==8.1.3
      - -e git+https://example.invalid/acme/tool.git@0123abc#egg=tool
      - widgets==1.0.dev0
prefix: /opt/miniconda3/envs/testbed
"""


def _write(root: Path, relative: str, text: str = EXPORT) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_conda_export_becomes_pins_debian_packages_and_a_list_of_the_rest(tmp_path):
    path = _write(tmp_path, "acme__widgets/7/environment.yml")
    reference = read_reference(path, tmp_path, project="widgets")
    assert (reference.python, reference.python_full) == ("3.9", "3.9.20")
    assert reference.label == "reference:acme__widgets/7/environment.yml"
    assert reference.pins == (
        "astroid==2.11.7",
        "click==8.1.3",  # the pip: section's (installed last), not conda's 8.1.7
        "h5py==3.11.0",
        "matplotlib==3.9.2",  # conda names mapped to PyPI's
        "msgpack==1.1.0",
        "pip==24.2",
        "seaborn==0.13.2",  # the metapackage seaborn stands for seaborn-base: one pin
        "setuptools==75.1.0",
        "torch==2.1.0",
    )
    assert reference.system == ("aws-c-common=0.9.28", "hdf5=1.14.3")  # the interpreter's: none
    assert reference.debian == ("libhdf5-dev",)
    unmapped = dict(reference.unmapped)
    assert set(unmapped) == {
        "aws-c-common=0.9.28",
        "backports-zoneinfo==0.2.1",  # zoneinfo is in 3.9's standard library
        "cdms2=3.1.5",
        "widgets=1.0",
        "widgets==1.0.dev0",
        "-e git+https://example.invalid/acme/tool.git@0123abc#egg=tool",
    }
    assert "conda-only" in unmapped["cdms2=3.1.5"]
    assert "the project itself" in unmapped["widgets==1.0.dev0"]
    assert "without a Debian package" in unmapped["aws-c-common=0.9.28"]
    metadata = reference.metadata()
    assert metadata["reference_python"] == "3.9.20"
    assert json.loads(metadata["reference_debian_packages"]) == ["libhdf5-dev"]
    assert "cdms2=3.1.5" in json.loads(metadata["reference_unmapped"])


def test_an_empty_pip_section_and_unreadable_files(tmp_path):
    bare = "dependencies:\n  - python=3.6.13=h12debd9_1\n  - pip:\n"
    reference = read_reference(_write(tmp_path, "a__b/1/environment.yml", bare), tmp_path)
    assert (reference.python, reference.pins, reference.unmapped) == ("3.6", (), ())
    for text, message in (
        ("dependencies: [", "not valid YAML"),
        ("name: testbed\n", "no dependencies list"),
        ("dependencies:\n  - pip=24.2=py39_0\n", "no python package"),
    ):
        with pytest.raises(ReferenceFileError, match=message):
            read_reference(_write(tmp_path, "a__b/2/environment.yml", text), tmp_path)


def test_an_instance_finds_its_file_in_the_directory_or_a_checkout(tmp_path):
    _write(tmp_path / "files", "acme__widgets/7/environment.yml")
    found = reference_file(tmp_path / "files", "acme/widgets", "acme__widgets-7")
    assert found == tmp_path / "files" / "acme__widgets/7/environment.yml"
    assert reference_file(tmp_path / "files", "acme/widgets", "acme__widgets-8") is None
    assert reference_file(tmp_path / "files", "acme/gadgets", "acme__widgets-7") is None
    assert reference_file(tmp_path / "files", "acme/widgets", "acme__widgets-..") is None
    checkout = tmp_path / "SWE-bench"
    _write(checkout, "swebench/resources/swebench-og/acme__widgets/7/environment.yml")
    assert reference_file(checkout, "acme/widgets", "acme__widgets-7") is not None


def test_the_resolver_builds_an_instance_with_a_file_in_its_reference_environment(
    tmp_path, git_repo
):
    base = git_repo.commit(
        {
            "setup.py": "setup(name='widgets', version='1.0')\n",
            "tox.ini": "[tox]\nenvlist = py311\n",  # the inferred Python: 3.11
            "requirements-test.txt": "mock\n",
        }
    )
    files = tmp_path / "files"
    _write(files, "acme__widgets/7/environment.yml")
    _write(files, "acme__widgets/8/environment.yml")  # the same list: the same environment
    settings = ValidationConfig(bundled_specs=False, reference_environments=str(files))
    resolver = EnvironmentResolver(settings, tmp_path / "inferred", lambda: AVAILABLE)
    record = candidate(instance_id="acme__widgets-7", repo="acme/widgets", base_commit=base)
    resolution = resolver.resolve(record, git_repo.path)
    spec = resolution.spec
    assert spec.python == "3.9" and resolution.python_source == "reference"
    assert resolution.spec_source == "reference:acme__widgets/7/environment.yml"
    assert "astroid==2.11.7" in spec.pins and "torch==2.1.0" in spec.pins
    assert spec.packages[-1] == "pytest"  # the spec's packages the reference does not name
    assert spec.requirements == () and spec.extras == ()  # the reference lists what it held
    assert spec.pins_override and spec.image_packages == ("libhdf5-dev",)
    metadata = resolution.metadata()
    assert metadata["environment_spec"] == resolution.spec_source
    assert (
        metadata["reference_python"] == "3.9.20" and "cdms2=3.1.5" in metadata["reference_unmapped"]
    )
    twin = resolver.resolve(
        record.model_copy(update={"instance_id": "acme__widgets-8"}), git_repo.path
    )
    assert twin.spec.key() == spec.key()  # identical pinned lists: one environment
    other = resolver.resolve(
        record.model_copy(update={"instance_id": "acme__widgets-9"}), git_repo.path
    )  # no file: the inferred spec, as without the setting
    assert other.spec_source == "inferred" and other.spec.python == "3.11"
    assert other.reference is None and "reference_python" not in other.metadata()
    # results depend on the file: its digest is in the instance's key material alone
    digest = resolver.spec_digest("acme/widgets", "acme__widgets-7")
    assert "reference:acme__widgets/7/environment.yml@" in digest
    assert resolver.spec_digest("acme/widgets", "acme__widgets-9") == ""
    _write(files, "acme__widgets/7/environment.yml", EXPORT.replace("2.11.7", "2.12.13"))
    fresh = EnvironmentResolver(settings, tmp_path / "inferred", lambda: AVAILABLE)
    assert fresh.spec_digest("acme/widgets", "acme__widgets-7") != digest
    # a file that cannot be read: its key is made all the same, its resolution names it
    _write(files, "acme__widgets/7/environment.yml", "dependencies: [")
    broken = EnvironmentResolver(settings, tmp_path / "inferred", lambda: AVAILABLE)
    assert broken.spec_digest("acme/widgets", "acme__widgets-7") not in ("", digest)
    with pytest.raises(SpecError, match="acme__widgets/7/environment.yml: not valid YAML"):
        broken.resolve(record, git_repo.path)


def test_a_missing_directory_and_a_relative_path_in_the_config(tmp_path):
    missing = ValidationConfig(reference_environments=str(tmp_path / "nowhere"))
    with pytest.raises(SpecError, match="does not exist"):
        EnvironmentResolver(missing, tmp_path / "inferred", lambda: AVAILABLE)
    (tmp_path / "conf").mkdir()
    config = tmp_path / "conf" / "swt-builder.toml"
    config.write_text('[validation]\nreference_environments = "../swebench-og"\n')
    loaded = load_config(config).validation.reference_environments
    assert loaded == str((tmp_path / "swebench-og").resolve())


def test_image_packages_go_into_the_image_and_are_not_required_locally(tmp_path):
    spec = EnvironmentSpec(
        python=HERE, packages=("iniconfig==2.0.0",), image_packages=("swt-no-such-package",)
    )
    assert spec.key() != dataclasses.replace(spec, image_packages=()).key()
    steps = install_steps(spec, base_python="python", venv="/v", project_dir=None)
    assert steps[0].argv[:3] == ("apt-get", "install", "-y")
    assert steps[0].argv[-1] == "swt-no-such-package"
    assert "swt-no-such-package" in build_script(spec, DockerConfig(), with_ca=False)
    # the local backend installs no system package and does not ask for these: it builds
    interpreters = Interpreters([sys.executable], use_uv=False)
    python = LocalEnvironments(tmp_path / "envs", interpreters).python(spec)
    out = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('iniconfig'))"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert out.strip() == "2.0.0"


def test_a_pinned_build_tool_the_project_s_own_build_excludes_is_no_build_constraint(
    tmp_path, git_repo
):
    """The reference pins setuptools 75.1.0 (conda) and wheel 0.44.0; the project's own
    ``[build-system] requires`` asks for ``setuptools<70``: as a build constraint the pin
    would make the project's isolated build impossible, so setuptools is left out of the
    constraints (the project's build takes what it declares) and wheel stays in them."""
    base = git_repo.commit(
        {
            "pyproject.toml": '[build-system]\nrequires = ["setuptools>=60,<70", "wheel"]\n',
            "setup.py": "setup(name='widgets', version='1.0')\n",
        }
    )
    export = EXPORT.replace("  - pip:\n", "  - wheel=0.44.0=py39h06a4308_0\n  - pip:\n")
    files = tmp_path / "files"
    _write(files, "acme__widgets/7/environment.yml", export)
    settings = ValidationConfig(bundled_specs=False, reference_environments=str(files))
    resolver = EnvironmentResolver(settings, tmp_path / "inferred", lambda: AVAILABLE)
    record = candidate(instance_id="acme__widgets-7", repo="acme/widgets", base_commit=base)
    resolution = resolver.resolve(record, git_repo.path)
    spec = resolution.spec
    assert "setuptools==75.1.0" in spec.pins and "wheel==0.44.0" in spec.pins
    assert spec.free_build_tools == ("setuptools",)
    assert resolution.metadata()["free_build_tools"] == '["setuptools"]'
    steps = install_steps(spec, base_python="python", venv="/v", project_dir="/p")
    (constraints,) = [step for step in steps if step.label == "build constraints"]
    assert constraints.argv[4:] == ("pip==24.2", "wheel==0.44.0")  # setuptools left out
    # a project whose build accepts the pin keeps it a constraint, and its key as before
    later = git_repo.commit({"pyproject.toml": '[build-system]\nrequires = ["setuptools>=60"]\n'})
    accepted = resolver.resolve(record.model_copy(update={"base_commit": later}), git_repo.path)
    assert accepted.spec.free_build_tools == () and "free_build_tools" not in accepted.metadata()
    assert accepted.spec.key() != spec.key()


def test_a_reference_environment_gets_no_optional_package_its_file_lacks(tmp_path, git_repo):
    """Tests that take pytest-httpbin's fixtures get the plugin as an optional package
    elsewhere; the reference's file says what its runs had, and without the plugin those tests
    errored there (their lists leave them out), so a reference environment adds none."""
    base = git_repo.commit(
        {
            "setup.py": "setup(name='widgets', version='1.0')\n",
            "tests/test_get.py": "def test_get(httpbin):\n    assert httpbin.url\n",
        }
    )
    test_patch = git_repo.diff({"tests/test_get.py": "def test_get(httpbin):\n    pass\n"})
    files = tmp_path / "files"
    _write(files, "acme__widgets/7/environment.yml")
    settings = ValidationConfig(bundled_specs=False, reference_environments=str(files))
    resolver = EnvironmentResolver(settings, tmp_path / "inferred", lambda: AVAILABLE)
    record = candidate(
        instance_id="acme__widgets-7", repo="acme/widgets", base_commit=base, test_patch=test_patch
    )
    referenced = resolver.resolve(record, git_repo.path)
    assert referenced.spec.optional_packages == ()
    assert "pytest-httpbin" not in referenced.spec.optional  # pytest, which it lacks, stays
    assert "fixture_plugins" not in referenced.metadata()
    inferred = resolver.resolve(  # no file for it: the plugin, as an optional package
        record.model_copy(update={"instance_id": "acme__widgets-9"}), git_repo.path
    )
    assert inferred.spec.optional_packages == ("pytest-httpbin",)
    assert "fixture_plugins" in inferred.metadata()
