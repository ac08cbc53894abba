"""A fake Hugging Face Hub on 127.0.0.1 speaking the endpoints huggingface_hub calls to publish.

Covers (as read from huggingface_hub's hf_api.py, _commit_api.py and lfs.py): repo creation,
dataset info, recursive tree listing, refs, YAML validation, preupload (LFS vs regular), the LFS
batch API with basic PUT upload and verify, the ndjson commit, tags, and file resolve. Xet
uploads are not spoken: tests turn them off (huggingface_hub then uses LFS).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re

import yaml

from recipes.demo.loopback import LoopbackServer, Refusal, Request, Response

_REPO = r"/datasets/(?P<repo>[\w.-]+/[\w.-]+)"
_REVISION = r"/(?P<revision>[^/]+)"
_LFS_SUFFIXES = (".parquet", ".png", ".arrow")
_GITATTRIBUTES = (
    b"*.parquet filter=lfs diff=lfs merge=lfs -text\n*.png filter=lfs diff=lfs merge=lfs -text\n"
)


def _blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _error(status: int, code: str, message: str) -> Refusal:
    return Refusal(Response(status, {"error": message}, {"X-Error-Code": code}))


class _Repo:
    def __init__(self) -> None:
        self.commits: list[tuple[str, dict[str, bytes], str]] = []  # oid, files, message
        self.tags: dict[str, str] = {}
        self.commit({".gitattributes": _GITATTRIBUTES}, "initial commit")

    @property
    def head(self) -> str:
        return self.commits[-1][0]

    def oid(self, revision: str) -> str:
        return self.head if revision == "main" else self.tags.get(revision, revision)

    def files(self, revision: str) -> dict[str, bytes] | None:
        oid = self.oid(revision)
        return next((files for commit, files, _ in self.commits if commit == oid), None)

    def commit(self, files: dict[str, bytes], message: str) -> str:
        material = json.dumps(
            [len(self.commits), message, sorted((p, _blob_sha1(d)) for p, d in files.items())]
        )
        oid = hashlib.sha1(material.encode()).hexdigest()
        self.commits.append((oid, files, message))
        return oid


class FakeHub(LoopbackServer):
    """State of the fake Hub; ``requests`` lists (method, path) of every request served."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.repos: dict[str, _Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.uploads: list[str] = []
        routes = [
            ("POST", r"/api/repos/create", self._create_repo),
            ("GET", rf"/api{_REPO}", self._info),
            ("GET", rf"/api{_REPO}/revision{_REVISION}", self._info),
            ("GET", rf"/api{_REPO}/tree{_REVISION}(?P<sub>/.*)?", self._tree),
            ("GET", rf"/api{_REPO}/refs", self._refs),
            ("POST", r"/api/validate-yaml", self._validate_yaml),
            ("POST", rf"/api{_REPO}/preupload{_REVISION}", self._preupload),
            ("POST", rf"{_REPO}\.git/info/lfs/objects/batch", self._lfs_batch),
            ("PUT", r"/lfs-upload/(?P<oid>[0-9a-f]{64})", self._lfs_upload),
            ("POST", r"/lfs-verify", self._lfs_verify),
            ("POST", rf"/api{_REPO}/commit{_REVISION}", self._commit),
            ("POST", rf"/api{_REPO}/tag{_REVISION}", self._tag),
            ("GET", rf"{_REPO}/resolve{_REVISION}/(?P<file>.+)", self._resolve),
        ]
        super().__init__(routes, name="fake-hub")

    def __enter__(self) -> FakeHub:
        return self

    @property
    def requests(self) -> list[tuple[str, str]]:
        return [(served.method, served.path) for served in self.log]

    def files(self, repo_id: str, revision: str = "main") -> dict[str, bytes]:
        return dict(self.repos[repo_id].files(revision) or {})

    def not_found(self, request: Request) -> Response:
        return Response(404, {"error": f"fake hub: no route {request.method} {request.path}"})

    # -- checks that refuse -------------------------------------------------------------

    def _authorize(self, request: Request) -> None:
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            raise Refusal(Response(401, {"error": "Invalid credentials in Authorization header"}))

    def _repo(self, request: Request) -> _Repo:
        repo_id = request.params["repo"]
        if repo_id not in self.repos:
            raise _error(404, "RepoNotFound", f"Repository {repo_id} not found")
        return self.repos[repo_id]

    def _files(self, request: Request) -> tuple[_Repo, dict[str, bytes]]:
        repo = self._repo(request)
        revision = request.params.get("revision") or "main"
        files = repo.files(revision)
        if files is None:
            raise _error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
        return repo, files

    # -- repositories -------------------------------------------------------------------

    def _create_repo(self, request: Request) -> Response:
        self._authorize(request)
        payload = request.json()
        if payload.get("type") != "dataset":
            return Response(400, {"error": "fake hub only hosts datasets"})
        repo_id = f"{payload['organization'] or 'user'}/{payload['name']}"
        if repo_id in self.repos:
            return Response(409, {"error": "You already created this dataset repo"})
        self.repos[repo_id] = _Repo()
        return Response(200, {"url": f"{self.url}/datasets/{repo_id}"})

    def _info(self, request: Request) -> Response:
        repo, files = self._files(request)
        oid = repo.oid(request.params.get("revision") or "main")
        siblings = [{"rfilename": name} for name in sorted(files)]
        body = {"id": request.params["repo"], "sha": oid, "siblings": siblings, "private": False}
        return Response(200, body)

    def _tree(self, request: Request) -> Response:
        _, files = self._files(request)
        sub = request.params["sub"]
        prefix = (sub.strip("/") + "/") if sub else ""
        recursive = request.query.get("recursive", "false").lower() in ("true", "1")
        entries, folders = [], set()
        for name, data in sorted(files.items()):
            if not name.startswith(prefix):
                continue
            rest = name[len(prefix) :]
            if "/" in rest:
                parts = rest.split("/")[:-1]
                for depth in range(1, len(parts) + 1 if recursive else 2):
                    folders.add(prefix + "/".join(parts[:depth]))
                if not recursive:
                    continue
            entry = {"type": "file", "oid": _blob_sha1(data), "size": len(data), "path": name}
            if name.endswith(_LFS_SUFFIXES):
                digest = hashlib.sha256(data).hexdigest()
                entry["lfs"] = {"oid": digest, "size": len(data), "pointerSize": 134}
            entries.append(entry)
        for folder in sorted(folders):
            entries.append({"type": "directory", "oid": "0" * 40, "size": 0, "path": folder})
        return Response(200, entries)

    def _refs(self, request: Request) -> Response:
        repo = self._repo(request)
        main = {"name": "main", "ref": "refs/heads/main", "targetCommit": repo.head}
        tags = [
            {"name": tag, "ref": f"refs/tags/{tag}", "targetCommit": oid}
            for tag, oid in sorted(repo.tags.items())
        ]
        return Response(200, {"branches": [main], "tags": tags, "converts": []})

    def _validate_yaml(self, request: Request) -> Response:
        content = request.json()["content"]
        header = content.split("---")[1] if content.startswith("---") else ""
        try:
            data = yaml.safe_load(header) or {}
        except yaml.YAMLError as error:
            return Response(400, {"errors": [{"message": str(error)}]})
        errors = [
            {"message": f"split name {split['split']!r} must match \\w+"}
            for config in data.get("configs", [])
            for split in config.get("data_files", [])
            if not re.fullmatch(r"\w+", split["split"])
        ]
        return Response(400 if errors else 200, {"errors": errors, "warnings": []})

    # -- uploads ------------------------------------------------------------------------

    def _preupload(self, request: Request) -> Response:
        self._authorize(request)
        repo = self._repo(request)
        current = repo.files(request.params["revision"]) or {}
        answer = []
        for item in request.json()["files"]:
            lfs = item["path"].endswith(_LFS_SUFFIXES)
            existing = current.get(item["path"])
            oid = None
            if existing is not None:
                oid = hashlib.sha256(existing).hexdigest() if lfs else _blob_sha1(existing)
            mode = "lfs" if lfs else "regular"
            answer.append(
                {"path": item["path"], "uploadMode": mode, "shouldIgnore": False, "oid": oid}
            )
        return Response(200, {"files": answer, "commitOid": repo.head})

    def _lfs_batch(self, request: Request) -> Response:
        self._authorize(request)
        objects = []
        for item in request.json()["objects"]:
            entry = {"oid": item["oid"], "size": item["size"], "authenticated": True}
            if item["oid"] not in self.lfs:
                entry["actions"] = {
                    "upload": {"href": f"{self.url}/lfs-upload/{item['oid']}"},
                    "verify": {"href": f"{self.url}/lfs-verify"},
                }
            objects.append(entry)
        return Response(200, {"transfer": "basic", "objects": objects})

    def _lfs_upload(self, request: Request) -> Response:
        oid = request.params["oid"]
        if hashlib.sha256(request.body).hexdigest() != oid:
            return Response(400, {"error": "sha256 does not match the object id"})
        self.lfs[oid] = request.body
        self.uploads.append(oid)
        return Response(200, {})

    def _lfs_verify(self, request: Request) -> Response:
        self._authorize(request)
        payload = request.json()
        ok = len(self.lfs.get(payload["oid"], b"")) == payload["size"]
        return Response(200 if ok else 404, {})

    def _commit(self, request: Request) -> Response:
        self._authorize(request)
        repo = self._repo(request)
        if request.params["revision"] != "main":
            raise _error(404, "RevisionNotFound", "fake hub commits to main only")
        files = dict(repo.files("main") or {})
        message = ""
        for line in request.body.decode().splitlines():
            item = json.loads(line)
            key, value = item["key"], item["value"]
            if key == "header":
                message = value["summary"]
                parent = value.get("parentCommit")
                if parent is not None and parent != repo.head:
                    return Response(412, {"error": "parent commit is not the head of main"})
            elif key == "file":
                files[value["path"]] = base64.b64decode(value["content"])
            elif key == "lfsFile":
                if value["oid"] not in self.lfs:
                    return Response(422, {"error": f"LFS object {value['oid']} not uploaded"})
                files[value["path"]] = self.lfs[value["oid"]]
            elif key == "deletedFile":
                if files.pop(value["path"], None) is None:
                    raise _error(404, "EntryNotFound", "A file with this name doesn't exist")
            else:
                return Response(400, {"error": f"fake hub: unknown commit key {key}"})
        oid = repo.commit(files, message)
        url = f"{self.url}/datasets/{request.params['repo']}/commit/{oid}"
        return Response(200, {"commitUrl": url, "commitOid": oid, "pullRequestUrl": None})

    def _tag(self, request: Request) -> Response:
        self._authorize(request)
        repo = self._repo(request)
        name = request.json()["tag"]
        if name in repo.tags:
            return Response(409, {"error": f"Tag {name} already exists"})
        revision = request.params["revision"]
        oid = repo.head if revision == "main" else revision
        if repo.files(oid) is None:
            raise _error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
        repo.tags[name] = oid
        return Response(200, {})

    def _resolve(self, request: Request) -> Response:
        _, files = self._files(request)
        data = files.get(request.params["file"])
        if data is None:
            raise _error(404, "EntryNotFound", f"{request.params['file']} not found")
        return Response(200, data)
