#!/usr/bin/env python3
"""The demo's identity provider and API in one small server: Python standard library only.

It is what Latchkey exists for in miniature: an API that wants a short-lived bearer token,
and an OAuth2 token endpoint that issues one and rotates its refresh tokens.

  POST /oauth/token     RFC 6749 token endpoint: grant_type password (user `demo`, password
                        `demo-password`), refresh_token and client_credentials; client
                        `demo-client` with secret `demo-secret` (HTTP Basic or in the form).
                        Access tokens live --access-token-seconds (default 5). Refresh tokens
                        rotate: each one works once, and a used one is `invalid_grant`.
  POST /oauth/revoke    RFC 7009 revocation (token, token_type_hint), same client.
  GET  /api/me          who the token belongs to, and the credential as it arrived (masked)
  GET  /api/items       a small list
  POST /api/notes       reads the body and answers its size and SHA-256, so that a replayed
                        request can be seen to arrive whole
  Every /api/ request without a current token gets 401 with
  `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750 §3.1).
  GET  /health          200
  GET  /_demo/stats     what happened, for the demo's lines: token requests by grant,
                        refused token requests, API requests and refusals
  POST /_demo/revoke    the API forgets every access token it issued (refresh tokens stay), as
                        when a user changes their password elsewhere

These credentials are the demo's own, published here: never use them for anything else.

Usage: sample-oauth-api.py [--listen HOST:PORT] [--access-token-seconds N] [--port-file FILE] [--quiet]
  --listen defaults to 127.0.0.1:9000; port 0 binds a free port, written to --port-file.
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import secrets
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

CLIENT_ID = "demo-client"
CLIENT_SECRET = "demo-secret"
USERNAME = "demo"
PASSWORD = "demo-password"
MAX_BODY = 16 * 1024 * 1024

ITEMS = [
    {"id": 1, "name": "latch", "stock": 12},
    {"id": 2, "name": "key", "stock": 40},
    {"id": 3, "name": "hinge", "stock": 7},
]


def mask(credential: str) -> str:
    """Enough of a credential to recognise it, never all of it."""
    scheme, _, value = credential.partition(" ")
    return f"{scheme} {value[:6]}…{value[-4:]}" if len(value) > 16 else f"{scheme} …"


class Authority:
    """Tokens and counters, shared by the server's threads."""

    def __init__(self, access_token_seconds: float):
        self.lifetime = access_token_seconds
        self.lock = threading.Lock()
        self.access = {}    # token -> (subject, expires_at)
        self.refresh = {}   # token -> subject; removed when used (rotation)
        self.stats = {
            "token_requests": {"total": 0},
            "token_errors": {},
            "api": {"requests": 0, "refused": 0},
            "revocations": 0,
        }

    def count(self, section: str, key: str):
        bucket = self.stats[section]
        bucket[key] = bucket.get(key, 0) + 1

    def issue(self, subject: str, with_refresh: bool) -> dict:
        access = "demo-at-" + secrets.token_urlsafe(24)
        answer = {"access_token": access, "token_type": "Bearer", "expires_in": self.lifetime}
        self.access[access] = (subject, time.monotonic() + self.lifetime)
        if with_refresh:
            refresh = "demo-rt-" + secrets.token_urlsafe(24)
            self.refresh[refresh] = subject
            answer["refresh_token"] = refresh
        return answer

    def grant(self, form: dict) -> tuple[int, dict]:
        """RFC 6749 §4.3, §4.4, §6; errors as §5.2 says."""
        kind = form.get("grant_type", "")
        with self.lock:
            self.stats["token_requests"]["total"] += 1
            self.count("token_requests", kind or "none")
            if kind == "password":
                if form.get("username") != USERNAME or form.get("password") != PASSWORD:
                    return self.error(400, "invalid_grant", "wrong username or password")
                return 200, self.issue(USERNAME, with_refresh=True)
            if kind == "refresh_token":
                subject = self.refresh.pop(form.get("refresh_token", ""), None)
                if subject is None:
                    return self.error(400, "invalid_grant", "the refresh token is unknown or was used already")
                return 200, self.issue(subject, with_refresh=True)
            if kind == "client_credentials":
                return 200, self.issue(CLIENT_ID, with_refresh=False)
            return self.error(400, "unsupported_grant_type", f"grant_type {kind!r} is not supported")

    def error(self, status: int, code: str, description: str) -> tuple[int, dict]:
        self.count("token_errors", code)
        return status, {"error": code, "error_description": description}

    def revoke(self, token: str):
        with self.lock:
            self.stats["revocations"] += 1
            self.access.pop(token, None)
            self.refresh.pop(token, None)

    def revoke_access_tokens(self) -> int:
        with self.lock:
            count = len(self.access)
            self.access.clear()
            return count

    def subject(self, authorization: list[str]) -> str | None:
        """The token's subject when the request carries exactly one current bearer token."""
        with self.lock:
            self.stats["api"]["requests"] += 1
            if len(authorization) == 1 and authorization[0].startswith("Bearer "):
                entry = self.access.get(authorization[0][len("Bearer "):])
                if entry and time.monotonic() < entry[1]:
                    return entry[0]
            self.stats["api"]["refused"] += 1
            return None

    def snapshot(self) -> dict:
        with self.lock:
            return json.loads(json.dumps(self.stats))


def client_authenticated(headers, form: dict) -> bool:
    """client_secret_basic (RFC 6749 §2.3.1) or client_secret_post."""
    basic = headers.get("Authorization", "")
    if basic.startswith("Basic "):
        try:
            client, _, secret = base64.b64decode(basic[6:], validate=True).decode().partition(":")
        except ValueError:
            return False
    else:
        client, secret = form.get("client_id", ""), form.get("client_secret", "")
    return client == CLIENT_ID and hmac.compare_digest(secret.encode(), CLIENT_SECRET.encode())


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "sample-oauth-api/1"
    sys_version = ""

    def log_message(self, fmt, *args):
        if not self.server.quiet:
            sys.stderr.write("sample-oauth-api: %s\n" % (fmt % args))

    def send_json(self, status: int, body: dict, extra=()):
        data = (json.dumps(body, indent=2) + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def body(self) -> bytes | None:
        length = self.headers.get("Content-Length")
        if length is None:
            return b""
        if not length.isdigit() or int(length) > MAX_BODY:
            self.send_json(413, {"error": "payload_too_large"})
            self.close_connection = True
            return None
        return self.rfile.read(int(length))

    def form(self) -> dict | None:
        raw = self.body()
        if raw is None:
            return None
        fields = parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True)
        return {name: values[0] for name, values in fields.items()}

    def api_subject(self) -> str | None:
        subject = self.server.authority.subject(self.headers.get_all("Authorization") or [])
        if subject is None:
            self.send_json(401, {"error": "invalid_token", "message": "this API needs a current bearer token"},
                           extra=[("WWW-Authenticate", 'Bearer realm="sample-api", error="invalid_token"')])
        return subject

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/health":
            return self.send_json(200, {"status": "ok"})
        if path == "/_demo/stats":
            return self.send_json(200, self.server.authority.snapshot())
        if not path.startswith("/api/"):
            return self.send_json(404, {"error": "not_found"})
        subject = self.api_subject()
        if subject is None:
            return
        if path == "/api/me":
            credential = self.headers.get("Authorization", "")
            return self.send_json(200, {"user": subject, "authorization_received": mask(credential)})
        if path == "/api/items":
            return self.send_json(200, {"items": ITEMS})
        return self.send_json(404, {"error": "not_found"})

    do_HEAD = do_GET

    def do_POST(self):
        path = self.path.split("?", 1)[0]
        authority = self.server.authority
        if path in ("/oauth/token", "/oauth/revoke"):
            form = self.form()
            if form is None:
                return
            if not client_authenticated(self.headers, form):
                with authority.lock:
                    authority.count("token_errors", "invalid_client")
                return self.send_json(401, {"error": "invalid_client", "error_description": "unknown client or wrong secret"},
                                      extra=[("WWW-Authenticate", 'Basic realm="sample-oauth-api"')])
            if path == "/oauth/revoke":
                authority.revoke(form.get("token", ""))
                return self.send_json(200, {})
            status, answer = authority.grant(form)
            return self.send_json(status, answer)
        if path == "/_demo/revoke":
            if self.body() is None:
                return
            return self.send_json(200, {"revoked_access_tokens": authority.revoke_access_tokens()})
        if path == "/api/notes":
            # The body is read before the token is checked: a refused request's body must not
            # be left on the connection.
            data = self.body()
            if data is None or self.api_subject() is None:
                return
            return self.send_json(200, {"received_bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})
        self.body()
        return self.send_json(404, {"error": "not_found"})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", default="127.0.0.1:9000", help="HOST:PORT (port 0: any free port)")
    parser.add_argument("--access-token-seconds", type=float, default=5.0)
    parser.add_argument("--port-file", help="write the bound port here once listening")
    parser.add_argument("--quiet", action="store_true", help="no request log")
    args = parser.parse_args()
    host, _, port = args.listen.rpartition(":")
    if not host or not port.isdigit():
        parser.error(f"--listen wants HOST:PORT, not {args.listen!r}")
    try:
        server = ThreadingHTTPServer((host.strip("[]"), int(port)), Handler)
    except OSError as error:
        sys.exit(f"sample-oauth-api: cannot listen on {args.listen}: {error.strerror}")
    server.daemon_threads = True
    server.authority = Authority(args.access_token_seconds)
    server.quiet = args.quiet
    bound = server.server_address[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(bound))
        os.replace(args.port_file + ".tmp", args.port_file)
    sys.stderr.write(f"sample-oauth-api listening address={host}:{bound} access_token_seconds={args.access_token_seconds:g}\n")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
