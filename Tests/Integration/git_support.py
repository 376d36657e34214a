"""A git server over HTTPS for the integration tests: `git http-backend` (git's own smart
HTTP CGI program) behind a small Python HTTPS server with a CA of its own, serving a bare
repository with one commit. It wants `Authorization: Bearer TOKEN` and answers 401
otherwise, so a clone or ls-remote works only with the credential.

    git = GitServer(Certs(tmp_path / "pki"), tmp_path / "git")
    git.url          # https://localhost:PORT (the certificate names localhost and 127.0.0.1)
    git.ca.cert      # its CA, for GIT_SSL_CAINFO or a route's upstream.ca_file
    git.head         # the one commit's id; the branch is refs/heads/main
    git.git("ls-remote", git.url + "/repo.git", extra_header=...)
"""

from __future__ import annotations

import os
import subprocess
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from support import TOKEN
from tls_support import Certs, HTTPSTestServer

REPO_NAME = "repo.git"
BRANCH = "main"

# What git needs to commit and to run without the user's own configuration.
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
    "GIT_AUTHOR_NAME": "Latchkey tests", "GIT_AUTHOR_EMAIL": "tests@latchkey.invalid",
    "GIT_COMMITTER_NAME": "Latchkey tests", "GIT_COMMITTER_EMAIL": "tests@latchkey.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
}


def git_environment(extra: dict | None = None) -> dict:
    """This process's environment with git kept away from the user's configuration."""
    env = dict(os.environ)
    env.update(GIT_ENV)
    env.update(extra or {})
    return env


def run_git(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, env=git_environment(env), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def _must(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, f"{done.args}: {done.stderr}"
    return done.stdout


class _GitHandler(BaseHTTPRequestHandler):
    """Checks the bearer token, then hands the request to `git http-backend` as CGI
    (RFC 3875) and relays its answer."""
    protocol_version = "HTTP/1.1"

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(body)
                body += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, fields: list, body: bytes) -> None:
        self.send_response(status)
        for name, value in fields:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _answer(self) -> None:
        body = self._body()
        self.server.seen.append({"method": self.command, "path": self.path,
                                 "authorization": self.headers.get("Authorization")})
        if self.headers.get("Authorization") != f"Bearer {self.server.token}":
            self._send(401, [("WWW-Authenticate", 'Bearer realm="git"'), ("Content-Type", "text/plain")],
                       b"a bearer token is required\n")
            return
        path, _, query = self.path.partition("?")
        env = git_environment({
            "GIT_PROJECT_ROOT": str(self.server.root), "GIT_HTTP_EXPORT_ALL": "1",
            "GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": self.command, "PATH_INFO": path,
            "QUERY_STRING": query, "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)), "REMOTE_ADDR": self.client_address[0], "REMOTE_USER": "tests",
        })
        for name in ("Git-Protocol", "Content-Encoding"):
            if self.headers.get(name):
                env["HTTP_" + name.upper().replace("-", "_")] = self.headers[name]
        done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, timeout=30)
        head, blank, out = done.stdout.partition(b"\r\n\r\n")
        if not blank:
            head, blank, out = done.stdout.partition(b"\n\n")
        status, fields = 200, []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                fields.append((name, value.strip()))
        if done.returncode != 0 and not head:
            status, fields, out = 500, [("Content-Type", "text/plain")], done.stderr
        self._send(status, fields, out)

    do_GET = do_POST = _answer

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


class GitServer(HTTPSTestServer):
    """`git http-backend` over HTTPS on 127.0.0.1, serving `repo.git` (one commit on main)."""

    def __init__(self, certs: Certs, directory: Path, token: str = TOKEN):
        directory.mkdir(parents=True, exist_ok=True)
        self.root = directory / "served"
        self.root.mkdir()
        bare = self.root / REPO_NAME
        work = directory / "work"
        _must(run_git("init", "-q", "--bare", "-b", BRANCH, str(bare)))
        _must(run_git("init", "-q", "-b", BRANCH, str(work)))
        (work / "README").write_text("served by git http-backend for the Latchkey tests\n")
        _must(run_git("add", "README", cwd=work))
        _must(run_git("commit", "-q", "-m", "The one commit", cwd=work))
        _must(run_git("push", "-q", str(bare), BRANCH, cwd=work))
        self.head = _must(run_git("rev-parse", "HEAD", cwd=work)).strip()

        super().__init__(certs, _GitHandler, "git-ca")
        self.server.root = self.root
        self.server.token = token
        self.start()
