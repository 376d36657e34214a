"""What the emulated identity providers share: a threaded loopback HTTP server that hands
parsed requests to a handler method, request counters, and a book of issued tokens with
expiry and refresh-token rotation."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Request:
    method: str
    path: str
    query: dict
    headers: dict  # lower-cased names
    body: bytes
    raw_query: str = ""  # as it came, with repeated names and their order

    @property
    def params(self) -> dict:
        """The body's form fields or JSON object (token endpoints of Auth0 take either)."""
        ctype = self.headers.get("content-type", "")
        if ctype.startswith("application/json"):
            try:
                value = json.loads(self.body or b"{}")
            except ValueError:
                return {}
            return {k: str(v) for k, v in value.items() if v is not None} if isinstance(value, dict) else {}
        return dict(urllib.parse.parse_qsl(self.body.decode("utf-8", errors="replace"), keep_blank_values=True))

    def authorization(self) -> tuple[str, str]:
        """(scheme lower-cased, credentials) of the Authorization header; ("", "") if absent."""
        scheme, _, credentials = self.headers.get("authorization", "").strip().partition(" ")
        return scheme.lower(), credentials.strip()

    def basic_client(self) -> tuple[str, str] | None:
        """client_secret_basic (RFC 6749 §2.3.1): form-urlencoded id and secret in Basic."""
        scheme, credentials = self.authorization()
        if scheme != "basic":
            return None
        try:
            decoded = base64.b64decode(credentials, validate=True).decode()
        except ValueError:
            return None
        client_id, _, secret = decoded.partition(":")
        return urllib.parse.unquote_plus(client_id), urllib.parse.unquote_plus(secret)

    def describe(self) -> dict:
        """What an API echo answers about the request: enough to check a replayed body."""
        return {
            "method": self.method,
            "path": self.path,
            "query": urllib.parse.urlencode(self.query),
            "content_type": self.headers.get("content-type", ""),
            "body": self.body.decode("utf-8", errors="replace"),
            "body_length": len(self.body),
            "body_sha256": hashlib.sha256(self.body).hexdigest(),
        }


@dataclass
class Reply:
    status: int
    body: object = None  # dict or list: JSON; str or bytes: text
    headers: list = field(default_factory=list)


class EmulatedServer:
    """Serves `self.handle(Request) -> Reply` on an ephemeral loopback port, one thread per
    connection, until close(). Subclasses count what they like with self.count(name)."""

    name = "emulation"

    def __init__(self):
        self._lock = threading.Lock()
        self._counts: Counter = Counter()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the real services offer

            def _body(self) -> bytes:
                # A proxy may stream a request body chunked (RFC 9112 §7.1).
                if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                    chunks = []
                    while size := int(self.rfile.readline().split(b";")[0].strip(), 16):
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # trailer section
                        pass
                    return b"".join(chunks)
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else b""

            def _serve(self):
                split = urllib.parse.urlsplit(self.path)
                request = Request(method=self.command, path=split.path,
                                  query=dict(urllib.parse.parse_qsl(split.query, keep_blank_values=True)),
                                  headers={k.lower(): v for k, v in self.headers.items()},
                                  body=self._body(), raw_query=split.query)
                reply = owner.handle(request)
                body = reply.body
                if isinstance(body, (dict, list)):
                    payload, ctype = json.dumps(body).encode(), "application/json; charset=utf-8"
                elif body is None:
                    payload, ctype = b"", None
                else:
                    payload, ctype = body.encode() if isinstance(body, str) else body, "text/plain; charset=utf-8"
                self.send_response(reply.status)
                if ctype and not any(k.lower() == "content-type" for k, _ in reply.headers):
                    self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("Cache-Control", "no-store")
                for k, v in reply.headers:
                    self.send_header(k, v)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _serve

            def log_message(self, *args):  # the tests read counters, not access logs
                pass

        class Server(ThreadingHTTPServer):
            request_queue_size = 1024  # above the 200 concurrent requests of the storm tests

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, name=f"emulation-{self.name}",
                                        daemon=True)
        self._thread.start()

    def handle(self, request: Request) -> Reply:
        raise NotImplementedError

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # ----- counters -----------------------------------------------------------------------

    def count(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    def counters(self) -> dict:
        """{"token": {"total": N, GRANT_TYPE: n, ...}, OTHER: n, ...}, as the Django IdP's."""
        with self._lock:
            token = {k[len("token:"):]: v for k, v in self._counts.items() if k.startswith("token:")}
            out = {k: v for k, v in self._counts.items() if not k.startswith("token:")}
        token["total"] = sum(token.values())
        out["token"] = token
        return out

    def token_requests(self, grant_type: str | None = None) -> int:
        token = self.counters()["token"]
        return token["total"] if grant_type is None else token.get(grant_type, 0)

    def reset_counters(self) -> None:
        with self._lock:
            self._counts.clear()


@dataclass
class Issued:
    """An access token and whom it stands for."""
    subject: dict
    expires_at: float
    invalid: bool = False


class TokenBook:
    """Access tokens with a lifetime and refresh tokens that rotate: a refresh token works
    once; presenting a used one again revokes its whole family (refresh-token reuse
    detection, RFC 9700 §4.14.2), as Auth0 does with rotation on. Thread-safe."""

    def __init__(self, access_token_seconds: int, make_access_token=None):
        self.access_token_seconds = access_token_seconds
        self._make_access_token = make_access_token or (lambda subject, expires_at: secrets.token_urlsafe(24))
        self._lock = threading.Lock()
        self._access: dict[str, Issued] = {}
        self._refresh: dict[str, tuple[dict, str]] = {}  # live token -> (subject, family)
        self._used: dict[str, str] = {}  # rotated-away token -> family

    def issue(self, subject: dict, refresh: bool = True, family: str | None = None) -> dict:
        """A token response body: access_token, expires_in and (if refresh) refresh_token."""
        expires_at = time.time() + self.access_token_seconds
        access = self._make_access_token(subject, expires_at)
        out = {"access_token": access, "expires_in": self.access_token_seconds}
        with self._lock:
            self._access[access] = Issued(subject, expires_at)
            if refresh:
                token = secrets.token_urlsafe(24)
                self._refresh[token] = (subject, family or secrets.token_hex(8))
                out["refresh_token"] = token
        return out

    def access(self, token: str) -> tuple[str, dict | None]:
        """("valid" | "expired" | "invalid", subject or None)."""
        with self._lock:
            issued = self._access.get(token)
        if issued is None or issued.invalid:
            return "invalid", None
        if time.time() >= issued.expires_at:
            return "expired", issued.subject
        return "valid", issued.subject

    def rotate(self, refresh_token: str) -> tuple[dict, dict] | None:
        """Consumes a refresh token; returns (subject, new token response), or None for
        invalid_grant."""
        with self._lock:
            live = self._refresh.pop(refresh_token, None)
            if live is None:
                family = self._used.get(refresh_token)
                if family is not None:
                    self._revoke_family(family)
                return None
            subject, family = live
            self._used[refresh_token] = family
        return subject, self.issue(subject, family=family)

    def revoke_refresh(self, refresh_token: str | None = None) -> int:
        """Revokes one refresh token's family, or every refresh token; returns how many."""
        with self._lock:
            if refresh_token is None:
                count = len(self._refresh)
                self._refresh.clear()
                return count
            live = self._refresh.get(refresh_token)
            return self._revoke_family(live[1]) if live else 0

    def _revoke_family(self, family: str) -> int:
        doomed = [t for t, (_, f) in self._refresh.items() if f == family]
        for t in doomed:
            del self._refresh[t]
        return len(doomed)

    def expire_access(self) -> int:
        """Every access token issued so far expires now."""
        now = time.time()
        with self._lock:
            for issued in self._access.values():
                issued.expires_at = min(issued.expires_at, now)
            return len(self._access)

    def invalidate_access(self, token: str) -> bool:
        with self._lock:
            issued = self._access.get(token)
            if issued is not None:
                issued.invalid = True
            return issued is not None
