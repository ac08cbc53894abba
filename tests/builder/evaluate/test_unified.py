"""New file texts become a diff that git applies to the original checkout."""

import subprocess

from builder.evaluate.strict.function_diff import apply, parse
from builder.evaluate.unified import unified_diff
from tests.support.git import GitRepo


def test_the_diff_applies_with_git_and_gives_the_new_texts(tmp_path):
    repo = GitRepo(tmp_path / "repo")
    files = {"m.py": "def f():\n    return 1\n", "tail.py": "x = 1"}  # tail.py: no final newline
    repo.commit(files)
    prediction = (
        "diff\nm.py\nrewrite\n1\ndef f():\n    return 2\nend diff\n"
        "diff\ntail.py\ninsert\nEOF\ny = 2\nend diff\n"
        "diff\ntests/test_m.py\ninsert\nBOF\n"
        "from m import f\n\ndef test_f():\n    assert f() == 2\nend diff\n"
    )
    new = apply(parse(prediction), files.get)
    patch = unified_diff(new, files.get)
    subprocess.run(
        ["git", "apply", "--check", "-"], input=patch, text=True, cwd=repo.path, check=True
    )
    subprocess.run(["git", "apply", "-"], input=patch, text=True, cwd=repo.path, check=True)
    for path, text in new.items():
        assert (repo.path / path).read_text() == text
    assert (repo.path / "tail.py").read_text() == "x = 1\n\ny = 2\n"


def test_unchanged_files_are_left_out_and_the_order_is_fixed():
    files = {"b.py": "b\n", "a.py": "a\n"}
    patch = unified_diff({"b.py": "b\n", "a.py": "A\n", "c.py": "c\n"}, files.get)
    assert "b.py" not in patch
    assert patch.index("a/a.py") < patch.index("b/c.py")
    assert "new file mode 100644\n--- /dev/null\n+++ b/c.py\n" in patch
