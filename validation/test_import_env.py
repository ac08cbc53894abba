"""An environment with what the touched test files import, when the instance's spec asks for it."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from builder.core.records import Candidate
from validation.environments import test_imports
from validation.environments.declared import is_declared, patch_names
from validation.environments.environment import EnvironmentBuildError, EnvironmentSpec
from validation.job import note
from validation.runs.backends.base import Backend
from validation.runs.patches import PatchError

TEST_IMPORT_BUILDS = 4
"""How many environments with the test files' imports an instance may try: the installer
reports one failure at a time (a name not on the index, then one that does not build, …)."""
_PROBE_TIMEOUT_S = 120.0
"""How long the probe of the test files' imports may take (it imports parent packages)."""


class WithTestImports:
    """Adds to an environment the distributions its test files import and it lacks."""

    backend: Backend

    def _with_test_imports(
        self,
        record: Candidate,
        test_files: list[str],
        spec: EnvironmentSpec,
        environment: object,
        mirror: Path,
        probe_dir: Path,
        logs: Path,
    ) -> tuple[EnvironmentSpec, object, dict[str, str]]:
        """The spec and environment with the distributions the touched test files import and
        the environment lacks (see ``test_imports``), and what the run metadata says of them.
        An environment with them that cannot be built is tried again without those the
        installer's log blames, as long as it blames some and leaves some (each package the
        log names costs one more build: :data:`TEST_IMPORT_BUILDS` at most); failing that, the
        instance stays on the one it had."""
        log = logs / "test-imports.log"
        packages, undeclared = self._missing_test_imports(
            record, test_files, spec, environment, mirror, probe_dir, log
        )
        skipped = {"test_imports_undeclared": json.dumps(undeclared)} if undeclared else {}
        if not packages:
            return spec, environment, skipped
        attempts = [packages]  # and again without what the installer blamed
        for tried in attempts:
            derived = dataclasses.replace(spec, packages=(*spec.packages, *tried))
            try:
                built = self.backend.prepare(derived)
            except EnvironmentBuildError as error:
                note(log, f"environment with {' '.join(tried)} not built: {error}\n")
                log_path = getattr(error, "log_path", None)
                blamed = test_imports.implicated(tried, _text(log_path) if log_path else "")
                rest = [package for package in tried if package not in blamed]
                if blamed and rest and len(attempts) < TEST_IMPORT_BUILDS:
                    attempts.append(rest)
                continue
            left = [package for package in packages if package not in tried]
            metadata = {"test_requirements": json.dumps(tried), **_failed(left), **skipped}
            return derived, built, metadata
        return spec, environment, {**_failed(packages), **skipped}

    def _missing_test_imports(
        self,
        record: Candidate,
        test_files: list[str],
        spec: EnvironmentSpec,
        environment: object,
        mirror: Path,
        probe_dir: Path,
        log: Path,
    ) -> tuple[list[str], list[str]]:
        """Distributions of the modules the test files need that the environment cannot find
        (one run of its interpreter in a checkout with the test patch), the spec's own left
        out; and those of them not installed because the project never declared them."""
        log.parent.mkdir(parents=True, exist_ok=True)
        opened = self.backend.session(environment, mirror, record.base_commit, probe_dir)
        try:
            with opened as session:
                try:
                    session.apply(record.test_patch, "test patch")
                except PatchError:
                    return [], []  # the golden runs name this drop
                wanted = test_imports.wanted_modules(session.tree, test_files)
                note(log, "".join(f"wanted {m} ({where})\n" for m, where in wanted.items()))
                if not wanted:
                    return [], []
                out = "missing-modules.json"
                command = ["python", "-c", test_imports.PROBE, session.scratch_path(out), *wanted]
                session.run(command, log.with_suffix(".probe.log"), _PROBE_TIMEOUT_S)
                missing = [m for m in _json_list(session.read_scratch(out)) if m in wanted]
        finally:
            shutil.rmtree(probe_dir, ignore_errors=True)
        named = {canonicalize_name(Requirement(package).name) for package in spec.packages}
        packages = {test_imports.distribution(module) for module in missing}
        wanted_packages = sorted(
            (p for p in packages if canonicalize_name(p) not in named), key=str.lower
        )
        added = [p for p in wanted_packages if _declared(p, mirror, record)]
        undeclared = [p for p in wanted_packages if p not in added]
        note(log, f"missing: {' '.join(missing) or 'none'}; added: {' '.join(added) or 'none'}\n")
        if undeclared:
            undeclared_text = " ".join(undeclared)
            note(log, f"not declared by the project up to the base commit: {undeclared_text}\n")
        return added, undeclared


def _declared(package: str, mirror: Path, record: Candidate) -> bool:
    """Whether an import's distribution may be installed: the import table maps to it, or the
    project declared it — somewhere in its history up to the base commit or the environment
    commit, or in what the golden patches add to its requirement files (see ``declared``);
    any other name could be anybody's registration on the index."""
    mapped = {canonicalize_name(name) for name in test_imports.DISTRIBUTIONS.values()}
    name = canonicalize_name(package)
    if name in mapped or is_declared(package, mirror, record.base_commit):
        return True
    commit = record.environment_setup_commit
    if commit and is_declared(package, mirror, commit):
        return True
    return name in patch_names(record.patch) | patch_names(record.test_patch)


def _json_list(data: bytes | None) -> list[str]:
    """A JSON list of strings written by a run, or nothing when it is not one."""
    try:
        value = json.loads(data or b"[]")
    except ValueError:
        return []
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _failed(packages: Sequence[str]) -> dict[str, str]:
    return {"test_requirements_failed": json.dumps(list(packages))} if packages else {}


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
