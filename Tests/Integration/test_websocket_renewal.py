"""A refused token on a WebSocket handshake, through the real binary, against the real
OAuth2 server (django-oauth-toolkit, idp_support.py): a WebSocket server that asks the
IdP's API whether the handshake's bearer token is good and answers 401 otherwise. An
expired token is refreshed and the handshake sent again (one refresh); a revoked grant is
re-authenticated; a `renew_on` status and an `invalid_token` challenge renew too; a server
that refuses the renewed token as well gets its second 401 to the client; a static
identity's refused token is 401 `token_rejected`."""

from __future__ import annotations

import pytest
from websockets.exceptions import InvalidStatus

from idp_support import fetch
from support import config, json_lines
from test_oauth import identity_route, password_identity
from websocket_support import client, make_ws_server  # noqa: F401 (fixture)

CHALLENGE = {"WWW-Authenticate": 'Bearer realm="ws", error="invalid_token"'}


def checked_by(idp, status: int = 401, fields: dict | None = None):
    """A handshake check: the token is good if the IdP's API accepts it."""
    def check(seen):
        authorization = seen.header("Authorization") or ""
        if fetch(idp.api_url, headers={"Authorization": authorization}).status == 200:
            return None
        return (status, "invalid token\n", fields if fields is not None else {})
    return check


def serve(latchkey, idp, server, **route):
    cfg = config(routes=[identity_route(upstream=server.url, **route)], credentials={},
                 identities={"idp": password_identity(idp)}, logging={"format": "json"})
    return latchkey.serve(cfg)


def echo_once(p, path: str) -> None:
    with client(p, path) as ws:
        ws.send(path)
        assert ws.recv(timeout=10) == path


def tokens_of(handshakes) -> list:
    return [h.header("Authorization") for h in handshakes]


def test_an_expired_token_is_refreshed_and_the_handshake_sent_again(latchkey, make_idp, make_ws_server):
    idp = make_idp(access_token_seconds=3600)
    server = make_ws_server(check=checked_by(idp, fields=CHALLENGE))
    p = serve(latchkey, idp, server)
    echo_once(p, "/first")
    assert idp.token_requests("password") == 1
    idp.reset_counters()
    idp.expire_access_tokens()

    echo_once(p, "/after-expiry")
    assert idp.token_requests("refresh_token") == 1
    assert idp.token_requests() == 1
    handshakes = server.upgrade_handshakes()
    assert [h.status for h in handshakes] == [101, 401, 101]
    first, refused, renewed = tokens_of(handshakes)
    assert refused == first and renewed != first
    assert server.wait_session(1).header("Authorization") == renewed
    # One switched stream for the client: the refused handshake never reached it.
    lines = [line for line in json_lines(p.log()) if line.get("path") == "/after-expiry"]
    assert [line.get("status") for line in lines] == [101], p.log_tail()

    # The renewed token is kept: the next handshake needs no token request.
    echo_once(p, "/third")
    assert idp.token_requests() == 1
    assert tokens_of(server.upgrade_handshakes())[-1] == renewed


def test_a_revoked_grant_is_reauthenticated(latchkey, make_idp, make_ws_server):
    idp = make_idp(access_token_seconds=3600)
    server = make_ws_server(check=checked_by(idp))
    p = serve(latchkey, idp, server)
    echo_once(p, "/first")
    idp.reset_counters()
    assert idp.revoke_refresh_tokens() >= 1  # their access tokens go too

    echo_once(p, "/after-revocation")
    assert idp.token_errors("invalid_grant") == 1
    assert idp.token_requests("refresh_token") == 1 and idp.token_requests("password") == 1
    assert [h.status for h in server.upgrade_handshakes()] == [101, 401, 101]


@pytest.mark.parametrize("status, fields, route", [
    (403, {}, {"renew_on": [401, 403]}),
    (403, CHALLENGE, {}),
], ids=["renew_on 403", "invalid_token challenge on a 403"])
def test_a_renew_on_status_or_an_invalid_token_challenge_renews(latchkey, make_idp, make_ws_server, status, fields, route):
    idp = make_idp(access_token_seconds=3600)
    server = make_ws_server(check=checked_by(idp, status=status, fields=fields))
    p = serve(latchkey, idp, server, **route)
    echo_once(p, "/first")
    idp.reset_counters()
    idp.expire_access_tokens()
    echo_once(p, "/renewed")
    assert idp.token_requests("refresh_token") == 1
    assert [h.status for h in server.upgrade_handshakes()] == [101, status, 101]


def test_a_403_without_renew_on_or_challenge_goes_to_the_client(latchkey, make_idp, make_ws_server):
    idp = make_idp(access_token_seconds=3600)
    server = make_ws_server(check=checked_by(idp, status=403))
    p = serve(latchkey, idp, server)
    echo_once(p, "/first")
    idp.reset_counters()
    idp.expire_access_tokens()
    with pytest.raises(InvalidStatus) as refused:
        client(p, "/forbidden")
    assert refused.value.response.status_code == 403
    assert idp.token_requests() == 0


def test_a_server_that_refuses_the_renewed_token_too_gets_its_401_to_the_client(latchkey, make_idp, make_ws_server):
    idp = make_idp(access_token_seconds=3600)
    server = make_ws_server(check=lambda seen: (401, "nobody gets in\n", CHALLENGE))
    p = serve(latchkey, idp, server)
    with pytest.raises(InvalidStatus) as refused:
        client(p, "/never")
    answer = refused.value.response
    assert answer.status_code == 401
    assert answer.body == b"nobody gets in\n"
    assert answer.headers["WWW-Authenticate"] == CHALLENGE["WWW-Authenticate"]
    # The first token (password grant), one renewal (refresh), no third handshake.
    assert idp.token_requests("password") == 1 and idp.token_requests("refresh_token") == 1
    handshakes = server.upgrade_handshakes()
    assert [h.status for h in handshakes] == [401, 401]
    assert handshakes[0].header("Authorization") != handshakes[1].header("Authorization")


def test_a_static_identitys_refused_token_is_token_rejected(latchkey, make_ws_server):
    server = make_ws_server(check=lambda seen: (401, "expired\n", CHALLENGE))
    route = {"name": "api", "path": "/", "upstream": server.url,
             "inject": [{"header": "Authorization", "value": "Bearer {access_token}", "identity": "kii"}]}
    p = latchkey.serve(config(routes=[route], credentials={},
                              identities={"kii": {"grant": "static", "token": {"value": "lk-itest-static-ws-token"}}}))
    with pytest.raises(InvalidStatus) as refused:
        client(p, "/static")
    assert refused.value.response.status_code == 401
    assert b"token_rejected" in refused.value.response.body
    assert b"lk-itest-static-ws-token" not in refused.value.response.body
    assert [h.header("Authorization") for h in server.upgrade_handshakes()] == ["Bearer lk-itest-static-ws-token"]
