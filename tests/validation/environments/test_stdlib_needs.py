"""The standard-library modules a golden test patch starts to import, and the Pythons that
have them."""

from validation.environments.stdlib_needs import able, has_modules, needed_modules

PATCH = """\
diff --git a/tests/test_cfg.py b/tests/test_cfg.py
--- a/tests/test_cfg.py
+++ b/tests/test_cfg.py
@@ -1,2 +1,5 @@
 import os
+import tomllib
+from zoneinfo import ZoneInfo
+import json
+    import graphlib
"""


def test_only_module_level_lines_the_patch_adds_and_only_modules_of_the_data():
    # os was there before, json is in every Python 3, an indented import is no module import
    assert needed_modules(PATCH) == ["tomllib", "zoneinfo"]
    assert needed_modules("") == []


def test_a_python_has_a_module_from_its_addition_up_to_its_removal():
    assert has_modules("3.11", ["tomllib", "zoneinfo"])
    assert not has_modules("3.10", ["tomllib"])
    assert has_modules("3.11", ["distutils"]) and not has_modules("3.12", ["distutils"])
    assert has_modules("3.6", [])


def test_the_pythons_that_have_them_or_all_when_none_does():
    assert able(["3.9", "3.10", "3.11", "3.12"], ["tomllib"]) == ["3.11", "3.12"]
    assert able(["3.8", "3.9"], ["tomllib"]) == ["3.8", "3.9"]  # the runs will show it
