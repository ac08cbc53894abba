"""What the touched test files import, read statically from a real checkout."""

import os
import subprocess
import sys

from tests.support.git import GitRepo
from validation.environments.test_imports import (
    PROBE,
    distribution,
    implicated,
    wanted_modules,
)

HELPERS = """
import importlib
import pytest

def _importorskip(modname, minversion=None):
    try:
        importlib.import_module(modname)
        has = True
    except ImportError:
        has = False
    return has, pytest.mark.skipif(not has, reason=modname)

has_dask, requires_dask = _importorskip("dask")
has_scipy, requires_scipy = _importorskip("scipy")
requires_zarr = _importorskip("zarr")[1]
"""

TEST = """
import os
import json as j
from collections import OrderedDict
import numpy as np
import pandas.testing
from dateutil import parser
from py._path import local
from . import helper_module
from pkg.tests import requires_dask, has_scipy
import pkg
import conftest_helper

try:
    import cftime
except ImportError:
    cftime = None

yaml = pytest.importorskip("yaml")


def test_x():
    import matplotlib
    pytest.importorskip("bottleneck.nanops")
"""


def _checkout(tmp_path):
    repo = GitRepo(tmp_path / "r")
    repo.commit(
        {
            "pkg/__init__.py": "",
            "pkg/tests/__init__.py": HELPERS,
            "pkg/tests/test_x.py": TEST,
            "pkg/tests/helper_module.py": "",
            "tests/conftest_helper.py": "",
        }
    )
    return repo.path


def test_module_level_imports_importorskip_and_the_projects_markers(tmp_path):
    tree = _checkout(tmp_path)
    wanted = wanted_modules(tree, ["pkg/tests/test_x.py"])
    assert wanted == {
        "bottleneck.nanops": "pkg/tests/test_x.py:24",
        "dask": "pkg/tests/test_x.py:10 (requires_dask)",
        "dateutil": "pkg/tests/test_x.py:7",
        "numpy": "pkg/tests/test_x.py:5",
        "pandas.testing": "pkg/tests/test_x.py:6",
        "py._path": "pkg/tests/test_x.py:8",
        "scipy": "pkg/tests/test_x.py:10 (has_scipy)",
        "yaml": "pkg/tests/test_x.py:19",
    }
    # left out: the standard library, relative and local imports, a bare-named helper of the
    # checkout, an import in try (the file treats it as optional), one inside a function and
    # a marker the file does not import (zarr)


CONFTEST = """
import platform
import pytest

try:
    import tables
    has_tables = True
except ImportError:
    has_tables = False

requires_tables = pytest.mark.skipif(not has_tables, reason='requires tables')

try:
    from siphon.ncss import NCSS
    has_siphon = True
except (ImportError, OSError):
    has_siphon = False

requires_siphon = pytest.mark.skipif("not has_siphon")


def has_numba():
    try:
        import numba
    except ImportError:
        return False
    else:
        return True


requires_numba = pytest.mark.skipif(not has_numba(), reason="requires numba")
skip_windows = pytest.mark.skipif(platform.system() == "Windows", reason="windows")
requires_fast = pytest.mark.skipif(not is_fast, reason="a flag no import sets")

try:
    import pandas
    pandas_ok = pandas.__version__ > "1"
except ImportError:
    pandas_ok = False

requires_new_pandas = pytest.mark.skipif(not pandas_ok, reason="set from a version")
"""


def test_skip_marks_on_a_flag_set_by_trying_an_import_in_a_conftest_beside_the_tests(tmp_path):
    """pvlib's idiom: ``conftest.py`` sets ``has_tables`` by trying the import and makes
    ``requires_tables`` a skipif on it; the tests import it by the bare name ``conftest``."""
    repo = GitRepo(tmp_path / "r")
    test = (
        "from conftest import requires_tables, requires_numba, skip_windows, requires_fast\n"
        "from .conftest import requires_siphon, requires_new_pandas\n"
    )
    repo.commit(
        {
            "pvlib/__init__.py": "",
            "pvlib/tests/conftest.py": CONFTEST,
            "pvlib/tests/test_a.py": test,
        }
    )
    assert wanted_modules(repo.path, ["pvlib/tests/test_a.py"]) == {
        "numba": "pvlib/tests/test_a.py:1 (requires_numba)",
        "siphon.ncss": "pvlib/tests/test_a.py:2 (requires_siphon)",
        "tables": "pvlib/tests/test_a.py:1 (requires_tables)",
    }
    # skip_windows and requires_fast read no flag of an import; pandas_ok is not set True


FLAGGED = """
import pytest

try:
    import numpy as np
    HAVE_NP = True
except ImportError:
    HAVE_NP = False

try:
    import PIL
    HAVE_PIL = True
except ImportError:
    HAVE_PIL = False

try:
    import gdcm
    HAVE_GDCM = True
except ImportError:
    HAVE_GDCM = False

try:
    import jpeg_ls
except ImportError:
    jpeg_ls = None


@pytest.mark.skipif(not HAVE_NP, reason="Numpy is not available")
class TestNumpy:
    def test_a(self):
        pass


def test_b():
    if not HAVE_GDCM:  # a branch, not a skip mark: the file runs without it
        return


try:
    import yaml
    HAVE_YAML = True
except ImportError:
    HAVE_YAML = False

try:
    import tables
    HAVE_TABLES = True
except ImportError:
    HAVE_TABLES = False

requires_yaml = pytest.mark.skipif(not HAVE_YAML, reason="yaml")
requires_tables = pytest.mark.skipif(not HAVE_TABLES, reason="defined, applied nowhere here")


@requires_yaml
def test_c():
    pass


pytestmark = [pytest.mark.skipif("not HAVE_PIL")]
"""


def test_skip_marks_of_the_test_file_on_a_flag_it_sets_by_trying_an_import(tmp_path):
    """pydicom's idiom: the test file itself sets ``HAVE_NP`` by trying the import and skips
    its classes with ``skipif(not HAVE_NP)``; like an ``importorskip``, the module is wanted.
    A flag only branched on, an import tried without a flag and a mark only defined (as a
    ``conftest.py`` defines them for other files) are not."""
    repo = GitRepo(tmp_path / "r")
    repo.commit({"pydicom/__init__.py": "", "pydicom/tests/test_np.py": FLAGGED})
    assert wanted_modules(repo.path, ["pydicom/tests/test_np.py"]) == {
        "PIL": "pydicom/tests/test_np.py:60",  # the mark in pytestmark
        "numpy": "pydicom/tests/test_np.py:28",  # the class's decorator
        "pytest": "pydicom/tests/test_np.py:2",
        "yaml": "pydicom/tests/test_np.py:55",  # a name bound to the mark, as a decorator
    }


DERIVED = """
import pytest

try:
    import numpy
except ImportError:
    numpy = None

try:
    import gdcm as g
except ImportError:
    g = None

try:
    import jpeg_ls
except ImportError:
    jpeg_ls = False  # not None: a fallback, no flag

have_numpy = numpy is not None
have_both = numpy is not None and g is not None  # two flags: not one module's


class TestReader:
    @pytest.mark.skipif(not have_numpy, reason="Numpy not installed")
    def test_pixels(self):
        pass

    @pytest.mark.skipif(g is None, reason="gdcm")
    def test_gdcm(self):
        pass

    @pytest.mark.skipif(not jpeg_ls, reason="jpeg_ls")
    def test_jpeg_ls(self):
        pass
"""


def test_a_flag_derived_from_the_name_a_tried_import_binds(tmp_path):
    """pydicom's other idiom: the handler binds the imported name to None, and a flag is a test
    of that name (``have_numpy = numpy is not None``)."""
    repo = GitRepo(tmp_path / "r")
    repo.commit({"pydicom/__init__.py": "", "pydicom/tests/test_reader.py": DERIVED})
    assert wanted_modules(repo.path, ["pydicom/tests/test_reader.py"]) == {
        "gdcm": "pydicom/tests/test_reader.py:28",
        "numpy": "pydicom/tests/test_reader.py:24",
        "pytest": "pydicom/tests/test_reader.py:2",
    }


def test_a_missing_syntax_broken_or_linked_file_wants_nothing(tmp_path):
    repo = GitRepo(tmp_path / "r")
    deep = "import numpy\nx = " + "not " * 100_000 + "y\n"  # past the parser's stack
    repo.commit(
        {
            "tests/test_bad.py": "import numpy\ndef (:\n",
            "tests/test_deep.py": deep,
            "x.py": "import numpy\n",
        }
    )
    os.symlink(repo.path / "x.py", repo.path / "tests" / "test_link.py")
    files = ["tests/test_bad.py", "tests/test_deep.py", "tests/test_link.py", "tests/test_gone.py"]
    assert wanted_modules(repo.path, files) == {}


def test_a_marker_module_outside_the_checkout_is_not_read(tmp_path):
    outside = tmp_path / "outside"
    (outside / "evil").mkdir(parents=True)
    (outside / "evil" / "__init__.py").write_text(HELPERS)
    repo = GitRepo(tmp_path / "r")
    repo.commit({"tests/test_y.py": "from evil import requires_dask\n"})
    os.symlink(outside / "evil", repo.path / "evil")
    assert wanted_modules(repo.path, ["tests/test_y.py"]) == {"evil": "tests/test_y.py:1"}


def test_distribution_names():
    assert distribution("yaml") == "PyYAML"
    assert distribution("dateutil.parser") == "python-dateutil"
    assert distribution("dask.array") == "dask"
    assert distribution("py._path") == "py"


def test_the_probe_names_what_the_interpreter_cannot_find(tmp_path):
    out = tmp_path / "missing.json"
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "__init__.py").write_text("raise RuntimeError('boom')\n")
    modules = ["json", "swt_no_such_module", "json.no_such_part", "broken.x", "email.mime"]
    subprocess.run([sys.executable, "-c", PROBE, str(out), *modules], cwd=tmp_path, check=True)
    # a parent that fails with anything but ImportError counts as found: it is there
    assert out.read_text() == '["swt_no_such_module", "json.no_such_part"]'


def test_what_a_failed_build_blames():
    resolution = (
        "  × No solution found when resolving dependencies:\n"
        "  ╰─▶ Because cdms2 was not found in the package registry and you require cdms2, we\n"
        "      can conclude that your requirements are unsatisfiable.\n"
    )
    assert implicated(["cdms2", "numbagg", "scitools-iris"], resolution) == ["cdms2"]
    build = (
        "  × Failed to build `Scitools_Iris==3.0.1`\n  ├─▶ The build backend returned an error\n"
    )
    assert implicated(["cdms2", "scitools-iris"], build) == ["scitools-iris"]
    assert implicated(["numbagg"], "error: something else entirely\n") == []
    transitive = (  # uv 0.13's report of a dependency that fails to build
        "error: Failed to build `cartopy==0.21.1`\n"
        "  cause: The build backend returned an error\n"
        "hint: `cartopy` (v0.21.1) was included because `scitools-iris` (v3.4.1) depends on "
        "`cartopy>=0.21`\n"
    )
    assert implicated(["numbagg", "scitools-iris"], transitive) == ["scitools-iris"]
    deeper = (
        "hint: `c` (v1.0) was included because `a` (v2.0) depends on `b` (v1.0) "
        "which depends on `c`\n"
    )
    assert implicated(["a", "b"], deeper) == ["a"]
