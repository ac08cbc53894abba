"""The one typed configuration: loaded from TOML, overridden from the CLI, saved per run."""

from __future__ import annotations

import copy
import datetime as dt
import importlib.util
import os
from pathlib import Path
from typing import Any, Literal

import tomllib
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from builder.core.config_errors import error_lines
from builder.core.errors import SwtError
from builder.core.patterns import PatternError, linear

CONFIG_FILE = "swt-builder.toml"
SECRET_VARIABLES = ("GITHUB_TOKEN", "GITHUB_TOKENS", "HF_TOKEN")
"""Secrets come from the environment only; no config field may hold them."""
_SPEC_PACKAGE = "recipes"
"""The package whose ``environments/`` data directory holds the bundled environment specs."""


class ConfigError(SwtError, ValueError):
    """The configuration file or an override is invalid; the message says where and why."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class SourceConfig(_Section):
    kind: Literal["swe-bench", "github", "task-repo"] = Field(
        default="swe-bench",
        description="swe-bench: SWE-bench-format records; github: collect by recipes; "
        "task-repo: a SWE-bench task repo (sweb.yaml, tasks/<id>/)",
    )
    path: str = Field(
        default="",
        description="JSONL file, parquet file/dir, datasets dir, or Hub dataset name; a task "
        "repo's directory (task-repo)",
    )
    split: str = Field(
        default="test",
        description="the split to read from a datasets dir or Hub dataset; the tasks of a task "
        "repo whose task.yaml names this split",
    )
    # kind = "github" (tokens come from GITHUB_TOKENS / GITHUB_TOKEN only, never from here)
    recipes: list[str] = Field(default_factory=list, description="recipe TOML files (github)")
    base_url: str = Field(
        default="https://api.github.com", description="GitHub API URL (Enterprise: …/api/v3)"
    )
    state_dir: str = Field(default="", description="incremental listing state; '' = work_dir")
    max_wait_s: float = Field(default=900.0, gt=0, description="longest rate-limit wait")


class LimitsConfig(_Section):
    """Resource limits of a local test run (0 = none) and its network access."""

    cpu_s: int = Field(default=3600, ge=0, description="CPU seconds per process")
    memory_mb: int = Field(default=16384, ge=0, description="address space per process")
    processes: int = Field(default=4096, ge=0, description="processes of the user (RLIMIT_NPROC)")
    file_size_mb: int = Field(default=4096, ge=0, description="largest file a run may write")
    network: bool = Field(default=False, description="allow the network (else a new netns)")


PythonChoice = Literal["newest", "median", "oldest"]
"""Which of the Pythons a project's CI tested an environment takes (``validation.python_choice``):
the newest, the middle one (of an even count, the newer of the two middle ones) or the oldest.
``benchmarks/python_choice.py`` measures which agrees with a reference's Pythons."""


class ValidationConfig(_Section):
    backend: Literal["local", "docker", "auto"] = Field(
        default="auto",
        description="auto: docker when a daemon answers and base images can be had, else local",
    )
    timeout_s: float = Field(default=900.0, gt=0, description="per test run; the run is killed")
    python: str = Field(
        default="3.11", pattern=r"^3\.\d+$", description="no spec and dated = false only"
    )
    packages: list[str] = Field(
        default_factory=lambda: ["pytest"], description="added to inferred environment specs"
    )
    repetitions: int = Field(
        default=3, ge=1, description="runs per side; a status differing across them is flaky"
    )
    coverage: bool = Field(
        default=True, description="measure golden change coverage; unmeasurable is a drop"
    )
    spec_dirs: list[str] = Field(
        default_factory=list,
        description="environment spec dirs, searched after the bundled recipes/environments",
    )
    spec_files: list[str] = Field(
        default_factory=list,
        description="environment spec files; win over spec_dirs (a recipe's environment adds one)",
    )
    bundled_specs: bool = Field(default=True, description="use the specs in bundled_spec_dir")
    bundled_spec_dir: str = Field(
        default="",
        description="the bundled environment specs; empty: recipes/environments as installed",
    )
    reference_environments: str = Field(
        default="",
        description="a directory of a reference's per-instance environment files "
        "(<owner>__<name>/<number>/environment.yml, SWE-bench's swebench/resources/swebench-og; "
        "a SWE-bench checkout's root works too): an instance whose file exists is built in that "
        "environment (its Python, its exact versions); empty: none",
    )
    dated: bool = Field(
        default=True, description="resolve what is not pinned as of the environment commit's date"
    )
    resolve_as_of: str = Field(
        default="",
        pattern=r"^(\d{4}-\d{2}-\d{2})?$",
        description="a date (YYYY-MM-DD): what is not pinned resolves as of it in every dated "
        "environment instead of the environment commit's date (a reference's own build date, "
        "to rebuild its environments); empty: each environment commit's date",
    )
    era_lag_days: int = Field(
        default=365, ge=0, description="a Python counts for a date once it is this many days old"
    )
    python_choice: PythonChoice = Field(
        default="median",
        description="which of the Pythons the project's CI tested (at the environment commit, "
        "released by its date) a spec without a python takes; of an even count, median is "
        "the newer middle one",
    )
    test_imports: bool = Field(
        default=True,
        description="install what the touched test files import (module level, importorskip, "
        "the project's requires_X markers) when the environment lacks it",
    )
    python_search_paths: list[str] | None = Field(
        default=None, description="interpreter globs; unset: $PYENV_ROOT/versions/*/bin/python"
    )
    env_dir: str = Field(default="", description="local environments; empty: work_dir/envs")
    limits: LimitsConfig = Field(
        default_factory=lambda: LimitsConfig(),
        description="Resource limits of local test runs and environment builds.",
    )
    sandbox: Literal["bwrap", "none"] = Field(
        default="bwrap",
        description="local backend: bwrap runs every build and test run in a bubblewrap sandbox "
        "(refused where bwrap cannot run); none runs them on this machine unconfined",
    )
    build_timeout_s: float = Field(
        default=1800.0, gt=0, description="per local environment build; its processes are killed"
    )
    build_hosts: list[str] = Field(
        default_factory=list,
        description="environment builds (local sandboxed and Docker) reach only the package "
        "index hosts (PyPI and the index settings' hosts; a Docker build installing system "
        'packages also the Debian mirror\'s) and these; ["*"]: any host',
    )
    url_packages: Literal["fetch", "index"] = Field(
        default="fetch",
        description="a package the project's CI installs from a git URL: fetch clones the URL "
        "on this machine and installs its commit of the environment's date from that tree "
        "(the index's release of the name stands in when the URL cannot be reached, named in "
        "run_metadata.url_unreached); index: the index's release always stands in",
    )
    url_schemes: list[str] = Field(
        default_factory=lambda: ["https"],
        description="the URL schemes url_packages = fetch may clone (git's other transports "
        "are refused: the URL comes from the repository's own files)",
    )
    repair_from: list[str] = Field(
        default_factory=list,
        description="folders (or files) of wheels, sdists and other zip/tar archives: a file "
        "whose content a mirror lacks at a record's commit is recovered from a member with the "
        "same bytes (builder/core/mirror_repair.py); a record still lacking some is dropped "
        "content_missing unless stub_missing",
    )
    stub_missing: bool = Field(
        default=False,
        description="check out a commit whose mirror lacks some files' content (after "
        "repair_from) with those files empty, listed in the record's run_metadata "
        "(stubbed_files) and the release card; false: drop it content_missing",
    )

    @field_validator("resolve_as_of", mode="before")
    @classmethod
    def _date_as_text(cls, value: Any) -> Any:
        """A TOML date (``resolve_as_of = 2024-06-01``, or the same in ``--set``) as its text."""
        return value.isoformat() if isinstance(value, dt.date) else value

    def bundled_spec_path(self) -> Path | None:
        """The directory of bundled specs; None when ``bundled_specs`` is off."""
        if not self.bundled_specs:
            return None
        return Path(self.bundled_spec_dir) if self.bundled_spec_dir else packaged_spec_dir()


def packaged_spec_dir() -> Path:
    """``recipes/environments`` as installed with the toolkit (package data).

    Found by the package's name, without importing it: the ground floor imports no package
    above it, and none of recipes' code is needed to read its data files."""
    found = importlib.util.find_spec(_SPEC_PACKAGE)
    if found is None or not found.submodule_search_locations:
        raise ConfigError(f"package {_SPEC_PACKAGE!r} is not installed: no bundled specs")
    return Path(next(iter(found.submodule_search_locations))) / "environments"


_LITE_PROBLEM_PATTERNS = {
    "url": r"(?i)\b(?:https?|ftp)://\S+|\bwww\.\S+",
    "issue_reference": (
        r"(?i)(?:^|[^\w&/])#\d+\b|\b[\w.-]+/[\w.-]+#\d+\b"
        r"|\b(?:issues?|prs?|pull\s+requests?|tickets?|bugs?)\s*(?:no\.?\s*)?#?\d+\b"
    ),
    "commit_sha": r"(?i)\b[0-9a-f]{40}\b",
    "media_link": (
        r"(?i)!\[[^\]]*\]\(|<\s*(?:img|video)\b"
        r"|\S+\.(?:png|jpe?g|gif|bmp|svg|webp|mp4|mov|webm|avi)\b"
    ),
}
_LITE_TEST_PATTERNS = {
    "pytest_raises_match": r"pytest\.raises\((?:[^()]|\([^()]*\))*\bmatch\s*=",
    "pytest_warns_match": r"pytest\.warns\((?:[^()]|\([^()]*\))*\bmatch\s*=",
    "assert_message": r"\bassert(?:Raises|Warns)(?:Message|Regexp?)\b",
}


class LiteConfig(_Section):
    """The SWE-bench-Lite rules as data: thresholds, patterns and the seeded sample."""

    enabled: bool = Field(default=True, description="write the lite config")
    size: int = Field(default=300, ge=0, description="sample size; 0 keeps every eligible one")
    seed: int = Field(
        default=0,
        description="seed of the sample (random.Random(seed) over the sorted eligible ids)",
    )
    min_problem_words: int = Field(default=41, ge=0, description="fewer words: not Lite")
    max_patch_files: int = Field(
        default=1, ge=1, description="a golden patch touching more files is not Lite"
    )
    min_patch_hunks: int = Field(
        default=1, ge=0, description="a golden patch with fewer hunks is not Lite"
    )
    max_patch_hunks: int = Field(
        default=3, ge=1, description="a golden patch with more hunks is not Lite"
    )
    allow_added_or_deleted_files: bool = Field(
        default=False, description="else a golden patch adding or deleting a file is not Lite"
    )
    problem_patterns: dict[str, str] = Field(
        default_factory=lambda: dict(_LITE_PROBLEM_PATTERNS),
        description="name → regex (RE2 syntax: linear time, no lookaround); a problem "
        "statement matching one is not Lite",
    )
    test_patterns: dict[str, str] = Field(
        default_factory=lambda: dict(_LITE_TEST_PATTERNS),
        description="name → regex (RE2 syntax: linear time, no lookaround); golden tests "
        "adding a matching line are not Lite",
    )

    @field_validator("problem_patterns", "test_patterns")
    @classmethod
    def _runs_in_linear_time(cls, value: dict[str, str]) -> dict[str, str]:
        """Each pattern runs over untrusted text: RE2 must compile it (builder/core/patterns)."""
        for name, pattern in value.items():
            try:
                linear(pattern)
            except PatternError as error:
                raise ValueError(f"{name}: {error}") from error
        return value


class RollingConfig(_Section):
    """Contamination-free splits: one per model cutoff and one per complete month."""

    cutoffs: str = Field(default="", description="cutoff registry TOML; empty: the bundled one")
    monthly: bool = Field(default=True, description="write one split per complete month")
    as_of: str | None = Field(
        default=None,
        pattern=r"^\d{4}-\d{2}-\d{2}$",
        description="data collected up to this date; months before its month are complete",
    )


class ReleaseConfig(_Section):
    """The release: its version, license and the previous release it continues."""

    version: str = Field(
        default="0.1.0",
        pattern=r"^\d+\.\d+\.\d+$",
        description="MAJOR.MINOR.PATCH; higher than the previous release's, same MAJOR",
    )
    previous: str = Field(default="", description="the previous release's dataset dir")
    license: str = Field(default="other", description="the license in the dataset card")


class PublishConfig(_Section):
    """Where ``swt-builder publish`` uploads (HF_REPO_ID/HF_ENDPOINT env override these)."""

    repo_id: str = Field(
        default="",
        pattern=r"^([\w.-]+/[\w.-]+)?$",
        description="owner/name on the Hub (--repo-id and HF_REPO_ID win)",
    )
    private: bool = Field(default=False, description="create a new repository as private")
    endpoint: str = Field(
        default="", description="Hub URL other than huggingface.co (HF_ENDPOINT wins)"
    )


class DockerConfig(_Section):
    """The Docker backend: base images, build-time registry access, run limits, disk budget."""

    base_images: dict[str, str] = Field(
        default_factory=dict,
        description='Python version -> your own base image, e.g. {"3.9" = "python:3.9-slim"}',
    )
    ca_bundle: Path | None = Field(
        default=None,
        description="CA bundle for environment builds; default /etc/ssl/certs/ca-certificates.crt",
    )
    proxy_passthrough: bool = Field(
        default=True, description="pass HTTP(S)_PROXY/NO_PROXY into environment builds"
    )
    build_network: str = Field(
        default="bridge",
        description='network of environment builds when validation.build_hosts = ["*"]; '
        "otherwise they have none but the way to the package index",
    )
    build_timeout_s: float = Field(
        default=1800.0, gt=0, description="an environment image build past this is killed"
    )
    debian_mirror: str = Field(
        default="http://deb.debian.org/debian",
        description="Debian mirror of the base images debootstrap builds (on first use or by "
        "`swt-builder images base`)",
    )
    memory: str = Field(
        default="4g", description="memory limit of a test-run or environment-build container"
    )
    pids_limit: int = Field(
        default=1024,
        ge=16,
        description="process limit of a test-run or environment-build container",
    )
    cpus: float = Field(default=0.0, ge=0, description="CPU limit of a test run or build; 0: none")
    disk_budget_gb: float = Field(default=30.0, gt=0, description="images prune keeps under it")


TextRetrieval = Literal["bm25", "issue+bm25", "oracle", "oracle+tests"]
TextStyle = Literal["zsb", "zsp"]


class TextConfig(_Section):
    """Text configs for LLM baselines: a prompt per instance with retrieved repository files."""

    enabled: bool = Field(
        default=False, description="write the text configs in the build (off: none)"
    )
    style: Literal["swe-bench", "all-text"] = Field(
        default="swe-bench",
        description="swe-bench: made as SWE-bench and SWT-Bench made theirs (*.py, Lucene "
        "BM25 settings with stemming, top 20, root READMEs, files by path, the budget over "
        "the whole prompt, SWT-Bench's patch columns); all-text: every text file, every hit "
        "in rank order, the budget over the files",
    )
    retrieval: list[TextRetrieval] = Field(
        default_factory=lambda: ["bm25"],
        description="bm25: files ranked by the issue; issue+bm25: the files the issue "
        "names, then bm25's; oracle: the golden patch's files; oracle+tests: those and the "
        "golden tests' existing files (one config set each)",
    )
    include_tests: bool = Field(
        default=True,
        description="index test files (as SWT-Bench); false: leave out paths with a word "
        "test, tests or testing, as SWE-bench's retrieval did",
    )
    templates: Path | None = Field(
        default=None,
        description="a directory with zsb.jinja and zsp.jinja replacing the bundled prompt "
        "templates",
    )
    budget: int = Field(
        default=27000,
        ge=1,
        description="tokens per prompt, at most (all-text: of its repository context)",
    )
    prompts: list[TextStyle] = Field(
        default_factory=lambda: ["zsb", "zsp"],
        description="zsb: answer with a unified diff (ZeroShot); zsp: the function-level "
        "format (ZeroShotPlus)",
    )
    tokenizer: Literal["cl100k_base", "o200k_base"] = Field(
        default="cl100k_base", description="the BPE vocabulary that counts tokens (offline)"
    )


class SizesConfig(_Section):
    """The largest each field of a source record or a prediction may be, in KiB of UTF-8 text:
    a record over one is dropped (``oversized_record``), a prediction not evaluated."""

    problem_statement_kb: int = Field(default=1024, ge=1, description="a problem statement")
    hints_text_kb: int = Field(default=1024, ge=1, description="a record's hints text")
    patch_kb: int = Field(default=16384, ge=1, description="a golden code patch")
    test_patch_kb: int = Field(default=16384, ge=1, description="a golden test patch")
    model_patch_kb: int = Field(default=16384, ge=1, description="a prediction's patch")
    test_ids_kb: int = Field(
        default=16384,
        ge=1,
        description="a reference list of test ids (FAIL_TO_PASS, PASS_TO_PASS), all its ids",
    )
    other_kb: int = Field(
        default=64,
        ge=1,
        description="any other field (repo, dates, version, commits, model name, source, …)",
    )

    def setting(self, field: str) -> str:
        """The setting that bounds ``field``."""
        if field.lower().endswith(("fail_to_pass", "pass_to_pass")):
            return "test_ids_kb"
        named = f"{field}_kb"
        return named if named in type(self).model_fields else "other_kb"

    def limit(self, field: str) -> int:
        """The largest ``field`` may be, in bytes."""
        return getattr(self, self.setting(field)) * 1024


class Config(_Section):
    name: str = Field(
        default="swt-dataset",
        pattern=r"^[\w.-]+$",
        description="the dataset's name: its directory under output_dir",
    )
    output_dir: Path = Field(
        default=Path("dist"),
        description="where datasets are written; relative paths are relative to the file",
    )
    work_dir: Path = Field(
        default=Path(".swt-work"),
        description="result store, environments, repository mirrors, logs",
    )
    jobs: int = Field(default=0, ge=0, description="parallel tasks; 0 means one per core")
    executor: Literal["threads", "processes", "dask"] = Field(
        default="threads", description="where per-record tasks run (dask: on executor_scheduler)"
    )
    executor_scheduler: str | None = Field(
        default=None, description="address of a Dask scheduler, e.g. tcp://host:8786"
    )
    source: SourceConfig = Field(default_factory=SourceConfig)
    repos: dict[str, str] = Field(
        default_factory=dict,
        description="owner/name (or a submodule's URL as .gitmodules writes it) -> local "
        "clone/mirror path or clone URL; a superproject's local clone also serves its "
        "submodules from its .git/modules",
    )
    validation: ValidationConfig = Field(default_factory=ValidationConfig)
    docker: DockerConfig = Field(default_factory=DockerConfig)
    sizes: SizesConfig = Field(default_factory=SizesConfig)
    lite: LiteConfig = Field(default_factory=LiteConfig)
    rolling: RollingConfig = Field(default_factory=RollingConfig)
    release: ReleaseConfig = Field(default_factory=ReleaseConfig)
    publish: PublishConfig = Field(default_factory=PublishConfig)
    text: TextConfig = Field(
        default_factory=TextConfig, description="Text configs with prompts for LLM baselines."
    )

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
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:  # TOML is UTF-8
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
    if source.get("recipes"):
        source["recipes"] = [str((base / recipe).resolve()) for recipe in source["recipes"]]
    if source.get("state_dir"):
        source["state_dir"] = str((base / source["state_dir"]).resolve())
    validation = data.get("validation", {})
    if validation.get("spec_dirs"):
        validation["spec_dirs"] = [str((base / d).resolve()) for d in validation["spec_dirs"]]
    if validation.get("spec_files"):
        validation["spec_files"] = [str((base / f).resolve()) for f in validation["spec_files"]]
    if validation.get("env_dir"):
        validation["env_dir"] = str((base / validation["env_dir"]).resolve())
    if validation.get("reference_environments"):
        reference = (base / validation["reference_environments"]).resolve()
        validation["reference_environments"] = str(reference)
    if validation.get("bundled_spec_dir"):
        validation["bundled_spec_dir"] = str((base / validation["bundled_spec_dir"]).resolve())
    for section, key in (("rolling", "cutoffs"), ("release", "previous")):
        value = data.get(section, {}).get(key)
        if value:
            data[section][key] = str((base / value).resolve())
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
        base, origin = path.parent, str(path)
    else:
        found = _find_default(cwd)
        data, base = ({}, cwd) if found is None else (found[1], found[0].parent)
        origin = "defaults" if found is None else str(found[0])
    _resolve_paths(data, base)
    file_data = copy.deepcopy(data)
    override_data: dict[str, Any] = {}
    for text in overrides:
        _apply_override(override_data, *_parse_override(text))
    _resolve_paths(override_data, cwd)
    _merge(data, override_data)
    try:
        config = Config.model_validate(data)
    except ValidationError as error:
        lines = error_lines(error, Config, file_data, override_data, origin)
        raise ConfigError("invalid configuration: " + "\n".join(lines)) from error
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
