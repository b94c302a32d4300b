"""A Hugging Face-compatible hub on a loopback port, for the pull tests.

It answers the requests huggingface_hub (2.x, the installed release) makes for
``model_info``, ``snapshot_download`` and ``hf_hub_download`` into a local folder:

- ``GET /api/models/{repo}`` and ``/api/models/{repo}/revision/{rev}``: the model info, with
  ``sha`` (the commit) and ``siblings``;
- ``GET /api/models/{repo}/tree/{rev}``: the file listing (``type``, ``path``, ``size``,
  ``oid``), in one page;
- ``HEAD /{repo}/resolve/{rev}/{path}``: ``ETag``, ``X-Repo-Commit`` and ``Content-Length``;
- ``GET`` of the same URL, whole (200) or from a ``Range: bytes=N-`` (206).

Errors carry the hub's ``X-Error-Code`` header, which huggingface_hub turns into its exception
types: ``RepoNotFound`` (404), ``EntryNotFound`` (404), ``GatedRepo`` (401 without a token,
403 with a token that was not granted access). Every request is recorded, and a file can be
made to break off after some bytes once (``drop_once``) or to stall there until released
(``stall``), to test resuming.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

_INFO = re.compile(r"/api/models/(?P<repo>.+?)(?:/revision/(?P<rev>[^/]+))?")
_TREE = re.compile(r"/api/models/(?P<repo>.+?)/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?")
_RESOLVE = re.compile(r"/(?P<repo>.+?)/resolve/(?P<rev>[^/]+)/(?P<path>.+)")
_RANGE = re.compile(r"bytes=(?P<start>\d+)-")


@dataclass
class Repo:
    files: dict[str, bytes]
    sha: str = field(default_factory=lambda: secrets.token_hex(20))
    gated: bool = False


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: Mapping[str, str]
    """Header names in lower case."""


@dataclass
class Stall:
    """A file whose next GET stops after ``after`` bytes until ``release`` is set."""

    after: int
    reached: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


class FakeHub:
    def __init__(self, token: str = "hf_test_token") -> None:
        self.token = token
        self.repos: dict[str, Repo] = {}
        self.requests: list[Request] = []
        self._drops: dict[tuple[str, str], int] = {}
        self._stalls: dict[tuple[str, str], Stall] = {}
        self._lock = threading.Lock()
        hub = self

        class Handler(_Handler):
            pass

        Handler.hub = hub
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-hub")

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeHub:
        self._thread.start()
        return self

    def close(self) -> None:
        for stall in self._stalls.values():
            stall.release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def add_repo(self, repo_id: str, files: Mapping[str, bytes], *, gated: bool = False) -> Repo:
        repo = Repo(dict(files), gated=gated)
        self.repos[repo_id] = repo
        return repo

    def drop_once(self, repo_id: str, path: str, after: int) -> None:
        """The next GET of the file sends ``after`` bytes of it, then closes the connection."""
        self._drops[(repo_id, path)] = after

    def stall(self, repo_id: str, path: str, after: int) -> Stall:
        stall = Stall(after)
        self._stalls[(repo_id, path)] = stall
        return stall

    def file_gets(self, repo_id: str, path: str) -> list[Request]:
        """The GETs of one file (not its HEADs)."""
        suffix = f"/{path}"
        with self._lock:
            return [
                r
                for r in self.requests
                if r.method == "GET" and "/resolve/" in r.path and r.path.endswith(suffix)
                and r.path.startswith(f"/{repo_id}/resolve/")
            ]  # fmt: skip

    def downloads(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.method == "GET" and "/resolve/" in r.path]

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)


class _Handler(BaseHTTPRequestHandler):
    hub: FakeHub
    server_version = "FakeHub/1.0"

    def log_message(self, format: str, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._answer(head=False)

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def _answer(self, head: bool) -> None:
        path = unquote(urlsplit(self.path).path)
        headers = {key.lower(): value for key, value in self.headers.items()}
        self.hub._record(Request(self.command, path, headers))
        if (match := _TREE.fullmatch(path)) and not head:
            self._tree(match["repo"], match["rev"])
        elif (match := _INFO.fullmatch(path)) and not head:
            self._info(match["repo"], match["rev"])
        elif match := _RESOLVE.fullmatch(path):
            self._file(match["repo"], match["rev"], match["path"], head)
        else:
            self._error(404, "RepoNotFound", "Not found")

    def _repo(self, repo_id: str, rev: str | None) -> Repo | None:
        repo = self.hub.repos.get(repo_id)
        if repo is None:
            self._error(404, "RepoNotFound", "Repository not found")
            return None
        if rev not in (None, "main", repo.sha):
            self._error(404, "RevisionNotFound", "Invalid rev id")
            return None
        return repo

    def _info(self, repo_id: str, rev: str | None) -> None:
        repo = self._repo(repo_id, rev)
        if repo is None:
            return
        self._json(
            {
                "_id": repo_id,
                "id": repo_id,
                "modelId": repo_id,
                "sha": repo.sha,
                "private": False,
                "gated": "manual" if repo.gated else False,
                "disabled": False,
                "siblings": [{"rfilename": name} for name in sorted(repo.files)],
            }
        )

    def _tree(self, repo_id: str, rev: str) -> None:
        repo = self._repo(repo_id, rev)
        if repo is None:
            return
        self._json(
            [
                {
                    "type": "file",
                    "path": name,
                    "size": len(data),
                    "oid": hashlib.sha1(data).hexdigest(),
                }
                for name, data in sorted(repo.files.items())
            ]
        )

    def _file(self, repo_id: str, rev: str, name: str, head: bool) -> None:
        repo = self._repo(repo_id, rev)
        if repo is None:
            return
        if repo.gated:
            given = self.headers.get("Authorization")
            if given is None:
                self._error(401, "GatedRepo", f"Access to model {repo_id} is restricted.")
                return
            if given != f"Bearer {self.hub.token}":
                self._error(403, "GatedRepo", f"Access to model {repo_id} is restricted.")
                return
        data = repo.files.get(name)
        if data is None:
            self._error(404, "EntryNotFound", f"{name} does not exist on main")
            return
        start = 0
        wanted = _RANGE.fullmatch(self.headers.get("Range", ""))
        if wanted and not head:
            start = int(wanted["start"])
        self.send_response(206 if start else 200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
        self.send_header("X-Repo-Commit", repo.sha)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(len(data) - start))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        if head:
            return
        key = (repo_id, name)
        drop = self.hub._drops.pop(key, None)
        stall = self.hub._stalls.pop(key, None)
        if drop is not None or stall is not None:
            end = drop if drop is not None else stall.after
            self.wfile.write(data[start:end])
            self.wfile.flush()
            if stall is not None:
                stall.reached.set()
                stall.release.wait(timeout=60)
            self.close_connection = True
            return
        self.wfile.write(data[start:])

    def _json(self, value: object) -> None:
        body = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, code: str, message: str) -> None:
        body = json.dumps({"error": message}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Error-Code", code)
        self.send_header("X-Error-Message", message)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
