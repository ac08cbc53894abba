"""What validation reads from a test file's source for `compare`: the modules it imports only
when installed (a try/except ImportError or importorskip at module level) and its last test."""

from __future__ import annotations

import json

from validation.test_file_facts import last_test, optional_imports, recorded

ASTROID_NUMPY = """
import unittest

try:
    import numpy  # pylint: disable=unused-import

    HAS_NUMPY = True
except ImportError:
    HAS_NUMPY = False

try:
    from unittest import mock
except ImportError:
    import mock

from astroid import builder

np = __import__("pytest").importorskip("scipy.sparse")


@unittest.skipUnless(HAS_NUMPY, "This test requires the numpy library.")
class NumpyBrainCoreUmathTest(unittest.TestCase):
    def test_numpy_core_umath_constants(self):
        import pytest

        pytest.importorskip("not_module_level")
"""


def test_a_module_level_guarded_import_is_an_optional_module() -> None:
    # numpy (try/except ImportError), scipy (importorskip); unittest is the standard library
    # (and a fallback in the handler is no guarded import),
    # and the one imported inside a test is no module-level guard
    assert optional_imports(ASTROID_NUMPY) == ["numpy", "scipy"]
    assert optional_imports("import numpy\n") == []
    assert optional_imports("def broken(:\n") == []


def test_a_module_level_find_spec_is_an_optional_module() -> None:
    # astroid's tests/brain/test_qt.py: its skip mark reads whether PyQt6 can be found
    qt = (
        "from importlib.util import find_spec\nimport importlib\nimport pytest\n\n"
        'HAS_PYQT6 = find_spec("PyQt6")\n'
        'HAS_ATTRS = importlib.util.find_spec("attrs.converters") is not None\n\n\n'
        '@pytest.mark.skipif(HAS_PYQT6 is None, reason="needs PyQt6")\n'
        "class TestBrainQt:\n"
        '    def test_x(self):\n        assert find_spec("inside_a_test")\n\n\n'
        'def setup_module(mod):\n    find_spec("not_a_guard_in_setup")\n'
    )
    assert optional_imports(qt) == ["PyQt6", "attrs"]
    assert optional_imports('import importlib.util\nimportlib.util.find_spec("json")\n') == []


def test_an_importorskip_in_setup_module_guards_the_whole_module() -> None:
    # pytest's own testing/test_nose.py: every test skipped when nose is not installed
    nose = (
        "import pytest\n\n\ndef setup_module(mod):\n"
        '    mod.nose = pytest.importorskip("nose")\n\n\n'
        "def test_nose_setup():\n    pass\n\n\n"
        'def helper():\n    pytest.importorskip("not_module_wide")\n'
    )
    assert optional_imports(nose) == ["nose"]
    unittest_style = 'import pytest\ndef setUpModule():\n    pytest.importorskip("yaml")\n'
    assert optional_imports(unittest_style) == ["yaml"]


def test_the_last_test_is_the_last_module_level_test_function_by_line() -> None:
    source = "def test_b():\n    pass\n\ndef helper():\n    pass\n\ndef test_a():\n    pass\n"
    assert last_test(source) == "test_a"
    assert last_test("def helper():\n    pass\n") is None


def test_recorded_names_only_files_with_facts_and_last_tests_for_sympy_only() -> None:
    files = {"a.py": ASTROID_NUMPY, "b.py": "def test_x():\n    pass\n"}
    metadata = recorded(files.get, [*files, "gone.py"], "sympy")
    assert json.loads(metadata["optional_imports"]) == {"a.py": ["numpy", "scipy"]}
    assert json.loads(metadata["last_tests"]) == {"b.py": "test_x"}
    assert "last_tests" not in recorded(files.get, files, "pytest")
