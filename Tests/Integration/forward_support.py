"""The forward proxy's test world: an HTTPS upstream with its own CA that answers under a
name that does not resolve (`api.test`), so that only the proxy can reach it, and the
configuration of a forward listener whose route names that host.

    api = ApiServer(Certs(tmp_path / "pki"))          # https://localhost:PORT, its CA in api.ca
    cfg = forward_config(api)                         # listener `fwd` (mode: forward), route `api`
    p = latchkey.serve(cfg)
    proxy = proxy_url(p)                              # http://latchkey:SECRET@127.0.0.1:PORT
    local_ca(latchkey)                                # the local CA that signs the intercepted leaves
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from support import TOKEN
from tls_support import Certs, HTTPSTestServer

HOST = "api.test"
PROXY_SECRET = "proxy-secret-0123456789"


class _EchoHandler(BaseHTTPRequestHandler):
    """Answers every method with JSON: the method, the path and the request's fields, so
    that a test sees what the proxy sent upstream."""
    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.seen.append({"method": self.command, "path": self.path, "headers": dict(self.headers.items())})
        out = json.dumps({"method": self.command, "path": self.path, "headers": dict(self.headers.items()),
                          "body": body.decode("utf-8", "replace")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _answer

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


class ApiServer(HTTPSTestServer):
    """An HTTPS echo server on 127.0.0.1 whose certificate names `localhost`, signed by a CA
    of its own (`ca`): the route's upstream is https://localhost:PORT with `ca_file`."""

    def __init__(self, certs: Certs):
        super().__init__(certs, _EchoHandler, "api-ca")
        self.start()


def forward_config(api: ApiServer, *, route: dict | None = None, listener: dict | None = None, routes: list | None = None,
                   **top) -> dict:
    """A forward listener `fwd` with proxy_auth, and a route `api` for api.test that injects
    `Authorization: Bearer TOKEN` and goes to the ApiServer (trusted with its CA)."""
    r = {"name": "api", "host": HOST, "path": "/", "upstream": {"url": api.url, "ca_file": str(api.ca.cert)},
         "inject": [{"header": "Authorization", "value": "Bearer {token}", "credential": "api"}]}
    r.update(route or {})
    fwd = {"name": "fwd", "mode": "forward", "inbound": {"proxy_auth": {"value": PROXY_SECRET}}}
    fwd.update(listener or {})
    cfg = {"listeners": [fwd], "credentials": {"api": {"value": TOKEN}}, "routes": routes if routes is not None else [r],
           "logging": {"format": "json"}}
    cfg.update(top)
    return cfg


def proxy_url(p, secret: str = PROXY_SECRET) -> str:
    host, port = p.address
    return f"http://latchkey:{secret}@{host}:{port}"


def local_ca(latchkey) -> Path:
    """The local CA's certificate, in the test's state directory."""
    return latchkey.workdir / "state" / "latchkey" / "ca" / "ca.pem"
