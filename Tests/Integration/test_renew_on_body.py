"""`renew_on` body matches through the real binary: a route whose identity's token counts as
refused only when the answer's JSON says so, as TheMovieDB's does (401 with `status_code` 3
is an invalid session, to renew; 401 with `status_code` 7 is a bad API key, which a renewal
cannot fix). The identity is an OAuth password grant at the Podio emulation; the upstream,
an API that accepts the tokens that emulation issued and answers a refused one as TMDB does."""

import hashlib
import json
import threading

from canned_server import CannedServer
from emulations.common import EmulatedServer, Reply, Request
from support import config

INVALID_SESSION = {"success": False, "status_code": 3,
                   "status_message": "Authentication failed: You do not have permissions to access the service."}
INVALID_KEY = {"success": False, "status_code": 7, "status_message": "Invalid API key: You must be granted a valid key."}
RENEW_ON = [{"status": 401, "json": {"status_code": 3}}]
FAVORITE = json.dumps({"media_type": "movie", "media_id": 550, "favorite": True}).encode()


class SessionAPI(EmulatedServer):
    """Echoes the request (its token, method, body) for a token `podio` issued and that was
    not invalidated; answers TMDB's invalid-session 401 for any other. `answer_next(reply)`
    makes the next answer that reply, whatever the token."""

    name = "session-api"

    def __init__(self, podio):
        self.podio = podio
        self._script_lock = threading.Lock()
        self._invalid: set = set()
        self._scripted: list = []
        super().__init__()

    def invalidate(self, token: str) -> None:
        with self._script_lock:
            self._invalid.add(token)

    def answer_next(self, reply: Reply) -> None:
        with self._script_lock:
            self._scripted.append(reply)

    def handle(self, request: Request) -> Reply:
        self.count("api")
        _, token = request.authorization()
        with self._script_lock:
            if self._scripted:
                return self._scripted.pop(0)
            invalid = token in self._invalid
        if invalid or self.podio.tokens.access(token)[0] != "valid":
            return Reply(401, INVALID_SESSION)
        return Reply(200, {"token": token, **request.describe()})


def serve(latchkey, podio, upstream_url: str, **route):
    identity = {
        "grant": "password", "token_url": f"{podio.url}/oauth/token", "client_auth": "client_secret_post",
        "client_id": podio.client_id, "client_secret": {"value": podio.client_secret},
        "username": podio.username, "password": {"value": podio.password},
    }
    r = {"name": "tmdb", "path": "/3", "upstream": upstream_url,
         "inject": [{"header": "Authorization", "value": "Bearer {token}", "identity": "user"}], "renew_on": RENEW_ON}
    r.update(route)
    return latchkey.serve(config(routes=[r], credentials={}, identities={"user": identity}))


def start(latchkey, podio, **route):
    """The API and a proxy in front of it, warmed: returns (api, proxy, the first token)."""
    api = SessionAPI(podio)
    proxy = serve(latchkey, podio, api.url, **route)
    r = proxy.get("/3/movie/550")
    assert r.status == 200, r
    return api, proxy, r.json()["token"]


def post_favorite(proxy, body: bytes = FAVORITE):
    return proxy.request("POST", "/3/account/1/favorite", headers=[("Content-Type", "application/json;charset=utf-8")],
                         body=body)


def test_an_invalid_session_is_renewed_and_the_json_post_replayed_intact(latchkey, podio):
    api, proxy, first = start(latchkey, podio)
    try:
        api.invalidate(first)
        r = post_favorite(proxy)
        assert r.status == 200, r
        seen = r.json()
        assert seen["token"] != first
        assert seen["method"] == "POST" and seen["path"] == "/account/1/favorite"
        assert seen["content_type"] == "application/json;charset=utf-8"
        assert seen["body_sha256"] == hashlib.sha256(FAVORITE).hexdigest()
        assert not r.has_header("Latchkey-Token-Renewed")
        assert podio.token_requests("refresh_token") == 1
        assert api.counters()["api"] == 3  # the warm-up, the refused attempt, the replay
        assert "upstream refused the token; renewing and replaying" in proxy.log()
    finally:
        api.close()


def test_a_bad_api_key_reaches_the_client_as_it_is_without_a_renewal(latchkey, podio):
    api, proxy, first = start(latchkey, podio)
    try:
        api.answer_next(Reply(401, INVALID_KEY))
        r = post_favorite(proxy)
        assert r.status == 401, r
        assert r.json() == INVALID_KEY
        assert r.header("Content-Type") == "application/json; charset=utf-8"
        assert not r.has_header("Latchkey-Token-Renewed")
        # The token is still the first one.
        assert podio.token_requests() == 1
        assert proxy.get("/3/movie/550").json()["token"] == first
        assert podio.token_requests() == 1
    finally:
        api.close()


def test_a_401_that_is_not_json_reaches_the_client_as_it_is(latchkey, podio):
    api, proxy, first = start(latchkey, podio)
    try:
        page = "<html><body>status_code: 3</body></html>"
        api.answer_next(Reply(401, page, headers=[("Content-Type", "text/html")]))
        r = proxy.get("/3/movie/550")
        assert r.status == 401, r
        assert r.body.decode() == page
        assert podio.token_requests() == 1
    finally:
        api.close()


def test_a_json_401_too_long_to_read_is_passed_on(latchkey, podio):
    api, proxy, first = start(latchkey, podio)
    try:
        # Content-Length says more than the 64 KiB that are read: relayed unread.
        long_refusal = {**INVALID_SESSION, "padding": "x" * 100_000}
        api.answer_next(Reply(401, long_refusal))
        r = proxy.get("/3/movie/550")
        assert r.status == 401 and r.complete, r
        assert r.json() == long_refusal
        assert podio.token_requests() == 1
    finally:
        api.close()


def test_a_chunked_401_that_outgrows_the_bound_is_relayed_whole(latchkey, podio):
    """No length announced: the proxy holds the body until it passes 64 KiB, then sends what
    it held and relays the rest."""
    refusal = json.dumps({**INVALID_SESSION, "padding": "y" * 200_000}).encode()

    def respond(head: bytes, conn) -> None:
        conn.sendall(b"HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                     b"Connection: close\r\n\r\n")
        for at in range(0, len(refusal), 16384):
            chunk = refusal[at:at + 16384]
            conn.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        conn.sendall(b"0\r\n\r\n")

    canned = CannedServer(respond)
    try:
        proxy = serve(latchkey, podio, canned.url)
        r = proxy.get("/3/movie/550")
        assert r.status == 401 and r.complete, r
        assert r.body == refusal
        assert podio.token_requests() == 1
    finally:
        canned.close()


def test_an_invalid_session_with_a_body_too_large_to_keep_renews_for_the_next_request(latchkey, podio):
    api, proxy, first = start(latchkey, podio, replay_limit="1KiB")
    try:
        api.invalidate(first)
        big = json.dumps({"items": list(range(1000))}).encode()  # over 1 KiB: not kept for a replay
        r = post_favorite(proxy, big)
        assert r.status == 401, r
        assert r.json() == INVALID_SESSION
        assert r.header("Latchkey-Token-Renewed") == "true"
        # The next request has the renewed token.
        again = post_favorite(proxy, big)
        assert again.status == 200, again
        assert again.json()["token"] != first
        assert podio.token_requests("refresh_token") == 1
    finally:
        api.close()
