"""A small Hugging Face Hub on 127.0.0.1: the part of the Hub's HTTP API that
`huggingface_hub` calls to create a dataset repository, commit files to it (preupload, the
LFS batch API and its upload and verify URLs, the NDJSON commit), tag a commit, list refs
and trees, and download files (`resolve`), with an in-memory store of commits and tags.

Written for the tests from the requests `huggingface_hub` makes (`hf_api.py`,
`_commit_api.py`, `lfs.py`, `file_download.py`), not a mock of its functions: the library
runs unchanged against it over HTTP. It speaks no Xet (`HF_HUB_DISABLE_XET=1` makes the
library use the plain LFS path). Only dataset repositories; no pull requests.

`FakeHub.fail(method, path_prefix, status, times)` makes the next `times` matching
requests answer `status` (a 5xx, or 401), for the error tests.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

TOKEN = "hf_fake_token_for_tests"
GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    return (f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\n"
            f"size {size}\n").encode()


@dataclass(frozen=True)
class Blob:
    data: bytes
    lfs: bool

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def entry(self, path: str) -> dict[str, Any]:
        """A tree / paths-info entry as the Hub gives it."""
        if not self.lfs:
            return {"type": "file", "path": path, "size": len(self.data),
                    "oid": git_blob_sha1(self.data)}
        pointer = lfs_pointer(self.sha256, len(self.data))
        return {"type": "file", "path": path, "size": len(self.data),
                "oid": git_blob_sha1(pointer),
                "lfs": {"oid": self.sha256, "size": len(self.data),
                        "pointerSize": len(pointer)}}


@dataclass
class Commit:
    oid: str
    parent: str | None
    title: str
    description: str
    tree: dict[str, Blob]


@dataclass
class Repo:
    repo_id: str
    private: bool
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)

    def resolve(self, rev: str) -> Commit | None:
        oid = self.branches.get(rev) or self.tags.get(rev) or rev
        return self.commits.get(oid)


@dataclass
class Logged:
    method: str
    path: str
    status: int


class FakeHub:
    """The server; `with FakeHub() as hub: hub.url` is the endpoint to give the library."""

    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.repos: dict[str, Repo] = {}
        self.lfs: dict[str, bytes] = {}  # uploaded LFS objects by sha256
        self.uploads: list[str] = []  # sha256 of every LFS PUT, in order
        self.commit_bodies: list[list[dict[str, Any]]] = []  # each commit's NDJSON lines
        self.log: list[Logged] = []
        self._faults: list[list[Any]] = []  # [method, prefix, status, times left]
        self._lock = threading.RLock()
        self._httpd = _Server(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def fail(self, method: str, prefix: str, status: int, times: int = 1_000_000) -> None:
        self._faults.append([method, prefix, status, times])

    def requests(self, method: str | None = None, contains: str = "") -> list[Logged]:
        return [r for r in self.log if (method is None or r.method == method)
                and contains in r.path]

    def tree(self, repo_id: str, rev: str = "main") -> dict[str, Blob]:
        commit = self.repos[repo_id].resolve(rev)
        assert commit is not None, f"{repo_id}@{rev}: no such revision"
        return dict(commit.tree)

    # -- the Hub's routes ----------------------------------------------------------------
    def handle(self, method: str, path: str, query: dict[str, list[str]],
               headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            for fault in self._faults:
                if fault[0] == method and path.startswith(fault[1]) and fault[3] > 0:
                    fault[3] -= 1
                    return _json(fault[2], {"error": f"injected {fault[2]}"})
            if path.startswith("/lfs-upload/") and method == "PUT":
                return self._lfs_put(path.rsplit("/", 1)[1], body)
            if path.startswith("/lfs-verify/") and method == "POST":
                return self._lfs_verify(json.loads(body))
            if not self._authorized(headers):
                return _json(401, {"error": "Invalid credentials in Authorization header"})
            if path == "/api/whoami-v2":
                return _json(200, {"type": "user", "name": "tester", "auth": {}})
            if path == "/api/validate-yaml" and method == "POST":
                return _json(200, {"errors": [], "warnings": []})
            if path == "/api/repos/create" and method == "POST":
                return self._create(json.loads(body))
            if path.startswith("/api/datasets/"):
                return self._api(method, path[len("/api/datasets/"):], query, body)
            if path.startswith("/datasets/"):
                return self._git(method, path[len("/datasets/"):], body)
            return _json(404, {"error": f"no route {method} {path}"})

    def _authorized(self, headers: dict[str, str]) -> bool:
        auth = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
        return auth == f"Bearer {self.token}"

    def _create(self, payload: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        if payload.get("type") != "dataset":
            return _json(400, {"error": "this fake Hub holds dataset repositories only"})
        repo_id = f"{payload['organization']}/{payload['name']}"
        if repo_id in self.repos:
            return _json(409, {"error": "You already created this dataset repo",
                               "url": f"{self.url}/datasets/{repo_id}"})
        repo = Repo(repo_id, payload.get("visibility") == "private")
        self.repos[repo_id] = repo
        self._commit(repo, None, "initial commit", "",
                     {".gitattributes": Blob(GITATTRIBUTES, lfs=False)})
        return _json(200, {"url": f"{self.url}/datasets/{repo_id}", "name": repo_id})

    def _commit(self, repo: Repo, parent: str | None, title: str, description: str,
                tree: dict[str, Blob]) -> Commit:
        h = hashlib.sha1(json.dumps([parent, title, description,
                                     sorted((p, b.sha256) for p, b in tree.items())]).encode())
        oid = h.hexdigest()
        repo.commits[oid] = Commit(oid, parent, title, description, tree)
        repo.branches["main"] = oid
        return repo.commits[oid]

    def _split(self, rest: str) -> tuple[Repo | None, str, list[str]]:
        """`owner/name/verb/...` -> (repo, verb, the rest split on /)."""
        parts = rest.split("/")
        if len(parts) < 2:
            return None, "", []
        repo = self.repos.get(f"{parts[0]}/{parts[1]}")
        return repo, (parts[2] if len(parts) > 2 else ""), parts[3:]

    def _api(self, method: str, rest: str, query: dict[str, list[str]], body: bytes
             ) -> tuple[int, dict[str, str], bytes]:
        repo, verb, tail = self._split(rest)
        if repo is None:
            return _json(404, {"error": "Repository not found"},
                         {"X-Error-Code": "RepoNotFound"})
        rev = unquote(tail[0]) if tail else "main"
        if verb == "refs":
            return _json(200, {"branches": [_ref("heads", n, o) for n, o in repo.branches.items()],
                               "converts": [],
                               "tags": [_ref("tags", n, o) for n, o in repo.tags.items()]})
        if verb in ("", "revision"):
            commit = repo.resolve(rev)
            if commit is None:
                return _no_revision(rev)
            return _json(200, {"id": repo.repo_id, "sha": commit.oid, "private": repo.private,
                               "siblings": [{"rfilename": p} for p in sorted(commit.tree)]})
        if verb == "tree" and method == "GET":
            return self._tree(repo, rev, "/".join(tail[1:]), query)
        if verb == "paths-info" and method == "POST":
            commit = repo.resolve(rev)
            if commit is None:
                return _no_revision(rev)
            form = parse_qs(body.decode())
            wanted = form.get("paths", [])
            return _json(200, [b.entry(p) for p, b in sorted(commit.tree.items())
                               if p in wanted])
        if verb == "preupload" and method == "POST":
            commit = repo.resolve(rev)
            files = json.loads(body)["files"]
            out = []
            for f in files:
                sample = base64.b64decode(f["sample"])
                lfs = f["path"].endswith(".parquet") or b"\0" in sample or f["size"] > 10 << 20
                there = commit.tree.get(f["path"]) if commit else None
                oid = None
                if there is not None:
                    oid = there.sha256 if there.lfs else git_blob_sha1(there.data)
                out.append({"path": f["path"], "uploadMode": "lfs" if lfs else "regular",
                            "shouldIgnore": False, "oid": oid})
            return _json(200, {"files": out, "commitOid": commit.oid if commit else None})
        if verb == "commit" and method == "POST":
            return self._post_commit(repo, rev, body)
        if verb == "tag" and method == "POST":
            payload = json.loads(body)
            commit = repo.resolve(rev)
            if commit is None:
                return _no_revision(rev)
            if payload["tag"] in repo.tags:
                return _json(409, {"error": f"Tag {payload['tag']} already exists"})
            repo.tags[payload["tag"]] = commit.oid
            return _json(200, {})
        return _json(404, {"error": f"no route {method} /api/datasets/{rest}"})

    def _tree(self, repo: Repo, rev: str, under: str, query: dict[str, list[str]]
              ) -> tuple[int, dict[str, str], bytes]:
        commit = repo.resolve(rev)
        if commit is None:
            return _no_revision(rev)
        recursive = query.get("recursive", ["False"])[0].lower() == "true"
        prefix = f"{under.strip('/')}/" if under.strip("/") else ""
        entries: dict[str, dict[str, Any]] = {}
        for path, blob in sorted(commit.tree.items()):
            if not path.startswith(prefix):
                continue
            parts = path[len(prefix):].split("/")
            for depth in range(1, len(parts)):
                folder = prefix + "/".join(parts[:depth])
                if recursive or depth == 1:
                    entries.setdefault(folder, {"type": "directory", "path": folder,
                                                "oid": hashlib.sha1(folder.encode()).hexdigest()})
            if recursive or len(parts) == 1:
                entries[path] = blob.entry(path)
        return _json(200, list(entries.values()))

    def _post_commit(self, repo: Repo, rev: str, body: bytes
                     ) -> tuple[int, dict[str, str], bytes]:
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        self.commit_bodies.append(lines)
        header = lines[0]["value"]
        head = repo.branches.get(rev)
        if head is None:
            return _no_revision(rev)
        if header.get("parentCommit") not in (None, head):
            return _json(412, {"error": "A commit has happened since. Please refresh and "
                                        "try again."})
        tree = dict(repo.commits[head].tree)
        for line in lines[1:]:
            value = line["value"]
            if line["key"] == "file":
                tree[value["path"]] = Blob(base64.b64decode(value["content"]), lfs=False)
            elif line["key"] == "lfsFile":
                data = self.lfs.get(value["oid"])
                if data is None:
                    return _json(400, {"error": f"LFS object {value['oid']} was never uploaded"})
                tree[value["path"]] = Blob(data, lfs=True)
            elif line["key"] == "deletedFile":
                if tree.pop(value["path"], None) is None:
                    return _json(404, {"error": "A file with this name doesn't exist"},
                                 {"X-Error-Code": "EntryNotFound"})
            else:
                return _json(400, {"error": f"this fake Hub does not speak {line['key']}"})
        commit = self._commit(repo, head, header["summary"], header.get("description", ""),
                              tree)
        return _json(200, {"commitOid": commit.oid,
                           "commitUrl": f"{self.url}/datasets/{repo.repo_id}/commit/{commit.oid}"})

    def _git(self, method: str, rest: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        if ".git/info/lfs/objects/batch" in rest and method == "POST":
            return self._lfs_batch(json.loads(body))
        repo, verb, tail = self._split(rest)
        if repo is None:
            return _json(404, {"error": "Repository not found"},
                         {"X-Error-Code": "RepoNotFound"})
        if verb == "resolve" and method in ("GET", "HEAD") and len(tail) >= 2:
            commit = repo.resolve(unquote(tail[0]))
            if commit is None:
                return _no_revision(tail[0])
            path = unquote("/".join(tail[1:]))
            blob = commit.tree.get(path)
            if blob is None:
                return _json(404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound"})
            headers = {"X-Repo-Commit": commit.oid, "Content-Type": "application/octet-stream"}
            if blob.lfs:
                headers["X-Linked-Etag"] = f'"{blob.sha256}"'
                headers["X-Linked-Size"] = str(len(blob.data))
                headers["ETag"] = f'"{blob.sha256}"'
            else:
                headers["ETag"] = f'"{git_blob_sha1(blob.data)}"'
            return 200, headers, blob.data
        return _json(404, {"error": f"no route {method} /datasets/{rest}"})

    def _lfs_batch(self, payload: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        objects = []
        for obj in payload["objects"]:
            entry: dict[str, Any] = {"oid": obj["oid"], "size": obj["size"]}
            if obj["oid"] not in self.lfs:
                entry["actions"] = {
                    "upload": {"href": f"{self.url}/lfs-upload/{obj['oid']}"},
                    "verify": {"href": f"{self.url}/lfs-verify/{obj['oid']}"}}
            objects.append(entry)
        return _json(200, {"transfer": "basic", "objects": objects},
                     {"Content-Type": "application/vnd.git-lfs+json"})

    def _lfs_put(self, oid: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        if hashlib.sha256(body).hexdigest() != oid:
            return _json(400, {"error": "the body's sha256 is not the object's"})
        self.lfs[oid] = body
        self.uploads.append(oid)
        return 200, {}, b""

    def _lfs_verify(self, payload: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        data = self.lfs.get(payload["oid"])
        if data is None or len(data) != payload["size"]:
            return _json(404, {"error": "object not found"})
        return _json(200, {})


def _ref(kind: str, name: str, oid: str) -> dict[str, str]:
    return {"name": name, "ref": f"refs/{kind}/{name}", "targetCommit": oid}


def _no_revision(rev: str) -> tuple[int, dict[str, str], bytes]:
    return _json(404, {"error": f"Invalid rev id: {rev}"}, {"X-Error-Code": "RevisionNotFound"})


def _json(status: int, obj: Any, headers: dict[str, str] | None = None
          ) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json", **(headers or {})}, \
        json.dumps(obj).encode()


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class _H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                body = self._chunked()
            status, headers, data = hub.handle(self.command, parts.path, parse_qs(parts.query),
                                               dict(self.headers), body)
            hub.log.append(Logged(self.command, parts.path, status))
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _chunked(self) -> bytes:
            out = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()

        do_GET = do_HEAD = do_POST = do_PUT = _serve  # noqa: N815 (http.server's naming)

    return _H
