"""The bundled flask spec resolves for the versions it names, dated as the toolkit dates them:
before 2.1 its Werkzeug pin needs a MarkupSafe of 2022, which a 2021 date hides."""

from __future__ import annotations

import subprocess

import pytest

from builder.core.config import packaged_spec_dir
from validation.environments.environment import EnvironmentSpec, install_steps
from validation.environments.interpreters import find_uv
from validation.environments.specs import SpecLibrary


def _dating_options(argv: tuple[str, ...]) -> list[str]:
    """The date options of an install command: what makes a resolution as of its date."""
    options: list[str] = []
    for index, arg in enumerate(argv):
        if arg in ("--exclude-newer", "--exclude-newer-package"):
            options += [arg, argv[index + 1]]
    return options


@pytest.mark.slow
def test_flask_2_0_resolves_as_of_its_release(tmp_path):
    settings = SpecLibrary([packaged_spec_dir()]).specs["pallets/flask"].settings("2.0")
    spec = EnvironmentSpec(
        python=settings.python,
        packages=(*settings.packages, "flask==2.0.1"),
        exclude_newer="2021-06-01T00:00:00Z",  # flask 2.0.1's week
    )
    steps = install_steps(spec, base_python="p", venv="/e", project_dir=None, uv="uv")
    (dependencies,) = [step for step in steps if step.label == "dependencies"]
    requested = tmp_path / "requested.txt"
    requested.write_text("\n".join(spec.packages) + "\n", encoding="utf-8")
    resolved = subprocess.run(
        [find_uv(), "pip", "compile", "--quiet", "--python-version", settings.python,
         *_dating_options(dependencies.argv), str(requested)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert resolved.returncode == 0, resolved.stderr
    assert "werkzeug==2.3.7" in resolved.stdout.lower()
