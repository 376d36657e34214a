"""An emulation of a Basecamp-style web app, as its iOS app (Turbolinks / Hotwire Native)
uses it: the native app holds an OAuth token for the JSON API; web pages need a cookie
session, which an endpoint gives in exchange for the token.

  POST /session/from_token  `Authorization: Bearer <token>` that `check_token` accepts:
                            200 with `Set-Cookie: session=<id>; Domain=.basecamp.com; Path=/;
                            Secure; HttpOnly; SameSite=Lax` (Domain and Secure as the real
                            site sets them: a browser keeps the cookie on the proxy's origin
                            only if Latchkey rewrites them; `cookie_attributes` changes
                            them); 401 for another token;
                            403 while refuse_handoff is set; with useless_sessions set, a
                            cookie no page accepts
  GET .../projects[/...]    a page (any path with a projects segment, e.g. /4242/projects): needs the session cookie; 200 HTML naming the user;
                            401 HTML ("sign in") without it
  GET ....json               the JSON API (e.g. /4242/projects.json): the bearer token's user,
                            or 401

Counters (counters()): "handoff", "page", "page_refused", "api". `cookie_headers` keeps
every Cookie field that arrived, to check what the proxy forwards.
"""

from __future__ import annotations

import secrets

from .common import EmulatedServer, Reply, Request

HTML = [("Content-Type", "text/html; charset=utf-8")]


class BasecampEmulation(EmulatedServer):
    name = "basecamp"

    def __init__(self, check_token):
        """check_token(token) -> the user it belongs to, or None."""
        self.check_token = check_token
        self.sessions: dict[str, str] = {}
        self.refuse_handoff = False
        self.useless_sessions = False
        # As https://3.basecamp.com sets them. A client that keeps cookies by RFC 6265 itself
        # (curl's engine in Latchkey's jar) refuses both here: another domain, and Secure
        # over plain HTTP.
        self.cookie_attributes = "Domain=.basecamp.com; Path=/; Secure; HttpOnly; SameSite=Lax"
        self.cookie_headers: list[str] = []
        super().__init__()

    def handle(self, request: Request) -> Reply:
        if "cookie" in request.headers:
            with self._lock:
                self.cookie_headers.append(request.headers["cookie"])
        scheme, token = request.authorization()
        if request.path == "/session/from_token" and request.method == "POST":
            self.count("handoff")
            if self.refuse_handoff:
                return Reply(403, {"error": "handoffs are turned off"})
            user = self.check_token(token) if scheme == "bearer" else None
            if user is None:
                return Reply(401, {"error": "invalid_token"}, [("WWW-Authenticate", 'Bearer error="invalid_token"')])
            session = secrets.token_urlsafe(16)
            if not self.useless_sessions:
                with self._lock:
                    self.sessions[session] = user
            cookie = f"session={session}; {self.cookie_attributes}"
            return Reply(200, {"ok": True}, [("Set-Cookie", cookie)])
        if request.path.endswith(".json"):
            self.count("api")
            user = self.check_token(token) if scheme == "bearer" else None
            return Reply(200, {"user": user, "path": request.path}) if user else Reply(401, {"error": "invalid_token"})
        if "projects" in request.path.split("/"):
            user = self.sessions.get(self._session_cookie(request))
            if user is None:
                self.count("page_refused")
                return Reply(401, "<!DOCTYPE html><title>Sign in</title><h1>Sign in to Basecamp</h1>", HTML)
            self.count("page")
            return Reply(200, f"<!DOCTYPE html><title>Projects</title><h1>Projects of {user}</h1><p>{request.path}</p>", HTML)
        return Reply(404, "not found")

    @staticmethod
    def _session_cookie(request: Request) -> str:
        for pair in request.headers.get("cookie", "").split(";"):
            name, _, value = pair.strip().partition("=")
            if name == "session":
                return value
        return ""
