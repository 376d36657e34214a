"""The OAuth2 engine through the real binary against a real OAuth2 server
(django-oauth-toolkit, idp_support.py): grants, refresh with rotation, re-authentication
after a revoked refresh token, refresh-and-replay of a POST, single flight under a storm,
and the answers for identities that cannot get a token."""

import hashlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from canned_server import CannedServer
from support import config, free_port, wait_until


def identity_route(name: str = "idp", template: str = "Bearer {access_token}", **route) -> dict:
    r = {"name": "api", "path": "/", "inject": [{"header": "Authorization", "value": template, "identity": name}]}
    r.update(route)
    return r


def password_identity(idp, **extra) -> dict:
    identity = {
        "grant": "password", "token_url": idp.token_url, "username": idp.username,
        "password": {"value": idp.password},
        "client_id": idp.password_client.id, "client_secret": {"value": idp.password_client.secret},
    }
    identity.update(extra)
    return identity


def serve(latchkey, idp, identity: dict, **route):
    cfg = config(routes=[identity_route(upstream=idp.url + "/api", **route)], credentials={}, identities={"idp": identity})
    return latchkey.serve(cfg)


def test_password_grant_token_reaches_the_api(latchkey, idp):
    proxy = serve(latchkey, idp, password_identity(idp))
    r = proxy.get("/whoami")
    assert r.status == 200, r
    seen = r.json()
    assert seen["user"] == idp.username
    assert seen["path"] == "/api/whoami"
    assert idp.token_requests("password") == 1
    # The token is kept: a second request causes no token request.
    assert proxy.get("/again").status == 200
    assert idp.token_requests() == 1


def test_client_secret_post_and_client_credentials(latchkey, idp):
    identity = {
        "grant": "client_credentials", "token_url": idp.token_url, "client_auth": "client_secret_post",
        "client_id": idp.service_client.id, "client_secret": {"value": idp.service_client.secret},
    }
    proxy = serve(latchkey, idp, identity)
    r = proxy.get("/x")
    assert r.status == 200, r
    assert r.json()["client_id"] == idp.service_client.id
    assert idp.token_requests("client_credentials") == 1


def test_expired_token_is_refreshed_with_rotation(latchkey, make_idp):
    idp = make_idp(access_token_seconds=2)
    # No proactive refresh and no skew: the token is used until it expires.
    proxy = serve(latchkey, idp, password_identity(idp, refresh_ahead="0s", clock_skew="0s"))
    assert proxy.get("/1").status == 200
    for round_ in range(2):
        time.sleep(2.3)
        r = proxy.get(f"/after-expiry-{round_}")
        assert r.status == 200, r
    # Each refresh used the refresh token the previous one rotated in (grace period 0).
    assert idp.token_requests("refresh_token") == 2
    assert idp.token_requests("password") == 1


def test_proactive_refresh_keeps_a_fresh_token_without_waiting(latchkey, make_idp):
    idp = make_idp(access_token_seconds=4)
    # Kept warm: refreshed even while no request comes (below).
    proxy = serve(latchkey, idp, password_identity(idp, keep_warm=True))
    assert proxy.get("/1").status == 200
    # Refreshed in the background ahead of expiry: requests never wait for a token.
    time.sleep(4.5)
    assert idp.token_requests("refresh_token") >= 1
    before = idp.token_requests()
    assert proxy.get("/2").status == 200
    assert idp.token_requests() == before


def test_an_identity_nobody_uses_stops_refreshing_unless_it_keeps_warm(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3)  # refreshed every 1.1 s while in use
    api = idp.url + "/api"
    service = {"grant": "client_credentials", "token_url": idp.token_url, "keep_warm": True,
               "client_id": idp.service_client.id, "client_secret": {"value": idp.service_client.secret}}
    cfg = config(routes=[dict(identity_route("idle", path="/idle", upstream=api), name="idle"),
                         dict(identity_route("warm", path="/warm", upstream=api), name="warm")],
                 credentials={}, identities={"idle": password_identity(idp), "warm": service})
    proxy = latchkey.serve(cfg)
    start = time.monotonic()
    assert proxy.get("/idle/1").status == 200 and proxy.get("/warm/1").status == 200
    # Refreshes go on for one token lifetime after the last request, then stop; the warm
    # identity's client credentials grants go on.
    time.sleep(start + 4.5 - time.monotonic())
    idle, warm = idp.token_requests("refresh_token"), idp.token_requests("client_credentials")
    assert idle <= 2
    time.sleep(start + 12 - time.monotonic())
    assert idp.token_requests("refresh_token") == idle
    assert idp.token_requests("client_credentials") >= warm + 4
    # The next request renews the expired token on demand.
    assert proxy.get("/idle/2").status == 200
    assert idp.token_requests("refresh_token") == idle + 1


def test_revoked_refresh_token_leads_to_reauthentication_and_replay(latchkey, idp):
    proxy = serve(latchkey, idp, password_identity(idp))
    assert proxy.get("/1").status == 200
    idp.revoke_refresh_tokens()  # the access token goes too: the upstream answers 401
    idp.reset_counters()
    r = proxy.get("/2")
    assert r.status == 200, r
    assert idp.token_requests("refresh_token") == 1  # refused: invalid_grant
    assert idp.token_requests("password") == 1       # re-authenticated
    assert "event=refreshed" not in proxy.log()


def test_post_body_is_replayed_intact_after_a_refresh(latchkey, idp):
    proxy = serve(latchkey, idp, password_identity(idp))
    assert proxy.get("/warm").status == 200
    idp.expire_access_tokens()
    idp.reset_counters()
    body = bytes(range(256)) * 1000  # 256 kB, under the 1 MiB replay limit
    r = proxy.request("POST", "/upload", headers=[("Content-Type", "application/octet-stream")], body=body)
    assert r.status == 200, r
    seen = r.json()
    assert seen["method"] == "POST"
    assert seen["body_length"] == len(body)
    assert seen["body_sha256"] == hashlib.sha256(body).hexdigest()
    assert idp.token_requests("refresh_token") == 1
    assert idp.counters()["api"] == 2  # the refused attempt and the replay


def test_body_over_the_replay_limit_gets_the_401_with_a_renewal_header(latchkey, idp):
    proxy = serve(latchkey, idp, password_identity(idp), replay_limit="1KiB")
    assert proxy.get("/warm").status == 200
    idp.expire_access_tokens()
    r = proxy.request("POST", "/upload", body=b"x" * 4096)
    assert r.status == 401, r
    assert r.header("Latchkey-Token-Renewed") == "true"
    # The token was renewed for the next request.
    assert proxy.request("POST", "/upload", body=b"x" * 4096).status == 200


def test_storm_after_expiry_causes_one_token_request(latchkey, make_idp):
    idp = make_idp(access_token_seconds=2)
    proxy = serve(latchkey, idp, password_identity(idp, refresh_ahead="0s", clock_skew="0s"))
    assert proxy.get("/warm").status == 200
    time.sleep(2.3)
    idp.reset_counters()
    start = threading.Barrier(200)

    def one(i):
        start.wait()
        return proxy.get(f"/storm/{i}", timeout=60).status

    with ThreadPoolExecutor(max_workers=200) as pool:
        statuses = list(pool.map(one, range(200)))
    assert statuses == [200] * 200
    assert idp.token_requests() == 1


def test_static_token_refused_upstream_gets_a_json_401(latchkey, idp):
    proxy = serve(latchkey, idp, {"grant": "static", "token": {"value": "not-a-token-the-idp-knows"}})
    r = proxy.get("/x")
    assert r.status == 401, r
    doc = r.json()
    assert doc["error"] == "token_rejected"
    assert "idp" in doc["message"]
    assert "not-a-token" not in r.body.decode()


def test_dead_seeded_refresh_token_requires_a_login(latchkey, idp):
    identity = {
        "grant": "refresh_token", "token_url": idp.token_url, "refresh_token": {"value": "revoked-or-never-issued"},
        "client_id": idp.password_client.id, "client_secret": {"value": idp.password_client.secret},
    }
    proxy = serve(latchkey, idp, identity)
    r = proxy.get("/x")
    assert r.status == 401, r
    doc = r.json()
    assert doc["error"] == "login_required"
    assert "latchkey login idp" in doc["message"]
    # Known now: later requests are answered without another token request.
    assert proxy.get("/y").status == 401
    assert idp.token_requests() == 1
    assert "revoked-or-never-issued" not in proxy.log()


def test_unreachable_idp_answers_503_with_retry_after_and_backs_off(latchkey, idp):
    identity = password_identity(idp, token_url=f"http://127.0.0.1:{free_port()}/o/token/")
    proxy = serve(latchkey, idp, identity)
    r = proxy.get("/x")
    assert r.status == 503, r
    assert r.json()["error"] == "identity_unavailable"
    assert int(r.header("Retry-After")) >= 1
    # Within the back-off, no new attempt: one failure logged, not one per request.
    for _ in range(5):
        assert proxy.get("/x").status == 503
    assert proxy.log().count("event=failed") == 1
    assert idp.password not in proxy.log()


def test_auth_events_are_logged_and_run_the_hook(latchkey, idp, tmp_path):
    events = tmp_path / "events"
    hook = ["/bin/sh", "-c", f'echo "$LATCHKEY_IDENTITY $LATCHKEY_EVENT" >> {events}']
    proxy = serve(latchkey, idp, password_identity(idp, hook=hook))
    assert proxy.get("/1").status == 200
    idp.revoke_refresh_tokens()
    assert proxy.get("/2").status == 200  # refresh refused, then a new password grant
    assert wait_until(lambda: events.exists() and events.read_text().count("\n") >= 3)
    assert events.read_text().splitlines() == ["idp acquired", "idp failed", "idp acquired"]
    assert "auth state changed event=acquired identity=idp" in proxy.log()
    assert idp.password not in proxy.log()


def html_error_page(head, conn):
    page = b"<html><body><h1>502 Bad Gateway</h1>secret-looking-reflection</body></html>"
    conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: %d\r\n"
                 b"Connection: close\r\n\r\n%s" % (len(page), page))


def test_an_idp_answering_html_is_a_clear_error_without_its_body(latchkey, idp):
    broken = CannedServer(html_error_page)
    proxy = serve(latchkey, idp, password_identity(idp, token_url=broken.url + "/o/token/"))
    r = proxy.get("/x")
    assert r.status == 503, r
    message = r.json()["message"]
    assert "HTTP 502 with text/html" in message, message
    assert "secret-looking-reflection" not in r.body.decode() + proxy.log()
    assert idp.password not in proxy.log()


def test_token_endpoint_discovered_from_the_issuer(latchkey, idp):
    identity = password_identity(idp)
    del identity["token_url"]
    identity["issuer"] = idp.url
    proxy = serve(latchkey, idp, identity)
    r = proxy.get("/x")
    assert r.status == 200, r
    assert idp.token_requests("password") == 1
