"""Identity providers for the integration tests, as pytest fixtures (registered in conftest.py):

  idp / make_idp(access_token_seconds=3)     django-oauth-toolkit, the real OAuth2 server
                                             (idp/), in its own process
  podio / make_podio(access_token_seconds=3600)  emulations/podio.py, in this process
  auth0 / make_auth0(access_token_seconds=3600)  emulations/auth0.py, in this process
  tmdb / make_tmdb(request_token_seconds=3600)   emulations/tmdb.py (TheMovieDB v3's sessions), in
                                             this process

Each listens on an ephemeral loopback port and stops at the end of the test. fetch() is a
small HTTP client for talking to them directly (it never raises for a status)."""

from __future__ import annotations

import atexit
import base64
import json
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from http.cookiejar import CookieJar
from pathlib import Path

import pytest

from emulations.auth0 import Auth0Emulation
from emulations.podio import PodioEmulation
from emulations.tmdb import TMDBEmulation
from idp import accounts
from support import START_TIMEOUT, STOP_TIMEOUT, StartError, wait_until

HERE = Path(__file__).resolve().parent
_ADDRESS_RE = re.compile(r"idp listening address=(\S+)")


# ----- a small HTTP client --------------------------------------------------------------------

@dataclass
class Reply:
    status: int
    headers: dict  # lower-cased names; the last value of a repeated header
    body: bytes

    def json(self):
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # hand the 3xx back as it is: its Location is what the tests look at


def fetch(url: str, method: str | None = None, form: dict | None = None, json_body=None,
          headers: dict | None = None, basic: tuple[str, str] | None = None, body=None,
          opener: urllib.request.OpenerDirector | None = None, timeout: float = 15) -> Reply:
    """One request; redirects are not followed. form= sends urlencoded fields, json_body= JSON,
    body= bytes (or an iterable of bytes, sent chunked); basic=(id, secret) adds
    client_secret_basic (RFC 6749 §2.3.1: both parts form-encoded)."""
    headers = dict(headers or {})
    if form is not None:
        body = urllib.parse.urlencode(form).encode()
        headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
    elif json_body is not None:
        body = json.dumps(json_body).encode()
        headers.setdefault("Content-Type", "application/json")
    if basic is not None:
        pair = ":".join(urllib.parse.quote_plus(part) for part in basic)
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    request = urllib.request.Request(url, data=body, headers=headers,
                                     method=method or ("POST" if body is not None else "GET"))
    opener = opener or urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=timeout) as response:
            return Reply(response.status, {k.lower(): v for k, v in response.headers.items()}, response.read())
    except urllib.error.HTTPError as e:
        with e:
            return Reply(e.code, {k.lower(): v for k, v in e.headers.items()}, e.read())


# ----- the django-oauth-toolkit IdP -------------------------------------------------------------

@dataclass(frozen=True)
class Client:
    id: str
    secret: str | None = None


_RUNNING: list[subprocess.Popen] = []


@atexit.register
def _kill_leftovers() -> None:
    """Never leave an IdP running if pytest ends abruptly."""
    for proc in _RUNNING:
        if proc.poll() is None:
            proc.kill()


class IdpServer:
    """One `python -m idp.server` process (see idp/server.py and idp/accounts.py).

    Endpoints, under .url: /o/token/, /o/authorize/, /o/revoke_token/, /o/introspect/,
    /o/device-authorization/, /.well-known/oauth-authorization-server (RFC 8414), and the
    protected resource /api/<anything> (any method; JSON echo of user, client_id, token,
    scope, method, path, query, body, body_length, body_sha256)."""

    username = accounts.USERNAME
    password = accounts.PASSWORD
    password_client = Client(accounts.PASSWORD_CLIENT_ID, accounts.PASSWORD_CLIENT_SECRET)
    service_client = Client(accounts.SERVICE_CLIENT_ID, accounts.SERVICE_CLIENT_SECRET)
    public_client = Client(accounts.PUBLIC_CLIENT_ID)
    device_client = Client(accounts.DEVICE_CLIENT_ID)
    redirect_uri = accounts.REDIRECT_URI  # any port may be added (RFC 8252 §7.3)

    def __init__(self, workdir: Path, access_token_seconds: int = 3, template: Path | None = None,
                 label: str = "idp"):
        self.access_token_seconds = access_token_seconds
        self.stdout_path = workdir / f"{label}.stdout.log"
        self.stderr_path = workdir / f"{label}.stderr.log"
        args = [sys.executable, "-m", "idp.server", "--port", "0",
                "--access-token-seconds", str(access_token_seconds), "--db", str(workdir / f"{label}.sqlite3")]
        if template is not None:
            args += ["--template", str(template)]
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            # cwd: `-m idp.server` imports the idp package from beside this file.
            self.proc = subprocess.Popen(args, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=HERE,
                                         start_new_session=True)
        _RUNNING.append(self.proc)
        found = wait_until(self._address_or_exit, timeout=START_TIMEOUT)
        if not isinstance(found, str):
            self.stop()
            raise StartError(f"the IdP did not start (exit {self.proc.returncode}); stderr:\n{self.log()[-4000:]}")
        self.url = f"http://{found}"
        self.token_url = f"{self.url}/o/token/"
        self.authorize_url = f"{self.url}/o/authorize/"
        self.revoke_url = f"{self.url}/o/revoke_token/"
        self.introspect_url = f"{self.url}/o/introspect/"
        self.device_authorization_url = f"{self.url}/o/device-authorization/"
        self.metadata_url = f"{self.url}/.well-known/oauth-authorization-server"
        self.api_url = f"{self.url}/api/echo"
        self._browser: urllib.request.OpenerDirector | None = None

    def _address_or_exit(self):
        try:
            m = _ADDRESS_RE.search(self.stdout_path.read_text(errors="replace"))
        except FileNotFoundError:
            m = None
        if m:
            return m.group(1)
        return self.proc.poll() is not None  # True ends the wait: it exited

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def log(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    # ----- test control -------------------------------------------------------------------

    def counters(self) -> dict:
        """{"token": {"total": N, GRANT_TYPE: n, ...}, "api": n, "revoke": {"total": N, HINT: n}}:
        requests that reached /o/token/ (by the grant_type they asked for, answered or not),
        /api/ and /o/revoke_token/ (by their token_type_hint)."""
        return fetch(f"{self.url}/_test/counters").json()

    def revocations(self, hint: str | None = None) -> int:
        """Requests that reached the revocation endpoint (RFC 7009), with that token_type_hint."""
        revoke = self.counters()["revoke"]
        return revoke["total"] if hint is None else revoke.get(hint, 0)

    def token_requests(self, grant_type: str | None = None) -> int:
        token = self.counters()["token"]
        return token["total"] if grant_type is None else token.get(grant_type, 0)

    def token_errors(self, error: str | None = None) -> int:
        """Refused token requests: all of them, or those answered with the OAuth `error`."""
        errors = self.counters()["token_errors"]
        return sum(errors.values()) if error is None else errors.get(error, 0)

    def token_answers(self, since: int = 0) -> list[dict]:
        """The token answers from number `since` on, in the order given, once the IdP holds
        no request (it finishes one whose client died, and such a request may still wait for
        a thread): each {"grant_type", "status", "presented", "issued", "error",
        "answered_at"}: the refresh token a refresh sent, the one a success returned, and the
        time.time() of the answer. Asked while no client sends it anything."""
        def settled():
            doc = fetch(f"{self.url}/_test/token-answers?since={since}").json()
            return doc if doc["in_flight"] == 0 and doc["pending"] == 0 else None

        doc = wait_until(settled, timeout=STOP_TIMEOUT)
        assert doc is not None, f"the IdP at {self.url} still answers token requests after {STOP_TIMEOUT}s"
        return doc["answers"]

    def reset_counters(self) -> None:
        fetch(f"{self.url}/_test/reset-counters", method="POST")

    def revoke_refresh_tokens(self, username: str | None = None) -> int:
        """Revokes the live refresh tokens (of one user, or all): the next refresh gets
        invalid_grant. Their access tokens go too."""
        return fetch(f"{self.url}/_test/revoke-refresh-tokens", form={"username": username or ""}).json()["revoked"]

    def expire_access_tokens(self) -> int:
        """Every access token issued so far expires now; returns how many there were."""
        return fetch(f"{self.url}/_test/expire-access-tokens", method="POST").json()["expired"]

    # ----- the user at a browser --------------------------------------------------------------

    def _logged_in(self) -> urllib.request.OpenerDirector:
        """An opener carrying the user's session cookie, logged in on first use."""
        if self._browser is None:
            browser = urllib.request.build_opener(_NoRedirect, urllib.request.HTTPCookieProcessor(CookieJar()))
            r = fetch(f"{self.url}/accounts/login/", form={"username": self.username, "password": self.password},
                      opener=browser)
            assert r.status == 204, f"IdP login failed: {r.status} {r.text[:500]}"
            self._browser = browser
        return self._browser

    def authorize(self, url: str) -> str:
        """Opens an authorization request URL (/o/authorize/?response_type=code&...) as the
        logged-in user who has already consented; returns the Location of the 302 to the
        redirect URI (with code and state, or error)."""
        r = fetch(url, opener=self._logged_in())
        assert r.status == 302, f"authorize answered {r.status}, not a redirect: {r.text[:1000]}"
        return r.headers["location"]

    def deny(self, url: str) -> str:
        """What the user does on the consent page when saying no: posts the authorization
        request's parameters back without `allow`. Returns the Location of the 302 to the
        redirect URI (error=access_denied and the state)."""
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
        r = fetch(self.authorize_url, form=query, opener=self._logged_in())
        assert r.status == 302, f"authorize answered {r.status}, not a redirect: {r.text[:1000]}"
        return r.headers["location"]

    def approve_device(self, user_code: str) -> None:
        """What the user does at the verification URI (RFC 8628 §3.3): enters the user code
        and approves the device."""
        self._answer_device(user_code, "accept")

    def deny_device(self, user_code: str) -> None:
        """The same, saying no: the next poll gets access_denied."""
        self._answer_device(user_code, "deny")

    def _answer_device(self, user_code: str, action: str) -> None:
        browser = self._logged_in()
        r = fetch(f"{self.url}/o/device/", form={"user_code": user_code}, opener=browser)
        assert r.status == 302, f"user code {user_code!r} refused: {r.status} {r.text[:1000]}"
        r = fetch(urllib.parse.urljoin(self.url, r.headers["location"]), form={"action": action}, opener=browser)
        assert r.status == 302, f"device {action} failed: {r.status} {r.text[:1000]}"


# ----- fixtures ---------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def idp_template(tmp_path_factory) -> Path:
    """Where the first IdP of the session leaves its migrated, seeded database for the rest."""
    return tmp_path_factory.mktemp("idp-template") / "idp.sqlite3"


@pytest.fixture
def make_idp(tmp_path, idp_template):
    """Starts IdPs: make_idp(access_token_seconds=3) -> IdpServer. Stopped after the test."""
    servers: list[IdpServer] = []

    def make(access_token_seconds: int = 3) -> IdpServer:
        server = IdpServer(tmp_path, access_token_seconds, idp_template, label=f"idp-{len(servers) + 1}")
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def idp(make_idp) -> IdpServer:
    """The django-oauth-toolkit IdP with 3-second access tokens."""
    return make_idp()


def _emulation_factory(cls):
    started = []

    def make(access_token_seconds: int = 3600):
        server = cls(access_token_seconds)
        started.append(server)
        return server

    return make, started


@pytest.fixture
def make_podio():
    """Starts Podio emulations: make_podio(access_token_seconds=3600) -> PodioEmulation."""
    make, started = _emulation_factory(PodioEmulation)
    yield make
    for server in started:
        server.close()


@pytest.fixture
def podio(make_podio) -> PodioEmulation:
    return make_podio()


@pytest.fixture
def make_auth0():
    """Starts Auth0 emulations: make_auth0(access_token_seconds=3600) -> Auth0Emulation."""
    make, started = _emulation_factory(Auth0Emulation)
    yield make
    for server in started:
        server.close()


@pytest.fixture
def auth0(make_auth0) -> Auth0Emulation:
    return make_auth0()


@pytest.fixture
def make_tmdb():
    """Starts TheMovieDB emulations: make_tmdb(request_token_seconds=3600) -> TMDBEmulation."""
    started = []

    def make(request_token_seconds: int = 3600) -> TMDBEmulation:
        server = TMDBEmulation(request_token_seconds)
        started.append(server)
        return server

    yield make
    for server in started:
        server.close()


@pytest.fixture
def tmdb(make_tmdb) -> TMDBEmulation:
    return make_tmdb()
