#!/usr/bin/env python3
"""The benchmark's OAuth2 token endpoint: small, deterministic, and counting.

A measurement aid, not a conformance test (the integration tests run a real IdP): it
answers the client-credentials grant (RFC 6749 §4.4) of the clients it is told about with
one fixed access token, each client with its own lifetime, and counts the token requests
per client so that the benchmark can check how many a burst of requests caused.

    POST /token   grant_type=client_credentials, client authenticated with HTTP Basic
                  (RFC 6749 §2.3.1) or in the form; every client shares one secret
    POST /session client=CLIENT_ID (a form): {"session_id": the same token}, the one step of
                  the benchmark's session recipe (`grant: recipe`), counted under CLIENT_ID
    GET  /counts  {"CLIENT_ID": token requests answered, ...}

Secrets come from files (never argv): --secret-file holds the client secret,
--token-file the access token to issue. Started by Benchmarks/bench.py.
"""
import argparse
import base64
import http.server
import json
import threading
import urllib.parse


def read_secret(path):
    with open(path) as f:
        return f.read().strip()


class TokenEndpoint(http.server.BaseHTTPRequestHandler):
    # Set by main(): {client_id: lifetime in seconds}, the shared secret, the token to
    # issue, and the counts under their lock.
    lifetimes = {}
    secret = ""
    token = ""
    counts = {}
    lock = threading.Lock()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        form = urllib.parse.parse_qs(self.rfile.read(length).decode(), keep_blank_values=True)
        if self.path == "/session":
            return self.session((form.get("client") or [""])[0])
        if self.path != "/token":
            return self.reply(404, {"error": "not_found"})
        client_id, secret = self.client(form)
        if client_id not in self.lifetimes or secret != self.secret:
            return self.reply(401, {"error": "invalid_client"}, {"WWW-Authenticate": 'Basic realm="token"'})
        if form.get("grant_type") != ["client_credentials"]:
            return self.reply(400, {"error": "unsupported_grant_type"})
        with self.lock:
            self.counts[client_id] = self.counts.get(client_id, 0) + 1
        self.reply(200, {"access_token": self.token, "token_type": "Bearer",
                         "expires_in": self.lifetimes[client_id]})

    def session(self, client_id):
        if client_id not in self.lifetimes:
            return self.reply(401, {"success": False, "status_code": 30})
        with self.lock:
            self.counts[client_id] = self.counts.get(client_id, 0) + 1
        self.reply(200, {"success": True, "session_id": self.token})

    def do_GET(self):
        if self.path != "/counts":
            return self.reply(404, {"error": "not_found"})
        with self.lock:
            counts = dict(self.counts)
        self.reply(200, counts)

    def client(self, form):
        """(client_id, secret) from HTTP Basic, else from the form (client_secret_post)."""
        scheme, _, value = (self.headers.get("Authorization") or "").partition(" ")
        if scheme.lower() == "basic":
            try:
                user, _, password = base64.b64decode(value, validate=True).decode().partition(":")
            except ValueError:
                return None, None
            # RFC 6749 §2.3.1: both parts are form-urlencoded before Basic encoding.
            return urllib.parse.unquote_plus(user), urllib.parse.unquote_plus(password)
        return (form.get("client_id") or [None])[0], (form.get("client_secret") or [None])[0]

    def reply(self, status, document, headers=None):
        body = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "no-store")  # RFC 6749 §5.1
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass  # one line per request would be the largest cost of a token request


def lifetime(text):
    client_id, sep, seconds = text.partition("=")
    if not sep or not client_id or not seconds.isdigit() or int(seconds) < 1:
        raise argparse.ArgumentTypeError(f"expected CLIENT_ID=SECONDS with SECONDS ≥ 1, got {text!r}")
    return client_id, int(seconds)


def main():
    ap = argparse.ArgumentParser(description="the benchmark's client-credentials token endpoint")
    ap.add_argument("--port", type=int, required=True, help="port on 127.0.0.1")
    ap.add_argument("--client", type=lifetime, action="append", required=True, metavar="CLIENT_ID=SECONDS",
                    help="a client and the lifetime (expires_in) of the tokens it gets; repeatable")
    ap.add_argument("--secret-file", required=True, help="file holding the clients' secret")
    ap.add_argument("--token-file", required=True, help="file holding the access token to issue")
    a = ap.parse_args()
    TokenEndpoint.lifetimes = dict(a.client)
    TokenEndpoint.secret = read_secret(a.secret_file)
    TokenEndpoint.token = read_secret(a.token_file)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), TokenEndpoint)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
