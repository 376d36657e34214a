"""An emulation of TheMovieDB API v3's user authentication and a few account calls, from its
public documentation (developer.themoviedb.org/reference/authentication-*, /docs/errors).
Everything is under /3; every call needs `api_key` in the query, else 401 status_code 7.

  GET    /3/authentication/token/new            200 {success, expires_at "YYYY-MM-DD HH:MM:SS
                                                UTC" (request_token_seconds, 60 minutes), request_token}
  POST   /3/authentication/token/validate_with_login
                                                JSON {username, password, request_token}: 200 {success,
                                                expires_at, request_token}; 400 status_code 26 without a
                                                username or password; 401 status_code 33 for a request
                                                token unknown, expired or already made a session; 401
                                                status_code 30 for a wrong login
  POST   /3/authentication/session/new          JSON {request_token}: 200 {success, session_id}, once per
                                                validated request token; 401 status_code 17 (not validated),
                                                33 (unknown, expired, already used)
  DELETE /3/authentication/session              JSON {session_id}: 200 {success}; 404 status_code 6 unknown
  GET    /3/account?session_id=                 200 the account (id, username, ...)
  GET    /3/account/{id}/favorite/movies?session_id=
                                                200 {page, results [{id, title}], total_pages, total_results}
  POST   /3/account/{id}/favorite?session_id=   JSON {media_type, media_id, favorite}: 201 status_code 1
                                                (added) or 12 (already there), 200 status_code 13 (removed);
                                                422 status_code 5 for another body
  anything else                                 404 status_code 34
A call that needs a session gets 401 status_code 3 without one, with one it does not know, or
with one the test invalidated (invalidate_session()); an account id not the session's gets 3 too.
Errors are TMDB's envelope {success: false, status_code, status_message}.

Test control: invalidate_session(), revoke_api_key(), answer_html(endpoint) (the endpoint answers
an HTML page, as a CDN's error page would), slow(endpoint, seconds), expire_request_tokens().
What it saw: calls(endpoint) (each with its raw query string and body, refused ones too),
counters() (calls by endpoint name, and "sessions_created"), sessions_created, live_sessions(),
deleted_sessions(), favorites(). Endpoint names: token_new, validate_with_login, session_new,
session_delete, account, favorite_movies, favorite, unknown.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
import urllib.parse
from dataclasses import dataclass

from .common import EmulatedServer, Reply, Request

# developer.themoviedb.org/docs/errors
MESSAGES = {
    1: "Success.",
    3: "Authentication failed: You do not have permissions to access the service.",
    5: "Invalid parameters: Your request parameters are incorrect.",
    6: "Invalid id: The pre-requisite id is invalid or not found.",
    7: "Invalid API key: You must be granted a valid key.",
    12: "The item/record was updated successfully.",
    13: "The item/record was deleted successfully.",
    17: "Session denied.",
    26: "You must provide a username and password.",
    30: "Invalid username and/or password: You did not provide a valid login.",
    33: "Invalid request token: The request token is either expired or invalid.",
    34: "The resource you requested could not be found.",
}

ROUTES = [
    ("GET", re.compile(r"/authentication/token/new"), "token_new"),
    ("POST", re.compile(r"/authentication/token/validate_with_login"), "validate_with_login"),
    ("POST", re.compile(r"/authentication/session/new"), "session_new"),
    ("DELETE", re.compile(r"/authentication/session"), "session_delete"),
    ("GET", re.compile(r"/account"), "account"),
    ("GET", re.compile(r"/account/(\d+)/favorite/movies"), "favorite_movies"),
    ("POST", re.compile(r"/account/(\d+)/favorite"), "favorite"),
]

HTML_PAGE = ("<!DOCTYPE html><html><head><title>503 Service Temporarily Unavailable</title></head>"
             "<body><h1>Service Temporarily Unavailable</h1><p>Please try again later.</p></body></html>")


@dataclass(frozen=True)
class Call:
    """One request as it arrived, answered or refused."""
    endpoint: str
    method: str
    path: str
    query: dict
    raw_query: str
    content_type: str
    body: bytes
    at: float

    def json(self):
        return json.loads(self.body) if self.body else None


@dataclass
class RequestToken:
    expires_at: float
    validated_for: str | None = None  # the username that validated it
    used: bool = False


@dataclass
class Session:
    account_id: int
    invalid: bool = False


def tmdb_time(seconds: float) -> str:
    """TMDB's way of writing a time: `2016-08-26 17:04:39 UTC`."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


def error(status: int, code: int) -> Reply:
    return Reply(status, {"success": False, "status_code": code, "status_message": MESSAGES[code]})


class TMDBEmulation(EmulatedServer):
    name = "tmdb"
    api_key = "lk-itest-tmdb-api-key-91d4c07e"
    username = "lk-itest-alice"
    password = "lk-itest-tmdb-password-6a2f"
    account_id = 6150

    def __init__(self, request_token_seconds: int = 3600):
        self.request_token_seconds = request_token_seconds
        self._state = threading.Lock()
        self._calls: list[Call] = []
        self._tokens: dict[str, RequestToken] = {}
        self._sessions: dict[str, Session] = {}
        self._deleted: list[str] = []
        self._favorites: dict[int, list[int]] = {}
        self._api_key_valid = True
        self._html: dict[str, int] = {}
        self._delays: dict[str, float] = {}
        self._sessions_created = 0
        super().__init__()
        self.base_url = f"{self.url}/3"

    # ----- test control -------------------------------------------------------------------

    def invalidate_session(self, session_id: str | None = None) -> int:
        """From now on that session (or every live one) gets 401 status_code 3, as one the
        user revoked on the website; returns how many were invalidated."""
        with self._state:
            doomed = [s for sid, s in self._sessions.items() if not s.invalid and session_id in (None, sid)]
            for session in doomed:
                session.invalid = True
            return len(doomed)

    def revoke_api_key(self) -> None:
        """The application's key is refused from now on: 401 status_code 7 on every call."""
        with self._state:
            self._api_key_valid = False

    def answer_html(self, endpoint: str, status: int | None = 200) -> None:
        """The endpoint answers an HTML page with this status (None: normal answers again)."""
        with self._state:
            if status is None:
                self._html.pop(endpoint, None)
            else:
                self._html[endpoint] = status

    def slow(self, endpoint: str, seconds: float) -> None:
        """The endpoint waits this long before it answers."""
        with self._state:
            self._delays[endpoint] = seconds

    def expire_request_tokens(self) -> None:
        with self._state:
            for token in self._tokens.values():
                token.expires_at = min(token.expires_at, time.time())

    # ----- what it saw --------------------------------------------------------------------

    def calls(self, endpoint: str | None = None) -> list[Call]:
        with self._state:
            return [c for c in self._calls if endpoint in (None, c.endpoint)]

    def counters(self) -> dict:
        """Calls by endpoint name as they arrived, and "sessions_created"."""
        with self._state:
            counts: dict = {}
            for call in self._calls:
                counts[call.endpoint] = counts.get(call.endpoint, 0) + 1
            counts["sessions_created"] = self._sessions_created
            return counts

    def reset_counters(self) -> None:
        with self._state:
            self._calls.clear()
            self._sessions_created = 0

    @property
    def sessions_created(self) -> int:
        with self._state:
            return self._sessions_created

    def live_sessions(self) -> list[str]:
        with self._state:
            return [sid for sid, s in self._sessions.items() if not s.invalid]

    def deleted_sessions(self) -> list[str]:
        with self._state:
            return list(self._deleted)

    def favorites(self, account_id: int | None = None) -> list[int]:
        with self._state:
            return list(self._favorites.get(account_id or self.account_id, []))

    # ----- HTTP ---------------------------------------------------------------------------

    def handle(self, request: Request) -> Reply:
        path = request.path[len("/3"):] if request.path.startswith("/3/") else None
        endpoint, match = "unknown", None
        for method, pattern, name in ROUTES:
            found = pattern.fullmatch(path) if path is not None else None
            if found and request.method == method:
                endpoint, match = name, found
                break
        with self._state:
            self._calls.append(Call(endpoint, request.method, request.path, request.query, request.raw_query,
                                    request.headers.get("content-type", ""), request.body, time.time()))
            html, delay, key_valid = self._html.get(endpoint), self._delays.get(endpoint), self._api_key_valid
        if delay:
            time.sleep(delay)
        if html is not None:
            return Reply(html, HTML_PAGE, [("Content-Type", "text/html; charset=utf-8")])
        if not key_valid or request.query.get("api_key") != self.api_key:
            return error(401, 7)
        if match is None:
            return error(404, 34)
        return getattr(self, f"_{endpoint}")(request, *match.groups())

    def _json_body(self, request: Request) -> dict:
        try:
            value = json.loads(request.body or b"{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def _token_new(self, request: Request) -> Reply:
        token = secrets.token_hex(20)
        expires_at = time.time() + self.request_token_seconds
        with self._state:
            self._tokens[token] = RequestToken(expires_at)
        return Reply(200, {"success": True, "expires_at": tmdb_time(expires_at), "request_token": token})

    def _usable_token(self, value) -> RequestToken | None:
        token = self._tokens.get(value) if isinstance(value, str) else None
        if token is None or token.used or time.time() >= token.expires_at:
            return None
        return token

    def _validate_with_login(self, request: Request) -> Reply:
        body = self._json_body(request)
        if not body.get("username") or not body.get("password"):
            return error(400, 26)
        with self._state:
            token = self._usable_token(body.get("request_token"))
            if token is None:
                return error(401, 33)
            if body["username"] != self.username or body["password"] != self.password:
                return error(401, 30)
            token.validated_for = body["username"]
            expires_at = token.expires_at
        return Reply(200, {"success": True, "expires_at": tmdb_time(expires_at),
                           "request_token": body["request_token"]})

    def _session_new(self, request: Request) -> Reply:
        with self._state:
            token = self._usable_token(self._json_body(request).get("request_token"))
            if token is None:
                return error(401, 33)
            if token.validated_for is None:
                return error(401, 17)
            token.used = True
            session_id = secrets.token_hex(20)
            self._sessions[session_id] = Session(self.account_id)
            self._sessions_created += 1
        return Reply(200, {"success": True, "session_id": session_id})

    def _session_delete(self, request: Request) -> Reply:
        session_id = self._json_body(request).get("session_id")
        with self._state:
            if not isinstance(session_id, str) or self._sessions.pop(session_id, None) is None:
                return error(404, 6)
            self._deleted.append(session_id)
        return Reply(200, {"success": True})

    def _session(self, request: Request, account_id: str | None = None) -> Session | None:
        with self._state:
            session = self._sessions.get(request.query.get("session_id", ""))
        if session is None or session.invalid or (account_id is not None and int(account_id) != session.account_id):
            return None
        return session

    def _account(self, request: Request) -> Reply:
        session = self._session(request)
        if session is None:
            return error(401, 3)
        return Reply(200, {"avatar": {"gravatar": {"hash": "0" * 32}, "tmdb": {"avatar_path": None}},
                           "id": session.account_id, "iso_639_1": "en", "iso_3166_1": "US", "name": "Alice",
                           "include_adult": False, "username": self.username})

    def _favorite_movies(self, request: Request, account_id: str) -> Reply:
        session = self._session(request, account_id)
        if session is None:
            return error(401, 3)
        ids = self.favorites(session.account_id)
        return Reply(200, {"page": 1, "results": [{"id": i, "title": f"Movie {i}"} for i in ids],
                           "total_pages": 1, "total_results": len(ids)})

    def _favorite(self, request: Request, account_id: str) -> Reply:
        session = self._session(request, account_id)
        if session is None:
            return error(401, 3)
        body = self._json_body(request)
        media_id, favorite = body.get("media_id"), body.get("favorite")
        if body.get("media_type") not in ("movie", "tv") or not isinstance(media_id, int) \
                or not isinstance(favorite, bool):
            return error(422, 5)
        with self._state:
            ids = self._favorites.setdefault(session.account_id, [])
            if not favorite:
                if media_id in ids:
                    ids.remove(media_id)
                return Reply(200, {"success": True, "status_code": 13, "status_message": MESSAGES[13]})
            code = 12 if media_id in ids else 1
            if code == 1:
                ids.append(media_id)
        return Reply(201, {"success": True, "status_code": code, "status_message": MESSAGES[code]})


def query_values(call: Call, name: str) -> list[str]:
    """Every value of `name` in the call's query string, repeated ones too."""
    return [v for k, v in urllib.parse.parse_qsl(call.raw_query, keep_blank_values=True) if k == name]
