"""Publishing against a fake Hub on 127.0.0.1: one commit, a tag, dry runs, refusals, no leaks."""

import hashlib

import huggingface_hub.constants
import pytest
from huggingface_hub.errors import HfHubHTTPError

from builder.cli import main
from builder.core.config import Config, PublishConfig
from builder.release.publish import (
    PublishError,
    plan_publish,
    publish_release,
    publish_target,
    resolve_target,
)
from tests.support.hub_server import FakeHub
from tests.support.instances import make_instance, make_release

TOKEN = "hf_fake_publish_token_0001"
REPO = "swt/bench"


@pytest.fixture
def hub(monkeypatch):
    # The fake Hub speaks LFS, not Xet: make huggingface_hub take its LFS path.
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_XET", True)
    with FakeHub(TOKEN) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        monkeypatch.delenv("HF_REPO_ID", raising=False)
        yield server


def _release(tmp_path, version="0.1.0", count=3, previous=""):
    instances = [
        make_instance(n, created_at=f"2024-0{n}-10T00:00:00Z") for n in range(1, count + 1)
    ]
    config, _ = make_release(
        tmp_path / version, instances, version=version, previous=previous, as_of="2024-06-01"
    )
    return config


def _local(directory):
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in directory.rglob("*")
        if p.is_file()
    }


def _commits(hub):
    return [path for method, path in hub.requests if method == "POST" and "/commit/" in path]


def test_dry_run_on_a_missing_repo_lists_every_file_and_changes_nothing(hub, tmp_path):
    config = _release(tmp_path)
    outcome = publish_release(config.dataset_dir, resolve_target(config, REPO), dry_run=True)
    assert not outcome.plan.repo_exists and outcome.commit is None
    assert sorted(outcome.plan.add) == sorted(_local(config.dataset_dir))
    assert "against a repository that does not exist" in outcome.summary()
    assert "(dry run: nothing was uploaded)" in outcome.summary()
    assert REPO not in hub.repos and not _commits(hub)


def test_dry_run_with_no_hub_at_all_lists_files_sizes_and_the_card_diff(tmp_path, monkeypatch):
    from tests.support.net import closed_port_url

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_XET", True)
    endpoint = closed_port_url()  # nothing listens there: the real client gets no answer
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    first = _release(tmp_path, "0.1.0", count=3)
    second = _release(tmp_path, "0.2.0", count=2, previous=str(first.dataset_dir))
    target = resolve_target(second, REPO)
    plan = publish_release(
        second.dataset_dir, target, dry_run=True, previous_dir=first.dataset_dir
    ).plan
    local = _local(second.dataset_dir)
    assert plan.unreached.startswith(f"cannot reach the Hub at {endpoint}")
    assert sorted(plan.add) == sorted(local) and not plan.update and not plan.delete
    assert plan.sizes == {path: len(data) for path, data in local.items()}
    text = plan.render()
    assert "the Hub not reached" in text and "the release alone" in text
    assert f"add     README.md ({plan.sizes['README.md'] / 1024:.1f} KiB)" in text
    assert "card: README.md against the previous release's README.md:" in text
    old_card = (first.dataset_dir / "README.md").read_text().splitlines()
    new_card = local["README.md"].decode().splitlines()
    removed = [line for line in old_card if line not in new_card]
    added = [line for line in new_card if line not in old_card]
    assert removed and added
    assert all(f"-{line}" in plan.card for line in removed)
    assert all(f"+{line}" in plan.card for line in added)
    with pytest.raises(PublishError, match=f"cannot reach the Hub at {endpoint}"):
        publish_release(second.dataset_dir, target)
    alone = plan_publish(first.dataset_dir, resolve_target(first, REPO))
    assert "card: nothing to compare README.md with" in alone.render()


def test_hf_hub_offline_asks_the_hub_nothing(hub, tmp_path, monkeypatch):
    config = _release(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    plan = plan_publish(config.dataset_dir, resolve_target(config, REPO))
    assert "offline mode is enabled" in plan.unreached.lower()
    assert sorted(plan.add) == sorted(_local(config.dataset_dir)) and hub.requests == []


def test_dry_run_shows_the_card_diff_against_the_hubs_card(hub, tmp_path):
    first = _release(tmp_path, "0.1.0", count=3)
    publish_release(first.dataset_dir, resolve_target(first, REPO))
    second = _release(tmp_path, "0.2.0", count=2, previous=str(first.dataset_dir))
    hub.repos[REPO].commit({**hub.files(REPO), "README.md": b"# edited on the Hub\n"}, "edit")
    plan = plan_publish(second.dataset_dir, resolve_target(second, REPO))
    assert not plan.unreached and "README.md" in plan.update
    assert plan.card_against == "the Hub's README.md"
    assert "-# edited on the Hub" in plan.card
    card = (second.dataset_dir / "README.md").read_text().splitlines()
    assert all(f"+{line}" in plan.card for line in card)
    assert ("GET", f"/datasets/{REPO}/resolve/{plan.revision}/README.md") in hub.requests


def test_publish_uploads_everything_in_one_commit_and_tags_it(hub, tmp_path):
    config = _release(tmp_path)
    outcome = publish_release(config.dataset_dir, resolve_target(config, REPO))
    local = _local(config.dataset_dir)
    assert {k: v for k, v in hub.files(REPO).items() if k != ".gitattributes"} == local
    assert len(_commits(hub)) == 1
    repo = hub.repos[REPO]
    assert repo.tags == {"v0.1.0": outcome.commit} and repo.head == outcome.commit
    binary = {
        hashlib.sha256(d).hexdigest() for p, d in local.items() if p.endswith((".parquet", ".png"))
    }
    assert set(hub.uploads) == binary  # parquet and PNGs went through LFS, text inline
    assert ("POST", "/api/validate-yaml") in hub.requests
    assert f"published {REPO} v0.1.0 at commit {outcome.commit}" == outcome.summary()
    again = plan_publish(config.dataset_dir, resolve_target(config, REPO))
    assert not again.changes and again.tag_exists
    assert "tag v0.1.0 exists: refused" in again.render()
    with pytest.raises(PublishError, match="already has tag v0.1.0"):
        publish_release(config.dataset_dir, resolve_target(config, REPO))


def test_next_release_commits_only_the_differences_and_old_tag_stays(hub, tmp_path):
    first = _release(tmp_path, "0.1.0", count=3)
    publish_release(first.dataset_dir, resolve_target(first, REPO))
    old_files = hub.files(REPO, "v0.1.0")
    second = _release(tmp_path, "0.2.0", count=2, previous=str(first.dataset_dir))
    plan = plan_publish(second.dataset_dir, resolve_target(second, REPO))
    assert plan.revision == hub.repos[REPO].head and not plan.tag_exists
    assert "data/monthly/month_2024_01-00000-of-00001.parquet" in plan.unchanged
    assert "data/full/test-00000-of-00001.parquet" in plan.update
    assert "README.md" in plan.update and "manifest.json" in plan.update
    assert plan.add == [] and ".gitattributes" not in plan.delete
    uploads_before = len(hub.uploads)
    publish_release(second.dataset_dir, resolve_target(second, REPO))
    assert len(_commits(hub)) == 2
    assert {k: v for k, v in hub.files(REPO).items() if k != ".gitattributes"} == _local(
        second.dataset_dir
    )
    assert hub.files(REPO, "v0.1.0") == old_files
    changed_binary = [p for p in plan.update if p.endswith((".parquet", ".png"))]
    assert len(hub.uploads) - uploads_before == len(changed_binary)


def test_removed_files_are_deleted_in_the_commit(hub, tmp_path):
    config = _release(tmp_path)
    publish_release(config.dataset_dir, resolve_target(config, REPO))
    hub.repos[REPO].commit({**hub.files(REPO), "data/stale/x.parquet": b"old"}, "someone else")
    plan = plan_publish(config.dataset_dir, resolve_target(config, REPO))
    assert plan.delete == ["data/stale/x.parquet"] and not plan.update


def test_refusals_missing_token_wrong_token_altered_release(hub, tmp_path, monkeypatch):
    config = _release(tmp_path)
    monkeypatch.delenv("HF_TOKEN")
    with pytest.raises(PublishError, match="HF_TOKEN is not set"):
        publish_release(config.dataset_dir, resolve_target(config, REPO))
    monkeypatch.setenv("HF_TOKEN", "hf_wrong")
    with pytest.raises(PublishError, match="refused.*401") as refused:
        publish_release(config.dataset_dir, resolve_target(config, REPO))
    assert isinstance(refused.value.__cause__, HfHubHTTPError)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    (config.dataset_dir / "README.md").write_text("edited by hand")
    with pytest.raises(PublishError, match="differs from its manifest"):
        publish_release(config.dataset_dir, resolve_target(config, REPO))
    assert not _commits(hub)


def test_targets_come_from_environment_and_config(hub, monkeypatch):
    config = Config(publish=PublishConfig(repo_id="cfg/repo", private=True))
    assert publish_target(config) is None  # the build publishes only with HF_REPO_ID set
    monkeypatch.setenv("HF_REPO_ID", "env/repo")
    target = publish_target(config)
    assert (target.repo_id, target.endpoint, target.private) == ("env/repo", hub.url, True)
    assert TOKEN not in repr(target)
    monkeypatch.delenv("HF_TOKEN")
    assert publish_target(config) is None
    assert resolve_target(config).repo_id == "env/repo"
    monkeypatch.delenv("HF_REPO_ID")
    assert resolve_target(config).repo_id == "cfg/repo"
    with pytest.raises(PublishError, match="no repository"):
        resolve_target(Config())


def test_cli_publish_dry_run_then_publish_never_prints_the_token(hub, tmp_path, capsys):
    config = _release(tmp_path)
    argv = ["publish", "--output-dir", str(config.output_dir), "--set", "name=bench"]
    argv += ["--set", 'release.version="0.1.0"', "--repo-id", REPO]
    assert main([*argv, "--dry-run"]) == 0
    dry = capsys.readouterr().out
    assert "add     data/full/test-00000-of-00001.parquet" in dry and REPO not in hub.repos
    assert main(argv) == 0
    assert main(argv) == 2
    out = capsys.readouterr()
    assert "published swt/bench v0.1.0" in out.out and "already has tag" in out.err
    assert TOKEN not in dry + out.out + out.err


def test_a_change_on_the_hub_after_the_comparison_fails_the_commit(hub, tmp_path, monkeypatch):
    import builder.release.publish

    first = _release(tmp_path, "0.1.0")
    publish_release(first.dataset_dir, resolve_target(first, REPO))
    second = _release(tmp_path, "0.2.0", count=2, previous=str(first.dataset_dir))
    compared = plan_publish(second.dataset_dir, resolve_target(second, REPO))
    hub.repos[REPO].commit({**hub.files(REPO), "NOTES.md": b"pushed meanwhile"}, "someone else")
    monkeypatch.setattr(builder.release.publish, "plan_publish", lambda *args: compared)
    with pytest.raises(PublishError, match="412") as refused:
        publish_release(second.dataset_dir, resolve_target(second, REPO))
    assert isinstance(refused.value.__cause__, HfHubHTTPError)
    assert "NOTES.md" in hub.files(REPO) and "v0.2.0" not in hub.repos[REPO].tags
