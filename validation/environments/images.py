"""Docker images of the toolkit: offline base images (debootstrap), listing, and pruning."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import os
import shutil
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from docker.errors import APIError, ImageNotFound

from builder.core.config import DockerConfig
from builder.core.errors import SwtError
from builder.core.repos import file_lock
from validation.environments.docker_engine import (
    BASE_IMAGE,
    KIND,
    PYTHON,
    SCHEMA,
    SPEC_HASH,
    SPEC_LABEL,
    SUITE,
    USER_BASE,
    label_filter,
    labels,
)

SUITES: dict[str, str] = {"3.9": "bullseye", "3.11": "bookworm", "3.13": "trixie"}
"""Debian suites whose python3 is that version: a base image for it can be built offline."""

BASE_PACKAGES = ("python3", "python3-venv", "python3-pip", "git", "ca-certificates")
BASE_SCHEMA = "1"
"""Bump when what goes into a base image changes: base images are then rebuilt."""

BASE_REPOSITORY = "swt-base"
ENV_REPOSITORY = "swt-env"
_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class BaseImageError(SwtError, RuntimeError):
    """A base image cannot be had (no suite for that Python, debootstrap or pull failed)."""

    def __init__(self, message: str, log_path: Path | None = None) -> None:
        super().__init__(f"{message}" + (f" (log: {log_path})" if log_path else ""))
        self.log_path = log_path


def default_base_name(python: str) -> str:
    return f"{BASE_REPOSITORY}:python{python}"


def base_image_name(python: str, settings: DockerConfig) -> str:
    """The base image for ``python``: the one named in settings, else the toolkit's own."""
    return settings.base_images.get(python, default_base_name(python))


def ensure_base_image(client: Any, python: str, settings: DockerConfig, work_dir: Path) -> Any:
    """The base image for ``python``: present, pulled (user-named) or built offline once."""
    name = base_image_name(python, settings)
    log_path = Path(work_dir) / "docker" / "logs" / f"base-python{python}.log"
    with base_lock(work_dir, python):
        image = _current(client, name, own=python not in settings.base_images)
        if image is not None:
            return image
        if python in settings.base_images:
            try:
                return client.images.pull(name)
            except APIError as error:
                log_path.parent.mkdir(parents=True, exist_ok=True)
                log_path.write_text(f"docker pull {name}: {error}\n")
                raise BaseImageError(
                    f"base image {name} is absent and cannot be pulled", log_path
                ) from error
        return build_base_image(client, python, settings=settings, work_dir=work_dir)


def base_lock(work_dir: Path, python: str) -> contextlib.AbstractContextManager[None]:
    """Held while a base image for ``python`` is checked or built (between processes too)."""
    return file_lock(Path(work_dir) / "docker" / "locks" / f"base-python{python}.lock")


def _current(client: Any, name: str, own: bool) -> Any:
    """The image called ``name`` if present (and, for our own, built by this base schema)."""
    try:
        image = client.images.get(name)
    except ImageNotFound:
        return None
    if own and image.labels.get(SCHEMA) != BASE_SCHEMA:
        return None
    return image


def build_base_image(
    client: Any,
    python: str,
    *,
    settings: DockerConfig,
    work_dir: Path,
    suite: str | None = None,
    name: str | None = None,
) -> Any:
    """debootstrap a minimal Debian ``suite`` with Python and git, and ``docker import`` it.

    Callers hold :func:`base_lock` (:func:`ensure_base_image` does).
    """
    suite = suite or SUITES.get(python)
    if suite is None:
        known = ", ".join(f"{v} ({s})" for v, s in SUITES.items())
        raise BaseImageError(
            f"no Debian suite known to ship Python {python} (known: {known}); name your own base "
            f'image in [docker] base_images, e.g. "{python}" = "python:{python}-slim"'
        )
    name = name or default_base_name(python)
    scratch = Path(work_dir) / "docker" / "base" / suite  # callers hold the base image lock
    log_path = Path(work_dir) / "docker" / "logs" / f"base-python{python}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    debootstrap = shutil.which("debootstrap") or _sbin("debootstrap")
    if debootstrap is None:
        log_path.write_text("debootstrap not found\n")
        raise BaseImageError("debootstrap is not installed (apt-get install debootstrap)", log_path)
    shutil.rmtree(scratch, ignore_errors=True)
    rootfs, tarball = scratch / "rootfs", scratch / "rootfs.tar"
    rootfs.mkdir(parents=True)
    try:
        with log_path.open("w") as log:
            include = ",".join(BASE_PACKAGES)
            _step(
                [debootstrap, "--variant=minbase", f"--include={include}", suite,
                 str(rootfs), settings.debian_mirror],
                log, log_path,
            )  # fmt: skip
            if not (rootfs / "usr" / "bin" / f"python{python}").exists():
                raise BaseImageError(f"{suite} does not ship python{python}", log_path)
            for leftover in ("var/cache/apt/archives", "var/lib/apt/lists"):
                _empty(rootfs / leftover)
            _step(["tar", "-C", str(rootfs), "--numeric-owner", "-cf", str(tarball), "."],
                  log, log_path)  # fmt: skip
        repository, _, tag = name.rpartition(":")
        own = labels("base", python=python, suite=suite, schema=BASE_SCHEMA)
        changes = [f'LABEL "{key}"="{value}"' for key, value in sorted(own.items())]
        changes += [f"ENV PATH={_DEFAULT_PATH}", "ENV LANG=C.UTF-8", 'CMD ["/bin/bash"]']
        client.api.import_image(
            src=str(tarball), repository=repository or name, tag=tag or None, changes=changes
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return client.images.get(name)


def base_images_buildable() -> bool:
    """Whether base images can be built here: debootstrap is installed and we are root."""
    found = shutil.which("debootstrap") or _sbin("debootstrap")
    return found is not None and os.geteuid() == 0


def _sbin(program: str) -> str | None:
    for folder in ("/usr/sbin", "/sbin"):
        if os.access(f"{folder}/{program}", os.X_OK):
            return f"{folder}/{program}"
    return None


def _step(command: list[str], log: Any, log_path: Path) -> None:
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    completed = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT)
    if completed.returncode != 0:
        raise BaseImageError(f"{command[0]} failed with exit code {completed.returncode}", log_path)


def _empty(folder: Path) -> None:
    if not folder.is_dir():
        return
    for entry in folder.iterdir():
        if entry.is_file() or entry.is_symlink():
            entry.unlink()


@dataclasses.dataclass(frozen=True)
class ImageRow:
    """One of the toolkit's images, as ``images list`` shows it."""

    kind: str
    tags: tuple[str, ...]
    image_id: str
    python: str
    detail: str
    size_bytes: int
    created: str

    def line(self) -> str:
        tag = self.tags[0] if self.tags else "<none>"
        megabytes = self.size_bytes / 2**20
        return (
            f"{self.kind:<12} {tag:<40} {self.image_id[7:19]}  py{self.python:<5} "
            f"{megabytes:8.1f} MB  {self.created[:19]}  {self.detail}"
        )


def toolkit_images(client: Any, kind: str | None = None) -> list[Any]:
    """Images carrying the toolkit's labels (of one kind), oldest first."""
    images = client.images.list(filters=label_filter(kind))
    return sorted(images, key=lambda image: image.attrs.get("Created", ""))


def list_images(client: Any) -> list[ImageRow]:
    rows = []
    for image in toolkit_images(client):
        kind = image.labels.get(KIND, "?")
        detail = image.labels.get(SUITE, "") or image.labels.get(SPEC_LABEL, "")
        rows.append(
            ImageRow(
                kind=kind,
                tags=tuple(image.tags),
                image_id=image.id,
                python=image.labels.get(PYTHON, "?"),
                detail=detail,
                size_bytes=int(image.attrs.get("Size", 0)),
                created=str(image.attrs.get("Created", "")),
            )
        )
    return rows


@dataclasses.dataclass
class PruneReport:
    removed: list[str] = dataclasses.field(default_factory=list)
    reasons: dict[str, str] = dataclasses.field(default_factory=dict)
    in_use: list[str] = dataclasses.field(default_factory=list)
    containers: list[str] = dataclasses.field(default_factory=list)
    freed_bytes: int = 0
    total_bytes: int = 0


def prune(
    client: Any,
    *,
    budget_bytes: int,
    schema: str,
    keep: Iterable[str] | None = None,
    last_used: dict[str, float] | None = None,
    everything: bool = False,
    dry_run: bool = False,
    only: Iterable[str] | None = None,
    container_grace_s: float = 3600.0,
) -> PruneReport:
    """Remove what is not needed, by labels.

    Leftover stopped build/run containers go first. Environment images go when built by another
    environment schema, on a base image that is gone or replaced, or (``keep`` given) when no
    current spec hashes to them; then the least recently used ones while the toolkit's images
    exceed ``budget_bytes``. Base images go only with ``everything`` (which removes all).
    ``only`` limits the images considered for removal to these ids. Containers younger than
    ``container_grace_s`` are left alone (a live run's container exists before it starts).
    """
    report = PruneReport()
    horizon = time.time() - container_grace_s
    for container in client.containers.list(all=True, filters=label_filter()):
        created = _timestamp(container.attrs.get("Created", ""))
        if container.status in ("created", "exited", "dead") and created < horizon:
            report.containers.append(container.short_id)
            if not dry_run:
                container.remove(force=True)
    bases = {image.id: image for image in toolkit_images(client, "base")}
    environments = toolkit_images(client, "environment")
    considered = set(only) if only is not None else None
    kept_hashes = set(keep) if keep is not None else None
    doomed: dict[str, str] = {}
    for image in environments:
        reason = _stale(image, bases, schema, kept_hashes, everything)
        if reason and (considered is None or image.id in considered):
            doomed[image.id] = reason
    bases_size = sum(int(image.attrs.get("Size", 0)) for image in bases.values())
    everything_size = bases_size + sum(_own_size(image, bases) for image in environments)
    survivors = [image for image in environments if image.id not in doomed]
    total = bases_size + sum(_own_size(image, bases) for image in survivors)
    used = last_used or {}
    removable = [image for image in survivors if considered is None or image.id in considered]
    removable.sort(key=lambda image: used.get(image.labels.get(SPEC_HASH, ""), 0.0))
    while removable and total > budget_bytes:
        oldest = removable.pop(0)
        doomed[oldest.id] = "over the disk budget (least recently used)"
        total -= _own_size(oldest, bases)
    if everything:
        doomed.update({i: "everything" for i in bases if considered is None or i in considered})
    images = {image.id: image for image in [*environments, *bases.values()]}
    for image_id, reason in doomed.items():
        image = images[image_id]
        name = image.tags[0] if image.tags else image.short_id
        if not dry_run:
            try:
                client.images.remove(image.id, force=False, noprune=False)
            except APIError as error:
                if error.status_code != 409:
                    raise
                report.in_use.append(name)  # a container still uses it: kept
                continue
        report.removed.append(name)
        report.reasons[name] = reason
        report.freed_bytes += _own_size(image, bases)
    report.total_bytes = everything_size - report.freed_bytes
    return report


def _timestamp(text: str) -> float:
    """Seconds since the epoch of Docker's RFC 3339 time (nanoseconds cut, 'Z' understood)."""
    if not text:
        return 0.0
    head, _, _ = text.partition(".")
    moment = dt.datetime.fromisoformat(head.removesuffix("Z"))
    return moment.replace(tzinfo=dt.timezone.utc).timestamp()


def _stale(
    image: Any, bases: dict[str, Any], schema: str, keep: set[str] | None, everything: bool
) -> str:
    if everything:
        return "everything"
    if image.labels.get(SCHEMA) != schema:
        return f"environment schema {image.labels.get(SCHEMA)} is not {schema}"
    if image.labels.get(BASE_IMAGE) not in bases and not _user_base(image):
        return "its base image is gone or was rebuilt"
    if keep is not None and image.labels.get(SPEC_HASH) not in keep:
        return "no current spec needs it"
    return ""


def _user_base(image: Any) -> bool:
    """Built on a user-named base image (not ours): its base is not judged by our labels."""
    return image.labels.get(USER_BASE) == "true"


def _own_size(image: Any, bases: dict[str, Any]) -> int:
    size = int(image.attrs.get("Size", 0))
    base = bases.get(image.labels.get(BASE_IMAGE, ""))
    return size - int(base.attrs.get("Size", 0)) if base is not None else size
