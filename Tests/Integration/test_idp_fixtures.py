"""The identity providers the OAuth2 tests run latchkey against, checked directly (no
latchkey): django-oauth-toolkit (idp), the Podio, Auth0 and TheMovieDB emulations."""

import base64
import hashlib
import json
import secrets
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

from idp_support import fetch
from support import free_port, wait_until


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def password_grant(idp, **extra) -> dict:
    r = fetch(idp.token_url, basic=(idp.password_client.id, idp.password_client.secret),
              form={"grant_type": "password", "username": idp.username, "password": idp.password, **extra})
    assert r.status == 200, r.text
    return r.json()


def refresh(idp, refresh_token: str):
    return fetch(idp.token_url, form={"grant_type": "refresh_token", "refresh_token": refresh_token,
                                      "client_id": idp.password_client.id,
                                      "client_secret": idp.password_client.secret})


def jwt_claims(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


# ----- django-oauth-toolkit ---------------------------------------------------------------------

def test_idp_password_grant_token_reaches_api_with_body(idp):
    tokens = password_grant(idp)
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 3 and tokens["refresh_token"]
    body = b'{"replayed": "intact \xc3\xa9"}'
    r = fetch(idp.api_url + "?x=1", method="POST", body=body,
              headers={**bearer(tokens["access_token"]), "Content-Type": "application/json"})
    assert r.status == 200, r.text
    seen = r.json()
    assert seen["user"] == idp.username and seen["client_id"] == idp.password_client.id
    assert seen["token"] == tokens["access_token"]
    assert (seen["method"], seen["path"], seen["query"]) == ("POST", "/api/echo", "x=1")
    assert seen["body"] == body.decode() and seen["body_sha256"] == hashlib.sha256(body).hexdigest()


def test_idp_accepts_client_secret_post(idp):
    r = fetch(idp.token_url, form={"grant_type": "password", "username": idp.username, "password": idp.password,
                                   "client_id": idp.password_client.id, "client_secret": idp.password_client.secret})
    assert r.status == 200, r.text
    bad = fetch(idp.token_url, form={"grant_type": "password", "username": idp.username, "password": "wrong",
                                     "client_id": idp.password_client.id,
                                     "client_secret": idp.password_client.secret})
    assert bad.status == 400 and bad.json()["error"] == "invalid_grant"


def test_idp_api_without_token_is_401(idp):
    r = fetch(idp.api_url)
    assert r.status == 401 and r.headers["www-authenticate"].startswith("Bearer")
    assert "error=" not in r.headers["www-authenticate"]  # RFC 6750 §3.1: no token, no error code
    r = fetch(idp.api_url, headers=bearer("not-a-token"))
    assert r.status == 401 and 'error="invalid_token"' in r.headers["www-authenticate"]


def test_idp_access_token_stops_working_after_its_lifetime(make_idp):
    idp = make_idp(access_token_seconds=1)
    token = password_grant(idp)["access_token"]
    assert fetch(idp.api_url, headers=bearer(token)).status == 200
    expired = wait_until(lambda: (r := fetch(idp.api_url, headers=bearer(token))).status == 401 and r,
                         timeout=5, interval=0.2)
    assert expired, "the access token still worked 5 s after its 1 s lifetime"
    assert 'error="invalid_token"' in expired.headers["www-authenticate"]


def test_idp_refresh_rotates_and_old_refresh_token_is_invalid_grant(idp):
    first = password_grant(idp)
    r = refresh(idp, first["refresh_token"])
    assert r.status == 200, r.text
    second = r.json()
    assert second["refresh_token"] != first["refresh_token"]
    assert fetch(idp.api_url, headers=bearer(second["access_token"])).status == 200
    again = refresh(idp, first["refresh_token"])
    assert again.status == 400 and again.json()["error"] == "invalid_grant"


def test_idp_counters_count_token_and_revocation_requests(idp):
    tokens = password_grant(idp)
    refresh(idp, tokens["refresh_token"])
    refresh(idp, tokens["refresh_token"])  # refused, still counted
    fetch(idp.api_url, headers=bearer(tokens["access_token"]))
    revoked = fetch(idp.revoke_url, form={"token": tokens["access_token"], "token_type_hint": "access_token"},
                    basic=(idp.password_client.id, idp.password_client.secret))
    assert revoked.status == 200
    assert idp.counters() == {"token": {"total": 3, "password": 1, "refresh_token": 2}, "api": 1,
                              "token_errors": {"invalid_grant": 1},
                              "revoke": {"total": 1, "access_token": 1}}
    assert idp.token_requests("refresh_token") == 2
    assert idp.token_errors("invalid_grant") == idp.token_errors() == 1
    assert idp.revocations("access_token") == 1 and idp.revocations("refresh_token") == 0
    idp.reset_counters()
    assert idp.counters() == {"token": {"total": 0}, "api": 0, "token_errors": {}, "revoke": {"total": 0}}
    assert idp.token_answers() == []


def test_idp_records_the_refresh_tokens_each_token_answer_took_and_gave(idp):
    tokens = password_grant(idp)
    rotated = refresh(idp, tokens["refresh_token"]).json()["refresh_token"]
    refresh(idp, tokens["refresh_token"])  # spent: refused
    answers = idp.token_answers()
    assert [(a["grant_type"], a["status"], a["presented"], a["issued"], a["error"]) for a in answers] == [
        ("password", 200, None, tokens["refresh_token"], None),
        ("refresh_token", 200, tokens["refresh_token"], rotated, None),
        ("refresh_token", 400, tokens["refresh_token"], None, "invalid_grant"),
    ]
    assert answers[0]["answered_at"] <= answers[1]["answered_at"] <= answers[2]["answered_at"]
    assert idp.token_answers(since=2) == answers[2:]


def test_idp_revoke_refresh_tokens_forces_invalid_grant(idp):
    tokens = password_grant(idp)
    assert idp.revoke_refresh_tokens(idp.username) == 1
    r = refresh(idp, tokens["refresh_token"])
    assert r.status == 400 and r.json()["error"] == "invalid_grant"
    assert fetch(idp.api_url, headers=bearer(tokens["access_token"])).status == 401


def test_idp_expire_access_tokens_now(make_idp):
    idp = make_idp(access_token_seconds=3600)
    tokens = password_grant(idp)
    assert idp.expire_access_tokens() == 1
    assert fetch(idp.api_url, headers=bearer(tokens["access_token"])).status == 401
    assert refresh(idp, tokens["refresh_token"]).status == 200


def test_idp_client_credentials(idp):
    r = fetch(idp.token_url, form={"grant_type": "client_credentials"},
              basic=(idp.service_client.id, idp.service_client.secret))
    assert r.status == 200, r.text
    tokens = r.json()
    assert "refresh_token" not in tokens
    seen = fetch(idp.api_url, headers=bearer(tokens["access_token"])).json()
    assert seen["client_id"] == idp.service_client.id
    assert idp.token_requests("client_credentials") == 1


def _authorization_request(idp, challenge: str, state: str, redirect_uri: str) -> str:
    query = {"response_type": "code", "client_id": idp.public_client.id, "redirect_uri": redirect_uri,
             "state": state, "scope": "read write"}
    if challenge:
        query.update(code_challenge=challenge, code_challenge_method="S256")
    return f"{idp.authorize_url}?{urllib.parse.urlencode(query)}"


def test_idp_authorization_code_with_pkce_on_any_loopback_port(idp):
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
    location = idp.authorize(_authorization_request(idp, challenge, "st-123", redirect_uri))
    assert location.startswith(redirect_uri + "?")
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))
    assert params["state"] == "st-123" and params["code"]

    def exchange(code_verifier):
        return fetch(idp.token_url, form={"grant_type": "authorization_code", "code": params["code"],
                                          "redirect_uri": redirect_uri, "client_id": idp.public_client.id,
                                          "code_verifier": code_verifier})

    assert exchange("wrong-" + verifier).json()["error"] == "invalid_grant"
    r = exchange(verifier)
    assert r.status == 200, r.text
    tokens = r.json()
    seen = fetch(idp.api_url, headers=bearer(tokens["access_token"])).json()
    assert (seen["user"], seen["client_id"]) == (idp.username, idp.public_client.id)
    assert refresh_public(idp, tokens["refresh_token"]).status == 200


def refresh_public(idp, refresh_token: str):
    return fetch(idp.token_url, form={"grant_type": "refresh_token", "refresh_token": refresh_token,
                                      "client_id": idp.public_client.id})


def test_idp_authorization_code_requires_pkce(idp):
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
    location = idp.authorize(_authorization_request(idp, "", "st-9", redirect_uri))
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))
    assert params["error"] == "invalid_request" and "code" not in params


def test_idp_device_authorization_grant(idp):
    r = fetch(idp.device_authorization_url, form={"client_id": idp.device_client.id})
    assert r.status == 200, r.text
    device = r.json()
    assert device["verification_uri"] == f"{idp.url}/o/device/" and device["interval"] == 1
    poll = {"grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": device["device_code"],
            "client_id": idp.device_client.id}
    pending = fetch(idp.token_url, form=poll)
    assert pending.status == 400 and pending.json()["error"] == "authorization_pending"
    idp.approve_device(device["user_code"])
    r = fetch(idp.token_url, form=poll)
    assert r.status == 200, r.text
    seen = fetch(idp.api_url, headers=bearer(r.json()["access_token"])).json()
    assert (seen["user"], seen["client_id"]) == (idp.username, idp.device_client.id)


def test_idp_discovery_document(idp):
    meta = fetch(idp.metadata_url).json()
    assert meta["issuer"] == idp.url
    assert (meta["token_endpoint"], meta["authorization_endpoint"]) == (idp.token_url, idp.authorize_url)
    assert meta["code_challenge_methods_supported"] == ["S256"]


def test_idp_serves_200_concurrent_api_requests(idp):
    token = password_grant(idp)["access_token"]
    with ThreadPoolExecutor(200) as pool:
        statuses = list(pool.map(lambda i: fetch(idp.api_url, headers=bearer(token), timeout=60).status,
                                 range(200)))
    assert statuses == [200] * 200
    assert idp.counters()["api"] == 200


# ----- Podio ------------------------------------------------------------------------------------

def podio_token(podio, **form):
    return fetch(podio.url + "/oauth/token",
                 form={"client_id": podio.client_id, "client_secret": podio.client_secret, **form})


def test_podio_app_grant_and_oauth2_header_scheme(podio):
    r = podio_token(podio, grant_type="app", app_id=podio.app_id, app_token=podio.app_token)
    assert r.status == 200, r.text
    tokens = r.json()
    assert tokens["token_type"] == "bearer" and tokens["ref"] == {"type": "app", "id": int(podio.app_id)}
    ok = fetch(podio.url + "/item/42", headers={"Authorization": f"OAuth2 {tokens['access_token']}"})
    assert ok.status == 200 and ok.json()["ref"]["type"] == "app" and ok.json()["path"] == "/item/42"
    refused = fetch(podio.url + "/item/42", headers=bearer(tokens["access_token"]))
    assert refused.status == 401 and refused.json()["error"] == "unauthorized"
    chunked = fetch(podio.url + "/item/42/value", method="PUT", body=iter([b'{"value":', b' "done"}']),
                    headers={"Authorization": f"OAuth2 {tokens['access_token']}"})
    assert chunked.json()["body"] == '{"value": "done"}'
    assert podio.counters() == {"token": {"total": 1, "app": 1}, "api": 3}


def test_podio_password_grant_expiry_and_refresh_rotation(podio):
    tokens = podio_token(podio, grant_type="password", username=podio.username, password=podio.password).json()
    assert tokens["ref"]["type"] == "user"
    header = {"Authorization": f"OAuth2 {tokens['access_token']}"}
    assert podio.expire_access_tokens() == 1
    r = fetch(podio.url + "/user/status", headers=header)
    assert r.status == 401 and r.json()["error_description"] == "expired_token"
    rotated = podio_token(podio, grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert rotated.status == 200 and rotated.json()["refresh_token"] != tokens["refresh_token"]
    reused = podio_token(podio, grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert reused.status == 400 and reused.json()["error"] == "invalid_grant"
    assert podio_token(podio, grant_type="password", username=podio.username, password="x").status == 400
    assert podio.token_requests("refresh_token") == 2


# ----- Auth0 ------------------------------------------------------------------------------------

def auth0_login(auth0, scope="openid profile offline_access") -> dict:
    r = fetch(auth0.url + "/oauth/token", json_body={
        "grant_type": "http://auth0.com/oauth/grant-type/password-realm", "realm": auth0.realm,
        "username": auth0.username, "password": auth0.password, "scope": scope,
        "client_id": auth0.client_id, "client_secret": auth0.client_secret})
    assert r.status == 200, r.text
    return r.json()


def test_auth0_userinfo_valid_then_invalidated(auth0):
    tokens = auth0_login(auth0)
    assert tokens["token_type"] == "Bearer" and tokens["id_token"] and tokens["refresh_token"]
    assert jwt_claims(tokens["access_token"])["exp"] > jwt_claims(tokens["access_token"])["iat"]
    r = fetch(auth0.url + "/userinfo", headers=bearer(tokens["access_token"]))
    assert r.status == 200 and r.json()["sub"] == auth0.user_sub
    assert auth0.invalidate_access_token(tokens["access_token"])
    r = fetch(auth0.url + "/userinfo", headers=bearer(tokens["access_token"]))
    assert r.status == 401 and 'error="invalid_token"' in r.headers["www-authenticate"]
    assert auth0.counters() == {"token": {"total": 1, "http://auth0.com/oauth/grant-type/password-realm": 1},
                                "userinfo": 2}


def test_auth0_refresh_rotation_reuse_detection_and_revoke(auth0):
    basic = (auth0.client_id, auth0.client_secret)

    def refresh_with(refresh_token):
        return fetch(auth0.url + "/oauth/token", form={"grant_type": "refresh_token", "refresh_token": refresh_token},
                     basic=basic)

    first = auth0_login(auth0)
    second = refresh_with(first["refresh_token"])
    assert second.status == 200
    assert fetch(auth0.url + "/api/v1", headers=bearer(second.json()["access_token"])).status == 200
    # Reusing the first refresh token fails and takes the rotated one with it.
    reused = refresh_with(first["refresh_token"])
    assert reused.status == 403 and reused.json()["error"] == "invalid_grant"
    assert refresh_with(second.json()["refresh_token"]).status == 403
    # Logout: revoke a fresh login's refresh token.
    fresh = auth0_login(auth0)
    assert fetch(auth0.url + "/oauth/revoke", basic=basic, json_body={"token": fresh["refresh_token"]}).status == 200
    assert refresh_with(fresh["refresh_token"]).status == 403
    assert auth0.counters()["revoke"] == 1


def test_auth0_no_refresh_token_without_offline_access_and_wrong_password(auth0):
    assert "refresh_token" not in auth0_login(auth0, scope="openid profile")
    r = fetch(auth0.url + "/oauth/token", form={"grant_type": "password", "username": auth0.username,
                                                "password": "wrong", "client_id": auth0.native_client_id})
    assert r.status == 403 and r.json()["error"] == "invalid_grant"


# ----- TheMovieDB -------------------------------------------------------------------------------

def tmdb_call(tmdb, method: str, path: str, body=None, **query):
    query.setdefault("api_key", tmdb.api_key)
    return fetch(f"{tmdb.base_url}/{path}?{urllib.parse.urlencode(query)}", method=method, json_body=body)


def tmdb_session(tmdb) -> str:
    """TMDB's three calls, as its documentation writes them."""
    token = tmdb_call(tmdb, "GET", "authentication/token/new").json()["request_token"]
    login = {"username": tmdb.username, "password": tmdb.password, "request_token": token}
    assert tmdb_call(tmdb, "POST", "authentication/token/validate_with_login", login).json()["success"] is True
    r = tmdb_call(tmdb, "POST", "authentication/session/new", {"request_token": token})
    assert r.status == 200 and r.json()["success"] is True, r.text
    return r.json()["session_id"]


def tmdb_error(reply, status: int, code: int) -> None:
    assert reply.status == status and reply.json()["status_code"] == code and reply.json()["success"] is False, \
        (reply.status, reply.text)


def test_tmdb_request_token_session_and_account(tmdb):
    r = tmdb_call(tmdb, "GET", "authentication/token/new")
    assert r.status == 200 and r.headers["content-type"].startswith("application/json")
    doc = r.json()
    assert doc["success"] is True and len(doc["request_token"]) == 40
    expires = time.mktime(time.strptime(doc["expires_at"], "%Y-%m-%d %H:%M:%S UTC")) - time.timezone
    assert 3590 < expires - time.time() <= 3600

    session = tmdb_session(tmdb)
    account = tmdb_call(tmdb, "GET", "account", session_id=session).json()
    assert (account["id"], account["username"]) == (tmdb.account_id, tmdb.username)
    assert tmdb.sessions_created == 1 and tmdb.live_sessions() == [session]
    assert tmdb.counters() == {"token_new": 2, "validate_with_login": 1, "session_new": 1, "account": 1,
                               "sessions_created": 1}
    assert [sorted(c.raw_query.split("&")) for c in tmdb.calls("account")] == [
        [f"api_key={tmdb.api_key}", f"session_id={session}"]]
    validated = tmdb.calls("validate_with_login")[0].json()["request_token"]
    assert tmdb.calls("session_new")[0].json() == {"request_token": validated}


def test_tmdb_refuses_a_wrong_login_an_unknown_or_spent_token_and_a_wrong_key(tmdb):
    token = tmdb_call(tmdb, "GET", "authentication/token/new").json()["request_token"]
    wrong = {"username": tmdb.username, "password": "wrong", "request_token": token}
    tmdb_error(tmdb_call(tmdb, "POST", "authentication/token/validate_with_login", wrong), 401, 30)
    tmdb_error(tmdb_call(tmdb, "POST", "authentication/token/validate_with_login", {"request_token": token}), 400, 26)
    unknown = {"username": tmdb.username, "password": tmdb.password, "request_token": "0" * 40}
    tmdb_error(tmdb_call(tmdb, "POST", "authentication/token/validate_with_login", unknown), 401, 33)
    # Not validated: no session; validated: one session, once.
    tmdb_error(tmdb_call(tmdb, "POST", "authentication/session/new", {"request_token": token}), 401, 17)
    right = {**wrong, "password": tmdb.password}
    assert tmdb_call(tmdb, "POST", "authentication/token/validate_with_login", right).status == 200
    assert tmdb_call(tmdb, "POST", "authentication/session/new", {"request_token": token}).status == 200
    tmdb_error(tmdb_call(tmdb, "POST", "authentication/session/new", {"request_token": token}), 401, 33)
    # An expired request token.
    late = tmdb_call(tmdb, "GET", "authentication/token/new").json()["request_token"]
    tmdb.expire_request_tokens()
    tmdb_error(tmdb_call(tmdb, "POST", "authentication/token/validate_with_login", {**unknown, "request_token": late}),
               401, 33)
    # The key: missing or wrong, then revoked.
    tmdb_error(tmdb_call(tmdb, "GET", "authentication/token/new", api_key="nope"), 401, 7)
    tmdb_error(fetch(f"{tmdb.base_url}/authentication/token/new"), 401, 7)
    tmdb.revoke_api_key()
    tmdb_error(tmdb_call(tmdb, "GET", "authentication/token/new"), 401, 7)
    tmdb_error(tmdb_call(tmdb, "GET", "movie/550"), 401, 7)
    assert tmdb.sessions_created == 1


def test_tmdb_sessions_invalidated_or_deleted_get_status_code_3(tmdb):
    first, second = tmdb_session(tmdb), tmdb_session(tmdb)
    tmdb_error(tmdb_call(tmdb, "GET", "account"), 401, 3)
    tmdb_error(tmdb_call(tmdb, "GET", f"account/{tmdb.account_id + 1}/favorite/movies", session_id=first), 401, 3)
    assert tmdb.invalidate_session(first) == 1
    tmdb_error(tmdb_call(tmdb, "GET", "account", session_id=first), 401, 3)
    assert tmdb_call(tmdb, "GET", "account", session_id=second).status == 200
    assert tmdb_call(tmdb, "DELETE", "authentication/session", {"session_id": second}).json() == {"success": True}
    tmdb_error(tmdb_call(tmdb, "GET", "account", session_id=second), 401, 3)
    tmdb_error(tmdb_call(tmdb, "DELETE", "authentication/session", {"session_id": second}), 404, 6)
    assert tmdb.deleted_sessions() == [second] and tmdb.live_sessions() == []
    tmdb_error(tmdb_call(tmdb, "GET", "movie/550"), 404, 34)


def test_tmdb_favorites_are_recorded(tmdb):
    session = tmdb_session(tmdb)
    path = f"account/{tmdb.account_id}/favorite"
    add = {"media_type": "movie", "media_id": 550, "favorite": True}
    r = tmdb_call(tmdb, "POST", path, add, session_id=session)
    assert r.status == 201 and r.json()["status_code"] == 1, r.text
    assert tmdb_call(tmdb, "POST", path, add, session_id=session).json()["status_code"] == 12
    movies = tmdb_call(tmdb, "GET", f"{path}/movies", session_id=session).json()
    assert movies["results"] == [{"id": 550, "title": "Movie 550"}] and movies["total_results"] == 1
    assert tmdb_call(tmdb, "POST", path, {**add, "favorite": False}, session_id=session).json()["status_code"] == 13
    tmdb_error(tmdb_call(tmdb, "POST", path, {"media_id": "550"}, session_id=session), 422, 5)
    assert tmdb.favorites() == []
    assert [c.json() for c in tmdb.calls("favorite")][:2] == [add, add]


def test_tmdb_html_answers_slow_answers_and_concurrent_calls(tmdb):
    tmdb.answer_html("session_new", 503)
    r = tmdb_call(tmdb, "POST", "authentication/session/new", {"request_token": "x"})
    assert r.status == 503 and r.headers["content-type"].startswith("text/html") and b"<html>" in r.body
    tmdb.answer_html("session_new", None)
    session = tmdb_session(tmdb)
    tmdb.slow("account", 0.5)
    started = time.monotonic()
    with ThreadPoolExecutor(50) as pool:
        statuses = list(pool.map(lambda _: tmdb_call(tmdb, "GET", "account", session_id=session).status, range(50)))
    assert statuses == [200] * 50 and time.monotonic() - started < 5
    assert tmdb.counters()["account"] == 50
