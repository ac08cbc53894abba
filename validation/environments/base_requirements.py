"""The base commit's own install requirements, which the environment commit's may lack.

An environment is built once per repo@version, at the environment commit. An instance's base
commit may declare requirements the environment commit no longer (or not yet) has: pytest's
base commits of 5.4 import ``more_itertools`` and ``importlib_metadata``, which its 6.0
environment commit dropped, so every run crashed on import. The requirements of the base
commit that neither the environment commit's project nor the spec names are added to that
instance's environment: the spec plus them, one resolution like the rest (its own
environment, shared by every instance that needs the same, the shared one never changed).
"""

from __future__ import annotations

from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from validation.environments.environment import EnvironmentSpec
from validation.environments.inference import install_requirements
from validation.environments.versioning import package_name

VERSION = 1
"""In the validation fingerprint: bump when what is added changes (results are recomputed)."""


def unmet(spec: EnvironmentSpec, mirror: Path, base_commit: str) -> tuple[str, ...]:
    """The base commit's install requirements (markers taken for the spec's Python on Linux,
    extras and markers dropped) that the environment commit's project and the spec do not
    name; none when the environment does not install the project from its own commit."""
    if spec.project is None or spec.install != "project" or spec.install_command:
        return ()
    if base_commit == spec.project_commit:
        return ()
    named = _names(install_requirements(mirror, spec.project_commit), spec.python)
    named |= {_name(package) for package in spec.packages}
    own = canonicalize_name(package_name(mirror, base_commit) or "")
    wanted: dict[str, str] = {}
    for text in install_requirements(mirror, base_commit):
        requirement = _applicable(text, spec.python)
        if requirement is None:
            continue
        name = canonicalize_name(requirement.name)
        if name not in named and name != own:
            wanted.setdefault(name, f"{requirement.name}{requirement.specifier}")
    return tuple(wanted[name] for name in sorted(wanted))


def _applicable(text: str, python: str) -> Requirement | None:
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return None
    if requirement.url:
        return None
    marker = requirement.marker
    if marker is not None:
        environment = {**default_environment(), "python_version": python,
                       "python_full_version": f"{python}.0", "sys_platform": "linux",
                       "platform_system": "Linux", "os_name": "posix", "extra": ""}  # fmt: skip
        if not marker.evaluate(environment):
            return None
    return requirement


def _names(requirements: list[str], python: str) -> set[str]:
    return {
        canonicalize_name(requirement.name)
        for requirement in (_applicable(text, python) for text in requirements)
        if requirement is not None
    }


def _name(package: str) -> str:
    try:
        return canonicalize_name(Requirement(package).name)
    except InvalidRequirement:
        return package
