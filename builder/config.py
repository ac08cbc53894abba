"""The one typed configuration: loaded from TOML, overridden from the CLI, saved per run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import tomllib
from pydantic import BaseModel, ConfigDict, Field, ValidationError

CONFIG_FILE = "swt-builder.toml"
SECRET_VARIABLES = ("GITHUB_TOKEN", "GITHUB_TOKENS", "HF_TOKEN")
"""Secrets come from the environment only; no config field may hold them."""


class ConfigError(ValueError):
    """The configuration file or an override is invalid; the message says where and why."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class SourceConfig(_Section):
    kind: Literal["swe-bench"] = "swe-bench"
    path: str = Field(
        default="", description="JSONL file, parquet file/dir, datasets dir, or Hub dataset name"
    )
    split: str = "test"


class ValidationConfig(_Section):
    backend: Literal["local"] = "local"
    timeout_s: float = Field(default=900.0, gt=0, description="per test run; the run is killed")
    python: str = Field(default="3.11", pattern=r"^3\.\d+$")
    packages: list[str] = Field(
        default_factory=lambda: ["pytest"], description="installed into every environment"
    )


class Config(_Section):
    name: str = Field(default="swt-dataset", pattern=r"^[\w.-]+$")
    output_dir: Path = Path("dist")
    work_dir: Path = Path(".swt-work")
    jobs: int = Field(default=0, ge=0, description="parallel tasks; 0 means one per core")
    executor: Literal["threads", "processes", "dask"] = "threads"
    executor_scheduler: str | None = None
    source: SourceConfig = Field(default_factory=SourceConfig)
    repos: dict[str, str] = Field(
        default_factory=dict, description="owner/name -> local clone/mirror path or clone URL"
    )
    validation: ValidationConfig = Field(default_factory=ValidationConfig)

    @property
    def effective_jobs(self) -> int:
        return self.jobs or os.cpu_count() or 1

    @property
    def dataset_dir(self) -> Path:
        return self.output_dir / self.name

    def resolved(self) -> dict[str, Any]:
        """The config as saved beside outputs (it holds no secrets by construction)."""
        return self.model_dump(mode="json")


def _find_default(cwd: Path) -> tuple[Path, dict[str, Any]] | None:
    own = cwd / CONFIG_FILE
    if own.is_file():
        return own, _read_toml(own)
    pyproject = cwd / "pyproject.toml"
    if pyproject.is_file():
        section = _read_toml(pyproject).get("tool", {}).get("swt-builder")
        if section is not None:
            return pyproject, section
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from error


def _parse_override(text: str) -> tuple[list[str], Any]:
    dotted, separator, raw = text.partition("=")
    if not separator or not dotted.strip():
        raise ConfigError(f"override {text!r} is not KEY=VALUE (e.g. validation.timeout_s=60)")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return dotted.strip().split("."), value


def _apply_override(data: dict[str, Any], path: list[str], value: Any) -> None:
    node = data
    for part in path[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"override {'.'.join(path)}: {part} is not a section")
    node[path[-1]] = value


def _resolve_paths(data: dict[str, Any], base: Path) -> None:
    for key in ("output_dir", "work_dir"):
        if key in data:
            data[key] = str((base / data[key]).resolve())
    source = data.get("source", {})
    if source.get("path") and (base / source["path"]).exists():
        source["path"] = str((base / source["path"]).resolve())
    for repo, location in data.get("repos", {}).items():
        if "://" not in location and not location.startswith("git@"):
            data["repos"][repo] = str((base / location).resolve())


def load_config(
    path: Path | None = None, overrides: list[str] = (), cwd: Path | None = None
) -> Config:
    """Load ``path`` (or ./swt-builder.toml, or [tool.swt-builder]) and apply KEY=VALUE overrides.

    Relative paths in the file are relative to the file; in overrides, to ``cwd``.
    """
    cwd = Path(cwd or Path.cwd())
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist")
        data = _read_toml(path)
        if path.name == "pyproject.toml":
            data = data.get("tool", {}).get("swt-builder", {})
        base = path.parent
    else:
        found = _find_default(cwd)
        data, base = ({}, cwd) if found is None else (found[1], found[0].parent)
    _resolve_paths(data, base)
    override_data: dict[str, Any] = {}
    for text in overrides:
        _apply_override(override_data, *_parse_override(text))
    _resolve_paths(override_data, cwd)
    _merge(data, override_data)
    try:
        config = Config.model_validate(data)
    except ValidationError as error:
        raise ConfigError(f"invalid configuration ({path or 'defaults'}):\n{error}") from error
    return config.model_copy(
        update={
            "output_dir": (base / config.output_dir).resolve(),
            "work_dir": (base / config.work_dir).resolve(),
        }
    )


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> None:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
