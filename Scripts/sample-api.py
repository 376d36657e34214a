#!/usr/bin/env python3
"""The demo's sample API: a tiny JSON API on loopback that insists on a bearer token.

Every endpoint answers 401 unless the request carries `Authorization: Bearer <token>`
with the token read from --token-file. /me shows which credential arrived (masked), so
the demo can show that Latchkey injected it. Python standard library only.

Usage: sample-api.py --token-file FILE [--port N] [--port-file FILE]
  --port 0 (the default) binds a free port; --port-file receives the port once listening.
"""
import argparse
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ITEMS = [
    {"id": 1, "name": "latch", "stock": 12},
    {"id": 2, "name": "key", "stock": 40},
    {"id": 3, "name": "hinge", "stock": 7},
]


def mask(value: str) -> str:
    """Show enough of a credential to recognise it, never all of it."""
    scheme, _, secret = value.partition(" ")
    if not secret:
        scheme, secret = "", value
    shown = secret[:11] + "…" + secret[-4:] if len(secret) > 16 else "…"
    return f"{scheme} {shown}".strip()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "sample-api/1"
    sys_version = ""

    def log_message(self, fmt, *args):
        if not self.server.quiet:
            sys.stderr.write("sample-api: %s\n" % (fmt % args))

    def send_json(self, status, body, extra=()):
        data = (json.dumps(body, indent=2, ensure_ascii=False) + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def authorised(self):
        values = self.headers.get_all("Authorization") or []
        if values == ["Bearer " + self.server.token]:
            return values[0]
        reason = "no Authorization header" if not values else "wrong or repeated credential"
        self.send_json(
            401,
            {"error": "unauthorized", "message": f"{reason}: this API needs 'Authorization: Bearer <token>'"},
            extra=[("WWW-Authenticate", 'Bearer realm="sample-api"')],
        )
        return None

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/health":
            return self.send_json(200, {"status": "ok"})
        credential = self.authorised()
        if credential is None:
            return
        if path == "/me":
            return self.send_json(200, {
                "user": "demo",
                "authorization_received": mask(credential),
                "note": "the client sent no credential; this one was attached on the way",
            })
        if path == "/items":
            return self.send_json(200, {"items": ITEMS})
        if path.startswith("/items/"):
            for item in ITEMS:
                if path == f"/items/{item['id']}":
                    return self.send_json(200, item)
        self.send_json(404, {"error": "not_found", "path": path})

    do_HEAD = do_GET


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--token-file", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--quiet", action="store_true", help="no request log on stderr")
    args = parser.parse_args()
    with open(args.token_file, encoding="utf-8") as f:
        token = f.read().strip()
    if not token:
        sys.exit("sample-api: the token file is empty")

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.token = token
    server.quiet = args.quiet
    port = server.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
