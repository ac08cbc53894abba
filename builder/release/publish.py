"""Publish a release dir to the Hub: every file in one commit, then a version tag; or a dry run."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from builder.core.config import Config
from builder.core.errors import SwtError
from builder.release.card_diff import CARD, card_diff, human_size
from builder.release.manifest import MANIFEST, hash_files, read_manifest

if TYPE_CHECKING:
    from huggingface_hub import HfApi

KEEP_REMOTE = frozenset({".gitattributes"})
"""Files the Hub creates itself; publishing never deletes them."""


class PublishError(SwtError, RuntimeError):
    """Publishing is refused: no token, a tag that exists, or a release dir that was altered."""


class HubUnreachable(PublishError):
    """The Hub did not answer (no network, a wrong endpoint, ``HF_HUB_OFFLINE``): a dry run
    shows the release alone, a publish is refused. ``reason`` is the first half of the line."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"{reason}; check the network, HF_ENDPOINT or publish.endpoint")
        self.reason = reason


@dataclasses.dataclass(frozen=True)
class PublishTarget:
    """Where to publish; the token comes from HF_TOKEN and is never printed."""

    repo_id: str
    endpoint: str | None
    private: bool
    token: str | None = dataclasses.field(default=None, repr=False)


def publish_target(config: Config, repo_id: str | None = None) -> PublishTarget | None:
    """The build's automatic target: only when HF_REPO_ID (or ``repo_id``) and HF_TOKEN are set."""
    repo = repo_id or os.environ.get("HF_REPO_ID", "")
    token = os.environ.get("HF_TOKEN", "")
    if not repo or not token:
        return None
    return resolve_target(config, repo)


def resolve_target(config: Config, repo_id: str | None = None) -> PublishTarget:
    """Repo from the argument, HF_REPO_ID or ``publish.repo_id``; endpoint from HF_ENDPOINT."""
    repo = repo_id or os.environ.get("HF_REPO_ID") or config.publish.repo_id
    if not repo:
        raise PublishError("no repository: pass --repo-id, set HF_REPO_ID or publish.repo_id")
    endpoint = os.environ.get("HF_ENDPOINT") or config.publish.endpoint or None
    token = os.environ.get("HF_TOKEN") or None
    return PublishTarget(repo, endpoint, config.publish.private, token)


DEFAULT_ENDPOINT = "https://huggingface.co"

_TRANSPORT_ERRORS = (("httpx2", "TransportError"), ("httpx", "TransportError"),
                     ("requests", "ConnectionError"), ("requests", "Timeout"),
                     ("huggingface_hub.errors", "OfflineModeIsEnabled"))  # fmt: skip
"""The HTTP libraries huggingface_hub has used, and their "the server was not reached" errors
(HF_HUB_OFFLINE: not asked at all)."""


def _unreachable_errors() -> tuple[type[Exception], ...]:
    found = []
    for module_name, name in _TRANSPORT_ERRORS:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue  # not the library this huggingface_hub uses
        found.append(getattr(module, name))
    return tuple(found)


@contextlib.contextmanager
def _hub_errors(target: PublishTarget) -> Iterator[None]:
    """The Hub not answering, or answering with an error, as one PublishError line."""
    from huggingface_hub.errors import HfHubHTTPError

    where = target.endpoint or DEFAULT_ENDPOINT
    try:
        yield
    except _unreachable_errors() as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise HubUnreachable(
            f"cannot reach the Hub at {where} ({type(error).__name__}: {first})"
        ) from error
    except HfHubHTTPError as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise PublishError(f"the Hub at {where} refused {target.repo_id}: {first}") from error


def tag_name(version: str) -> str:
    return f"v{version}"


def git_blob_sha1(data: bytes) -> str:
    """The git object id of a file's bytes (what the Hub reports for non-LFS files)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclasses.dataclass(frozen=True)
class PublishPlan:
    """What a publish would change on the Hub, against the revision it read."""

    repo_id: str
    version: str
    tag: str
    repo_exists: bool
    revision: str | None
    tag_exists: bool
    add: list[str]
    update: list[str]
    delete: list[str]
    unchanged: list[str]
    sizes: dict[str, int] = dataclasses.field(default_factory=dict)
    """Bytes of every release file."""
    unreached: str = ""
    """Why the Hub was not asked or did not answer; then every file is listed to add."""
    card_against: str = ""
    """What the card was compared with (the Hub's, the previous release's), or empty: none."""
    card: list[str] = dataclasses.field(default_factory=list)
    """The unified diff from that card to the release's (empty: none, or the same)."""

    @property
    def changes(self) -> bool:
        return bool(self.add or self.update or self.delete)

    def render(self) -> str:
        if self.unreached:
            where = f"the Hub not reached ({self.unreached}): the release alone"
        elif self.revision:
            where = f"against revision {self.revision}"
        else:
            where = "against a repository that does not exist"
        lines = [f"publish {self.repo_id} {self.tag}: {where}"]
        if self.tag_exists:
            lines.append(f"  tag {self.tag} exists: refused (a released version never changes)")
        for label, paths in (("add", self.add), ("update", self.update)):
            lines.extend(f"  {label:<7} {path} ({human_size(self.sizes[path])})" for path in paths)
        lines.extend(f"  {'delete':<7} {path}" for path in self.delete)
        upload = human_size(sum(self.sizes[path] for path in self.add + self.update))
        lines.append(
            f"  {len(self.add)} to add, {len(self.update)} to update ({upload} to upload), "
            f"{len(self.delete)} to delete, {len(self.unchanged)} unchanged; then tag {self.tag}"
        )
        lines.extend(self._card_lines())
        return "\n".join(lines)

    def _card_lines(self) -> list[str]:
        if not self.card_against:
            return [f"card: nothing to compare {CARD} with (the Hub's is unknown, no previous "
                    "release)"]  # fmt: skip
        if not self.card:
            return [f"card: {CARD} is the same as {self.card_against}"]
        return [f"card: {CARD} against {self.card_against}:", *self.card]


@dataclasses.dataclass(frozen=True)
class PublishOutcome:
    plan: PublishPlan
    commit: str | None
    dry_run: bool

    def summary(self) -> str:
        if self.dry_run:
            return self.plan.render() + "\n(dry run: nothing was uploaded)"
        head = f"published {self.plan.repo_id} {self.plan.tag}"
        return f"{head} at commit {self.commit}" if self.commit else head


def local_files(dataset_dir: Path) -> dict[str, str]:
    """Path → sha256 of the release's files; raises if the dir no longer matches its manifest."""
    manifest = read_manifest(dataset_dir)
    present = hash_files(dataset_dir)
    if present != manifest["files"]:
        recorded = manifest["files"]
        changed = sorted(
            p for p in set(present) | set(recorded) if present.get(p) != recorded.get(p)
        )
        raise PublishError(
            f"{dataset_dir} differs from its manifest ({', '.join(changed)}): rebuild"
        )
    files = {path: entry["sha256"] for path, entry in present.items()}
    files[MANIFEST] = hashlib.sha256((dataset_dir / MANIFEST).read_bytes()).hexdigest()
    return files


def _api(target: PublishTarget) -> HfApi:
    from huggingface_hub import HfApi  # imported on use: a build that does not publish skips it

    return HfApi(endpoint=target.endpoint, token=target.token or False)


def _remote_state(
    api: HfApi, target: PublishTarget, version: str
) -> tuple[str, dict[str, str], bool]:
    """The Hub's ``main`` revision, its files (path → sha) and whether the tag exists."""
    remote: dict[str, str] = {}
    revision = api.dataset_info(target.repo_id, revision="main").sha
    for entry in api.list_repo_tree(
        target.repo_id, repo_type="dataset", recursive=True, revision=revision
    ):
        if hasattr(entry, "blob_id"):
            remote[entry.path] = entry.lfs.sha256 if entry.lfs else entry.blob_id
    refs = api.list_repo_refs(target.repo_id, repo_type="dataset")
    return revision, remote, any(ref.name == tag_name(version) for ref in refs.tags)


def _remote_card(target: PublishTarget, revision: str) -> str:
    """The card of the Hub's ``revision``, read with huggingface_hub's own HTTP session."""
    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

    endpoint = (target.endpoint or DEFAULT_ENDPOINT).rstrip("/")
    url = f"{endpoint}/datasets/{target.repo_id}/resolve/{revision}/{CARD}"
    response = get_session().get(url, headers=build_hf_headers(token=target.token or False))
    hf_raise_for_status(response)
    return response.content.decode("utf-8", errors="replace")


def plan_publish(
    dataset_dir: Path, target: PublishTarget, previous_dir: Path | None = None
) -> PublishPlan:
    """Compare the release with the Hub's current ``main`` (read-only). When the Hub cannot be
    reached the plan is the release alone: every file to add, the card against the previous
    release's (``previous_dir``) if there is one."""
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    dataset_dir = Path(dataset_dir)
    version = read_manifest(dataset_dir)["version"]
    files = local_files(dataset_dir)
    sizes = {path: (dataset_dir / path).stat().st_size for path in files}
    ours = (dataset_dir / CARD).read_text(encoding="utf-8") if CARD in files else ""
    api = _api(target)
    remote: dict[str, str] = {}
    revision, unreached = None, ""
    repo_exists, tag_exists = True, False
    theirs: tuple[str, str] | None = None
    try:
        with _hub_errors(target):
            try:
                revision, remote, tag_exists = _remote_state(api, target, version)
            except RepositoryNotFoundError:
                repo_exists = False
            except RevisionNotFoundError:
                revision = None
            card = _remote_card(target, revision) if revision and CARD in remote else ""
            theirs = ("the Hub's", card)
    except HubUnreachable as error:
        unreached, repo_exists = error.reason, False
        if previous_dir is not None and (Path(previous_dir) / CARD).is_file():
            theirs = ("the previous release's", (Path(previous_dir) / CARD).read_text("utf-8"))
    add, update, unchanged = [], [], []
    for path, sha256 in sorted(files.items()):
        if path not in remote:
            add.append(path)
            continue
        data = (dataset_dir / path).read_bytes()
        same = remote[path] in (sha256, git_blob_sha1(data))
        (unchanged if same else update).append(path)
    delete = sorted(p for p in remote if p not in files and p not in KEEP_REMOTE)
    against, card = "", []
    if theirs is not None:
        against = f"{theirs[0]} {CARD}"
        card = card_diff(theirs[1], ours, f"{theirs[0]} {CARD}", f"this release's {CARD}")
    return PublishPlan(
        target.repo_id,
        version,
        tag_name(version),
        repo_exists,
        revision,
        tag_exists,
        add,
        update,
        delete,
        unchanged,
        sizes,
        unreached,
        against,
        card,
    )


def publish_release(
    dataset_dir: Path,
    target: PublishTarget,
    dry_run: bool = False,
    previous_dir: Path | None = None,
) -> PublishOutcome:
    """Upload every changed file in one commit on ``main`` and tag it ``v<version>``.

    A release without instances is refused (a dry run still shows its plan), and so is a
    publish while the Hub cannot be reached (a dry run then shows the release alone, its card
    against ``previous_dir``'s).
    """
    dataset_dir = Path(dataset_dir)
    plan = plan_publish(dataset_dir, target, previous_dir)
    if dry_run:
        return PublishOutcome(plan, None, True)
    if plan.unreached:
        raise HubUnreachable(plan.unreached)
    if not read_manifest(dataset_dir)["counts"]["instances"]:
        raise PublishError(f"{dataset_dir} holds no instance: nothing to publish")
    with _hub_errors(target):
        return _upload(dataset_dir, target, plan)


def _upload(dataset_dir: Path, target: PublishTarget, plan: PublishPlan) -> PublishOutcome:
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    if not target.token:
        raise PublishError("HF_TOKEN is not set: publishing needs a write token in HF_TOKEN")
    if plan.tag_exists:
        raise PublishError(f"{target.repo_id} already has tag {plan.tag}: bump release.version")
    api = _api(target)
    if not plan.repo_exists:
        api.create_repo(target.repo_id, repo_type="dataset", private=target.private, exist_ok=True)
        plan = plan_publish(dataset_dir, target)
    commit = plan.revision
    if plan.changes:
        operations = [
            CommitOperationAdd(path_in_repo=path, path_or_fileobj=str(dataset_dir / path))
            for path in plan.add + plan.update
        ] + [CommitOperationDelete(path_in_repo=path) for path in plan.delete]
        info = api.create_commit(
            target.repo_id,
            operations=operations,
            commit_message=f"Release {plan.version}",
            commit_description=f"swt-builder release {plan.version}: all splits, card, manifest.",
            repo_type="dataset",
            revision="main",
            parent_commit=plan.revision,
        )
        commit = info.oid
    api.create_tag(
        target.repo_id,
        tag=plan.tag,
        tag_message=f"Release {plan.version}",
        revision=commit,
        repo_type="dataset",
    )
    return PublishOutcome(plan, commit, False)
