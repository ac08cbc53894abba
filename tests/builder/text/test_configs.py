"""Text configs added to a written release from the repository's mirror, and the build's step."""

import pytest

from builder.build import _write_text_configs
from builder.core.config import TextConfig
from builder.core.repos import RepoCache
from builder.core.store import ResultStore
from builder.release.manifest import hash_files, read_manifest
from builder.text.configs import add_text_configs, settings_of
from builder.text.errors import TextError
from tests.support.instances import make_release
from tests.support.text_repo import REPO, text_fixture


@pytest.fixture
def release(tmp_path):
    fixture = text_fixture(tmp_path / "repo")
    second = fixture.instance.model_copy(update={"instance_id": "owner__calc-2"})
    config, _ = make_release(tmp_path / "dist", [fixture.instance, second])
    config = config.model_copy(update={"work_dir": tmp_path / "work", "repos": fixture.locations})
    return config


def _files(directory):
    return {p.relative_to(directory).as_posix(): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}  # fmt: skip


def test_bm25_text_configs_are_added_and_a_rerun_is_byte_identical(release):
    lines = []
    store = ResultStore(release.work_dir / "store")
    repos = RepoCache(release.work_dir / "repos", release.repos)
    settings = settings_of(TextConfig())

    entries = add_text_configs(
        release.dataset_dir, settings, repos, store, progress=False, echo=lines.append
    )

    assert {e["config"] for e in entries} >= {"bm25_27k_zsb", "bm25_27k_zsp"}
    assert lines[-1].startswith(f"text configs written to {release.dataset_dir}: bm25_27k_zsb")
    assert read_manifest(release.dataset_dir)["files"] == hash_files(release.dataset_dir)
    first = _files(release.dataset_dir)

    lines.clear()
    add_text_configs(release.dataset_dir, settings, repos, store, progress=False, echo=lines.append)
    assert "text bm25: 2 of 2 reused from the store" in lines
    assert _files(release.dataset_dir) == first


def test_the_build_step_writes_what_text_configures(release):
    config = release.model_copy(
        update={"text": TextConfig(enabled=True, retrieval=["oracle"], prompts=["zsp"])}
    )
    store = ResultStore(config.work_dir / "store")
    _write_text_configs(config, store, progress=False, echo=lambda _: None)
    first = _files(config.dataset_dir)
    names = {e["config"] for e in read_manifest(config.dataset_dir)["text"]}
    assert {"oracle_27k_zsp", "lite_oracle_27k_zsp"} <= names
    assert all(name.endswith("oracle_27k_zsp") for name in names)
    _write_text_configs(config, store, progress=False, echo=lambda _: None)
    assert _files(config.dataset_dir) == first


def test_an_instance_without_text_writes_nothing_and_says_which(release):
    before = _files(release.dataset_dir)
    repos = RepoCache(release.work_dir / "repos", {REPO: str(release.work_dir / "absent")})
    lines = []
    with pytest.raises(TextError, match=r"2 of 2 instances have no text \(bm25\), e\.g\. "
                       r"owner__calc-1: repo_unavailable: owner/calc: "):  # fmt: skip
        add_text_configs(
            release.dataset_dir,
            settings_of(TextConfig(prompts=["zsp"])),
            repos,
            ResultStore(release.work_dir / "store"),
            progress=False,
            echo=lines.append,
        )
    assert lines[0].startswith("  owner__calc-1: repo_unavailable: ")
    assert _files(release.dataset_dir) == before
