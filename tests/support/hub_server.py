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
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

import yaml

_REPO = r"(?P<repo>[\w.-]+/[\w.-]+)"
_LFS_SUFFIXES = (".parquet", ".png", ".arrow")
_GITATTRIBUTES = (
    b"*.parquet filter=lfs diff=lfs merge=lfs -text\n*.png filter=lfs diff=lfs merge=lfs -text\n"
)


def _blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class _Repo:
    def __init__(self) -> None:
        self.commits: list[tuple[str, dict[str, bytes], str]] = []  # oid, files, message
        self.tags: dict[str, str] = {}
        self.commit({".gitattributes": _GITATTRIBUTES}, "initial commit")

    @property
    def head(self) -> str:
        return self.commits[-1][0]

    def files(self, revision: str) -> dict[str, bytes] | None:
        oid = self.tags.get(revision, revision)
        if oid == "main":
            oid = self.head
        for commit_oid, files, _ in self.commits:
            if commit_oid == oid:
                return files
        return None

    def commit(self, files: dict[str, bytes], message: str) -> str:
        material = json.dumps(
            [len(self.commits), message, sorted((p, _blob_sha1(d)) for p, d in files.items())]
        )
        oid = hashlib.sha1(material.encode()).hexdigest()
        self.commits.append((oid, files, message))
        return oid


class FakeHub:
    """State of the fake Hub; ``requests`` logs (method, path) of every request served."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.repos: dict[str, _Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.requests: list[tuple[str, str]] = []
        self.uploads: list[str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def files(self, repo_id: str, revision: str = "main") -> dict[str, bytes]:
        return dict(self.repos[repo_id].files(revision) or {})

    def _handler(self):
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def _send(self, status: int, body=None, headers=None, raw: bytes | None = None):
                data = raw if raw is not None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def _error(self, status: int, code: str, message: str):
                self._send(status, {"error": message}, {"X-Error-Code": code})

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length", 0)))

            def _authorized(self) -> bool:
                if self.headers.get("Authorization") == f"Bearer {hub.token}":
                    return True
                self._send(401, {"error": "Invalid credentials in Authorization header"})
                return False

            def _repo(self, repo_id: str) -> _Repo | None:
                repo = hub.repos.get(repo_id)
                if repo is None:
                    self._error(404, "RepoNotFound", f"Repository {repo_id} not found")
                return repo

            def do_GET(self) -> None:
                self._route("GET")

            def do_POST(self) -> None:
                self._route("POST")

            def do_PUT(self) -> None:
                self._route("PUT")

            def _route(self, method: str) -> None:
                url = urlparse(self.path)
                path = unquote(url.path)
                hub.requests.append((method, path))
                with hub._lock:
                    for pattern, verb, handler in ROUTES:
                        match = re.fullmatch(pattern, path)
                        if match and verb == method:
                            handler(self, parse_qs(url.query), **match.groupdict())
                            return
                    self._send(404, {"error": f"fake hub: no route {method} {path}"})

            # -- repositories -------------------------------------------------------------
            def create_repo(self, query) -> None:
                if not self._authorized():
                    return
                payload = json.loads(self._body())
                if payload.get("type") != "dataset":
                    self._send(400, {"error": "fake hub only hosts datasets"})
                    return
                repo_id = f"{payload['organization'] or 'user'}/{payload['name']}"
                if repo_id in hub.repos:
                    self._send(409, {"error": "You already created this dataset repo"})
                    return
                hub.repos[repo_id] = _Repo()
                self._send(200, {"url": f"{hub.url}/datasets/{repo_id}"})

            def info(self, query, repo: str, revision: str = "main") -> None:
                found = self._repo(repo)
                if found is None:
                    return
                files = found.files(revision)
                if files is None:
                    self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
                    return
                oid = found.tags.get(revision, found.head if revision == "main" else revision)
                siblings = [{"rfilename": name} for name in sorted(files)]
                self._send(200, {"id": repo, "sha": oid, "siblings": siblings, "private": False})

            def tree(self, query, repo: str, revision: str, sub: str | None = None) -> None:
                found = self._repo(repo)
                if found is None:
                    return
                files = found.files(revision)
                if files is None:
                    self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
                    return
                prefix = (sub.strip("/") + "/") if sub else ""
                recursive = query.get("recursive", ["false"])[0].lower() in ("true", "1")
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
                    entry = {"type": "file", "oid": _blob_sha1(data), "size": len(data)}
                    entry["path"] = name
                    if name.endswith(_LFS_SUFFIXES):
                        digest = hashlib.sha256(data).hexdigest()
                        entry["lfs"] = {"oid": digest, "size": len(data), "pointerSize": 134}
                    entries.append(entry)
                for folder in sorted(folders):
                    entry = {"type": "directory", "oid": "0" * 40, "size": 0, "path": folder}
                    entries.append(entry)
                self._send(200, entries)

            def refs(self, query, repo: str) -> None:
                found = self._repo(repo)
                if found is None:
                    return
                self._send(
                    200,
                    {
                        "branches": [
                            {"name": "main", "ref": "refs/heads/main", "targetCommit": found.head}
                        ],
                        "tags": [
                            {"name": tag, "ref": f"refs/tags/{tag}", "targetCommit": oid}
                            for tag, oid in sorted(found.tags.items())
                        ],
                        "converts": [],
                    },
                )

            def validate_yaml(self, query) -> None:
                content = json.loads(self._body())["content"]
                header = content.split("---")[1] if content.startswith("---") else ""
                try:
                    data = yaml.safe_load(header) or {}
                except yaml.YAMLError as error:
                    self._send(400, {"errors": [{"message": str(error)}]})
                    return
                errors = [
                    {"message": f"split name {split['split']!r} must match \\w+"}
                    for config in data.get("configs", [])
                    for split in config.get("data_files", [])
                    if not re.fullmatch(r"\w+", split["split"])
                ]
                self._send(400 if errors else 200, {"errors": errors, "warnings": []})

            # -- uploads ------------------------------------------------------------------
            def preupload(self, query, repo: str, revision: str) -> None:
                if not self._authorized():
                    return
                found = self._repo(repo)
                if found is None:
                    return
                current = found.files(revision) or {}
                answer = []
                for item in json.loads(self._body())["files"]:
                    lfs = item["path"].endswith(_LFS_SUFFIXES)
                    existing = current.get(item["path"])
                    oid = None
                    if existing is not None:
                        oid = hashlib.sha256(existing).hexdigest() if lfs else _blob_sha1(existing)
                    answer.append(
                        {
                            "path": item["path"],
                            "uploadMode": "lfs" if lfs else "regular",
                            "shouldIgnore": False,
                            "oid": oid,
                        }
                    )
                self._send(200, {"files": answer, "commitOid": found.head})

            def lfs_batch(self, query, repo: str) -> None:
                if not self._authorized():
                    return
                objects = []
                for item in json.loads(self._body())["objects"]:
                    entry = {"oid": item["oid"], "size": item["size"], "authenticated": True}
                    if item["oid"] not in hub.lfs:
                        entry["actions"] = {
                            "upload": {"href": f"{hub.url}/lfs-upload/{item['oid']}"},
                            "verify": {"href": f"{hub.url}/lfs-verify"},
                        }
                    objects.append(entry)
                self._send(200, {"transfer": "basic", "objects": objects})

            def lfs_upload(self, query, oid: str) -> None:
                data = self._body()
                if hashlib.sha256(data).hexdigest() != oid:
                    self._send(400, {"error": "sha256 does not match the object id"})
                    return
                hub.lfs[oid] = data
                hub.uploads.append(oid)
                self._send(200, {})

            def lfs_verify(self, query) -> None:
                if not self._authorized():
                    return
                payload = json.loads(self._body())
                ok = len(hub.lfs.get(payload["oid"], b"")) == payload["size"]
                self._send(200 if ok else 404, {})

            def commit(self, query, repo: str, revision: str) -> None:
                if not self._authorized():
                    return
                found = self._repo(repo)
                if found is None:
                    return
                if revision != "main":
                    self._error(404, "RevisionNotFound", "fake hub commits to main only")
                    return
                files = dict(found.files("main"))
                message = ""
                for line in self._body().decode().splitlines():
                    item = json.loads(line)
                    key, value = item["key"], item["value"]
                    if key == "header":
                        message = value["summary"]
                        parent = value.get("parentCommit")
                        if parent is not None and parent != found.head:
                            self._send(412, {"error": "parent commit is not the head of main"})
                            return
                    elif key == "file":
                        files[value["path"]] = base64.b64decode(value["content"])
                    elif key == "lfsFile":
                        if value["oid"] not in hub.lfs:
                            self._send(422, {"error": f"LFS object {value['oid']} not uploaded"})
                            return
                        files[value["path"]] = hub.lfs[value["oid"]]
                    elif key == "deletedFile":
                        if files.pop(value["path"], None) is None:
                            self._error(404, "EntryNotFound", "A file with this name doesn't exist")
                            return
                    else:
                        self._send(400, {"error": f"fake hub: unknown commit key {key}"})
                        return
                oid = found.commit(files, message)
                self._send(
                    200,
                    {
                        "commitUrl": f"{hub.url}/datasets/{repo}/commit/{oid}",
                        "commitOid": oid,
                        "pullRequestUrl": None,
                    },
                )

            def tag(self, query, repo: str, revision: str) -> None:
                if not self._authorized():
                    return
                found = self._repo(repo)
                if found is None:
                    return
                name = json.loads(self._body())["tag"]
                if name in found.tags:
                    self._send(409, {"error": f"Tag {name} already exists"})
                    return
                oid = found.head if revision == "main" else revision
                if found.files(oid) is None:
                    self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
                    return
                found.tags[name] = oid
                self._send(200, {})

            def resolve(self, query, repo: str, revision: str, file: str) -> None:
                found = self._repo(repo)
                if found is None:
                    return
                data = (found.files(revision) or {}).get(file)
                if data is None:
                    self._error(404, "EntryNotFound", f"{file} not found")
                    return
                self._send(200, raw=data)

        ROUTES = [
            (r"/api/repos/create", "POST", Handler.create_repo),
            (rf"/api/datasets/{_REPO}", "GET", Handler.info),
            (rf"/api/datasets/{_REPO}/revision/(?P<revision>[^/]+)", "GET", Handler.info),
            (
                rf"/api/datasets/{_REPO}/tree/(?P<revision>[^/]+)(?P<sub>/.*)?",
                "GET",
                Handler.tree,
            ),
            (rf"/api/datasets/{_REPO}/refs", "GET", Handler.refs),
            (r"/api/validate-yaml", "POST", Handler.validate_yaml),
            (rf"/api/datasets/{_REPO}/preupload/(?P<revision>[^/]+)", "POST", Handler.preupload),
            (rf"/datasets/{_REPO}\.git/info/lfs/objects/batch", "POST", Handler.lfs_batch),
            (r"/lfs-upload/(?P<oid>[0-9a-f]{64})", "PUT", Handler.lfs_upload),
            (r"/lfs-verify", "POST", Handler.lfs_verify),
            (rf"/api/datasets/{_REPO}/commit/(?P<revision>[^/]+)", "POST", Handler.commit),
            (rf"/api/datasets/{_REPO}/tag/(?P<revision>[^/]+)", "POST", Handler.tag),
            (
                rf"/datasets/{_REPO}/resolve/(?P<revision>[^/]+)/(?P<file>.+)",
                "GET",
                Handler.resolve,
            ),
        ]
        return Handler
