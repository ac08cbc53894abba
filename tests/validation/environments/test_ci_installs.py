"""Install commands read from a project's CI files, and inference taking them."""

from builder.core.config import ValidationConfig
from tests.support.records import candidate
from validation.environments.ci_installs import CiInstalls, ci_installs, install_arguments, url_name
from validation.environments.inference import infer_spec
from validation.environments.resolution import EnvironmentResolver
from validation.stage import index_stand_ins

SETUP_PY = 'from setuptools import setup\nsetup(name="m", extras_require={"gui": ["tk-extra"]})\n'

WORKFLOW = """\
on: [push]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: pip install flake8-bugbear
      - run: flake8
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python-version: ["3.8", "3.9"]
        deps: [minimal, full]
        include:
          - scipy: "scipy==1.5.4"
    steps:
      - uses: actions/setup-python@v4
        with:
          python-version: ${{ matrix.python-version }}
      - name: Install numpy
        run: python -m pip install numpy
      - name: Optional
        if: matrix.deps == 'full'
        run: |
          python -m pip install --upgrade \\
            pillow ${{ matrix.scipy }} && pip install -e .[gui]
      - name: Never in this matrix
        if: matrix.deps == 'nightly'
        run: pip install never-installed
      - run: pip install $EXTRA ${{ secrets.TOKEN }} -r ci/requirements.txt
      - run: pip install pytest-azurepipelines pytest_github_actions_annotate-failures
      - run: pytest
"""


RELEASE = """\
jobs:
  publish:
    steps:
      - run: pip install release-helper ${{ github.repository_owner == 'a' && 'b' || 'c' }}
"""


def test_a_workflow_step_that_installs_numpy_reaches_the_inferred_spec(git_repo):
    commit = git_repo.commit(
        {
            "setup.py": SETUP_PY,
            ".github/workflows/tests.yml": WORKFLOW,
            "ci/requirements.txt": "pytest-timeout\n",
            ".github/workflows/release.yml": RELEASE,
        }
    )
    spec = infer_spec("acme/m", git_repo.path, commit)
    packages = [*spec.defaults.packages, *spec.defaults.optional_packages]
    # another workflow with no job that runs the tests is not read
    assert "release-helper" not in packages and "github.repository-owner" not in packages
    # the extra is the project's own declaration: required; what only the steps install is
    # optional, with its bounds (installed when it can be, never failing the environment)
    assert "tk-extra" in spec.defaults.packages
    only_steps = ["numpy", "pillow", "scipy==1.5.4", "pytest-timeout"]
    assert spec.defaults.optional_packages == only_steps
    assert "optional, only CI steps install them: numpy, pillow, scipy, pytest-timeout" in (
        spec.note
    )
    # the lint job runs no tests; a step for a matrix value nobody has never runs
    assert "flake8-bugbear" not in packages and "never-installed" not in packages
    # plugins that report to the CI service test nothing, and rename what a run reports
    assert not [p for p in packages if "azurepipelines" in p or "annotate" in p]
    assert "install steps of .github/workflows/tests.yml" in spec.note


def test_what_a_test_declaration_names_stays_required_beside_the_steps(git_repo):
    """A package both a test requirement file and a CI step install is required (with the
    file's bounds); the runner named only by a step is required with the step's bound; a
    step's requirement with a marker (no word for the optional step) stays required."""
    workflow = (
        "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: pip install numpy 'pytest<8' \"gmpy2; python_version<'3.12'\" mpmath\n"
        "      - run: pytest\n"
    )
    commit = git_repo.commit(
        {
            "setup.py": "from setuptools import setup\nsetup(name='m')\n",
            "requirements-test.txt": "mpmath>=1.1\n",
            ".github/workflows/ci.yml": workflow,
        }
    )
    spec = infer_spec("acme/m", git_repo.path, commit)
    required = set(spec.defaults.packages)
    assert {"mpmath>=1.1", "pytest<8"} <= required
    assert any(p.startswith("gmpy2;") for p in required)
    assert spec.defaults.optional_packages == ["numpy"]


def test_tox_nox_and_other_ci_files(git_repo):
    noxfile = (
        "import nox\n\n@nox.session\ndef tests(session):\n"
        "    session.install('hypothesis', '-r', 'requirements-test.txt')\n"
        "    session.run('pytest')\n\n"
        "@nox.session\ndef docs(session):\n    session.install('sphinx-gallery')\n"
    )
    commit = git_repo.commit(
        {
            "tox.ini": "[testenv]\ncommands_pre = pip install pyarrow\ncommands = pytest\n",
            "noxfile.py": noxfile,
            "requirements-test.txt": "freezegun\n",
            ".travis.yml": "install:\n  - pip3 install --user matplotlib\n",
            "appveyor.yml": "install:\n  - cmd: C:\\\\Python38\\\\python -m pip install pywin32\n",
            "azure-pipelines.yml": "steps:\n- script: uv pip install xarray\n",
        }
    )
    found = ci_installs(git_repo.path, commit)
    assert sorted(found.lines) == sorted(
        ["pyarrow", "hypothesis", "-r requirements-test.txt", "matplotlib", "pywin32", "xarray"]
    )
    assert "sphinx-gallery" not in found.lines  # the docs session runs no tests
    assert set(found.sources) == {
        "tox.ini", "noxfile.py", ".travis.yml", "appveyor.yml", "azure-pipelines.yml"
    }  # fmt: skip
    spec = infer_spec("acme/m", git_repo.path, commit)
    inferred = {*spec.defaults.packages, *spec.defaults.optional_packages}
    assert {"freezegun", "hypothesis", "pyarrow", "matplotlib"} <= inferred


def test_what_counts_as_an_install_command():
    commands = [
        "pip --quiet install -U six 'attrs>=19'; pip list | grep six",
        "python3 -m pip install -i https://example.org/simple -c constraints.txt .",
        "pip download wheel-only",
        "echo pip install not-a-command # pip install commented",
        # a separator inside quotes is the word's (an environment marker), not a new command
        "pip install \"numpy<2; python_version<'3.9'\" pytest||echo failed|pip install tee",
        "pip install 'open-quote",
        # a `#` inside quotes is the word's; one that starts a word outside them is a comment
        'pip install "pkg @ https://example.org/p.zip #frag" extra # it\'s a comment',
    ]
    assert list(install_arguments(commands)) == [
        ["-U", "six", "attrs>=19"],
        ["-i", "https://example.org/simple", "-c", "constraints.txt", "."],
        ["numpy<2; python_version<'3.9'", "pytest"],
        ["tee"],
        ["pkg @ https://example.org/p.zip #frag", "extra"],
    ]


PIXELS = """\
jobs:
  core:
    steps:
      - run: python -m pip install -U numpy && pytest
      - run: |
          python -m pip install -U pillow charset-normalizer
          pytest tests/test_pillow.py
          python -m pip uninstall -y pillow
  pypy:
    steps:
      - run: python -m pip install pillow && pytest
"""


def test_an_uninstall_takes_back_what_its_own_job_installed(git_repo):
    commit = git_repo.commit({".github/workflows/pr-pytest.yml": PIXELS})
    found = ci_installs(git_repo.path, commit)
    assert found.lines == ["numpy", "charset-normalizer", "pillow"]  # pillow by the other job
    assert found.sources == [".github/workflows/pr-pytest.yml"]


def test_vcs_and_direct_url_requirements_are_named_by_their_distribution():
    assert url_name("git+https://github.com/pydicom/pydicom-data") == "pydicom-data"
    assert url_name("git+https://github.com/acme/Some_Data.git@v1.0") == "some-data"  # ref
    assert url_name("git+ssh://git@github.com/acme/thing.git") == "thing"  # user in netloc
    assert url_name("git+https://github.com/o/r.git@main#egg=CharPyLS") == "charpyls"
    assert url_name("hg+https://hg.example.org/x/repo#egg=Real.Name") == "real-name"
    assert url_name("svn+svn://svn.example.org/proj/trunk") == "trunk"
    assert url_name("bzr+https://bzr.example.org/proj/") == "proj"
    assert url_name("git+https://github.com/o/mono#subdirectory=libs/inner") == "inner"
    assert url_name("Named_Pkg[extra] @ git+https://github.com/o/other") == "named-pkg"
    assert url_name("thing @ https://example.org/thing-1.0.tar.gz") == "thing"
    # a URL that names no distribution, a path, a wheel file, a plain name: none of these
    for word in ("https://example.org/a.zip", "./local", "dist/x-1.0-py3-none-any.whl",
                 "numpy", "git+https://github.com/o/r#egg=not a name"):  # fmt: skip
        assert url_name(word) is None, word


def test_what_ci_installs_from_a_url_is_named_apart_with_the_url_as_evidence():
    found = CiInstalls()
    found.add(
        "ci.yml",
        [
            "pip install -U numpy git+https://github.com/pydicom/pydicom-data  # data",
            'pip install "pkg @ git+https://example.org/pkg" other @ git+https://e.org/o/x',
            "pip install -e git+https://github.com/o/r#egg=gone && pip uninstall -y gone",
            "pip install git+https://github.com/$OWNER/unknown",  # a variable: unknown
        ],
    )
    assert found.lines == ["numpy"]  # none of them is a requirement by name
    assert found.from_urls == {
        "pydicom-data": "git+https://github.com/pydicom/pydicom-data",
        "pkg": "pkg @ git+https://example.org/pkg",
        "other": "other @ git+https://e.org/o/x",
    }


DATA_WORKFLOW = """\
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: pip install pytest git+https://github.com/acme/some-data
      - run: pip install git+https://github.com/acme/CharPyLS git+https://github.com/acme/m.git
      - run: pip install git+https://github.com/acme/numpy@main
      - run: pytest
"""


def test_an_inferred_spec_takes_what_ci_installs_from_urls_as_optional_packages(git_repo):
    """pydicom's CI installs its test data from GitHub; the index has it under that name, and
    without it the tests download it at run time (no network in runs)."""
    setup = 'from setuptools import setup\nsetup(name="m", extras_require={"test": ["numpy"]})\n'
    commit = git_repo.commit({"setup.py": setup, ".github/workflows/ci.yml": DATA_WORKFLOW})
    spec = infer_spec("acme/m", git_repo.path, commit)
    # numpy is required by name already; m is the project itself
    assert spec.defaults.optional_packages == ["some-data", "charpyls"]
    assert not {"some-data", "charpyls"} & set(spec.defaults.packages)
    assert "numpy" in spec.defaults.packages
    assert "optional, by name from the index: some-data, charpyls" in spec.note
    # the spec file a maintainer reviews says so, and loads back
    assert 'optional_packages = [\n    "some-data",' in spec.to_toml()
    plain = infer_spec("acme/m", git_repo.path, git_repo.commit({".github/workflows/ci.yml": None}))
    assert "optional_packages" not in plain.to_toml()


def test_the_resolver_carries_them_into_the_environment_and_its_record(tmp_path, git_repo):
    setup = "from setuptools import setup\nsetup(name='m', install_requires=[])\n"
    commit = git_repo.commit({"setup.py": setup, ".github/workflows/ci.yml": DATA_WORKFLOW})
    settings = ValidationConfig(bundled_specs=False, packages=["pytest"])
    resolver = EnvironmentResolver(settings, tmp_path / "inferred", lambda: ["3.9"])
    resolution = resolver.resolve(candidate(repo="acme/m", base_commit=commit), git_repo.path)
    # numpy (from a URL too) is no requirement of this project: optional as well
    names = ("some-data", "charpyls", "numpy")
    assert resolution.spec.optional_packages == names
    assert resolution.spec.optional == names
    assert resolution.spec.describe()["optional_packages"] == names  # the environment's record
    written = (tmp_path / "inferred" / "acme__m.toml").read_text()
    assert 'optional_packages = [\n    "some-data",\n    "charpyls",\n    "numpy",\n]' in written
    # what each stands in for, as the record's run_metadata.index_stand_ins will name it
    assert resolution.url_packages == (
        ("charpyls", "git+https://github.com/acme/CharPyLS"),
        ("numpy", "git+https://github.com/acme/numpy@main"),
        ("some-data", "git+https://github.com/acme/some-data"),
    )
    assert 'url_packages]\nsome-data = "git+https://github.com/acme/some-data"' in written
    again = EnvironmentResolver(settings, tmp_path / "inferred", lambda: ["3.9"])  # loads back
    reread = again.resolve(candidate(repo="acme/m", base_commit=commit), git_repo.path)
    assert reread.url_packages == resolution.url_packages
    installed = index_stand_ins(resolution, resolution.spec, left_out=("numpy>=1",))
    assert installed == {  # the build left numpy out: no release of it stood in
        "charpyls": "git+https://github.com/acme/CharPyLS",
        "some-data": "git+https://github.com/acme/some-data",
    }


def test_a_requirement_file_s_url_lines_are_optional_packages_too(git_repo):
    """A test requirements file may install from a URL as a CI step does (``-e git+…#egg=``,
    a bare VCS URL, ``NAME @ URL``): each becomes an optional package by name; a constraint
    file's URL lines and a local path name nothing."""
    requirements = (
        "pytest\n"
        "-e git+https://github.com/acme/fixtures.git@v1#egg=acme-fixtures\n"
        "git+https://github.com/acme/sample-data\n"
        "plotter @ https://example.org/plotter-1.0.tar.gz\n"
        "-c constraints.txt\n"
        "./local/folder\n"
    )
    commit = git_repo.commit(
        {
            "setup.py": "from setuptools import setup\nsetup(name='m')\n",
            "requirements-test.txt": requirements,
            "constraints.txt": "git+https://github.com/acme/constrained\n",
        }
    )
    spec = infer_spec("acme/m", git_repo.path, commit)
    assert spec.defaults.optional_packages == ["acme-fixtures", "sample-data", "plotter"]
    assert "pytest" in spec.defaults.packages
    assert not any("/" in package for package in spec.defaults.packages)
    assert "requirement file installs them from a URL" in spec.note
