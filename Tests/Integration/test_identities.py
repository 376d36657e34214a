"""Several identities per route and the identity CLI through the real binary: a request
picks an allowed identity with Latchkey-Identity (and is refused any other), `latchkey use`
switches a route's default in a running serve and across restarts, `status` shows every
identity without a secret, `token` prints a token the IdP accepts (refreshing it first,
so that a running serve goes on with the rotated refresh token), and `logout` revokes at
the IdP (django-oauth-toolkit, the Auth0 emulation) and leaves the running serve
answering login_required, even for an identity with a password in its configuration."""

import copy
import json
import time

from idp_support import fetch
from support import SECRET, config, free_port, wait_until
from test_idp_fixtures import password_grant
from test_login import api_route, browser_identity, first_success, login_config_file
from test_oauth import password_identity
from test_schemes import authorization, kii_config

STORE = ("state", "latchkey")


def cli(latchkey, *args, timeout: float = 60):
    return latchkey.run(list(args), timeout=timeout)


def config_file(latchkey, cfg: dict) -> str:
    return login_config_file(latchkey, cfg)


def store_path(latchkey, name: str):
    return latchkey.workdir.joinpath(*STORE, name)


def service_identity(idp, **extra) -> dict:
    identity = {"grant": "client_credentials", "token_url": idp.token_url, "client_id": idp.service_client.id,
                "client_secret": {"value": idp.service_client.secret}}
    identity.update(extra)
    return identity


def two_identity_config(idp) -> dict:
    """One route to the IdP's API that injects `alice` (password grant) and lets a request
    pick `service` (client credentials), which the echo tells apart by client_id; a second
    route injects a credential."""
    route = api_route(idp, "alice")
    route["selectable_identities"] = ["service"]
    plain = {"name": "plain", "path": "/plain", "upstream": idp.url + "/api",
             "inject": [{"header": "X-Key", "value": "{token}", "credential": "key"}]}
    return config(routes=[route, plain], credentials={"key": {"value": "k"}},
                  identities={"alice": password_identity(idp), "service": service_identity(idp)})


def refused(reply, error: str) -> dict:
    assert reply.header("Content-Type") == "application/json", reply
    doc = reply.json()
    assert doc["error"] == error, doc
    return doc


# ----- Latchkey-Identity ----------------------------------------------------------------------

def test_a_request_picks_one_of_the_routes_identities(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3600)
    proxy = latchkey.serve(two_identity_config(idp))
    default = proxy.get("/whoami")
    assert default.status == 200, default
    assert default.json()["client_id"] == idp.password_client.id
    picked = proxy.get("/whoami", headers=[("Latchkey-Identity", "service")])
    assert picked.status == 200, picked
    assert picked.json()["client_id"] == idp.service_client.id
    named = proxy.get("/whoami", headers=[("latchkey-identity", "alice")])
    assert named.json()["client_id"] == idp.password_client.id
    assert idp.token_requests("password") == idp.token_requests("client_credentials") == 1


def test_the_header_never_reaches_the_upstream(latchkey, upstream, tmp_path):
    proxy = latchkey.serve(kii_config(tmp_path, upstream))
    r = proxy.get("/kii/users/me", headers=[("Latchkey-Identity", "kii-bob"), ("Accept", "*/*")])
    assert r.status == 200, r
    assert authorization(r) == ["Bearer token-of-bob"]
    sent = [name.lower() for name, _ in r.json()["headers"]]
    assert "latchkey-identity" not in sent and "accept" in sent


def test_an_identity_the_route_does_not_allow_is_refused(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3600)
    cfg = two_identity_config(idp)
    cfg["identities"]["carol"] = service_identity(idp)
    proxy = latchkey.serve(cfg)
    carol = proxy.get("/x", headers=[("Latchkey-Identity", "carol")])
    assert carol.status == 403, carol
    doc = refused(carol, "identity_not_allowed")
    assert doc["message"] == ("the Latchkey-Identity header names identity carol, which route alice does not allow "
                              "(allowed: alice, service)")
    assert doc["route"] == "alice"

    hostile = proxy.get("/x", headers=[("Latchkey-Identity", '"><script>alert(1)</script>')])
    assert hostile.status == 403, hostile
    assert "script" not in hostile.body.decode() and "names an identity this configuration does not have" in hostile.body.decode()

    plain = proxy.get("/plain/x", headers=[("Latchkey-Identity", "alice")])
    assert plain.status == 403, plain
    assert refused(plain, "identity_not_allowed")["message"] == "route plain injects no identity; send no Latchkey-Identity header"

    both = proxy.get("/x", headers=[("Latchkey-Identity", "alice"), ("Latchkey-Identity", "service")])
    assert both.status == 400, both
    assert refused(both, "bad_request")["message"] == "more than one Latchkey-Identity header"

    # None of them spent a token, and the refusals are counted by their code.
    assert idp.token_requests() == 0 and idp.counters()["api"] == 0
    metrics = proxy.get("/.latchkey/metrics").body.decode()
    assert 'latchkey_refused_requests_total{reason="identity_not_allowed"} 3' in metrics


# ----- latchkey use ---------------------------------------------------------------------------

def test_use_switches_the_default_of_a_running_server_and_survives_a_restart(latchkey, upstream, tmp_path):
    cfg = kii_config(tmp_path, upstream)
    path = config_file(latchkey, cfg)
    proxy = latchkey.serve(copy.deepcopy(cfg))
    assert authorization(proxy.get("/kii/me")) == ["Bearer token-of-alice"]

    switched = cli(latchkey, "use", "kii", "kii-bob", "--config", path)
    assert switched.returncode == 0, switched.stderr
    assert switched.stdout == "route kii uses identity kii-bob from now on; a running serve takes it up within a second\n"
    assert wait_until(lambda: authorization(proxy.get("/kii/me")) == ["Bearer token-of-bob"], timeout=5), proxy.log_tail()
    assert proxy.wait_log(r"route identity changed .*identity=kii-bob")
    # A request may still pick the other one.
    assert authorization(proxy.get("/kii/me", headers=[("Latchkey-Identity", "kii-alice")])) == ["Bearer token-of-alice"]
    choices = store_path(latchkey, ".route-identities.json")
    assert oct(choices.stat().st_mode & 0o777) == "0o600"
    assert json.loads(choices.read_text()) == {"format": "latchkey-route-identities-v1", "routes": {"kii": "kii-bob"}}

    assert proxy.stop() == 0
    restarted = latchkey.serve(copy.deepcopy(cfg))
    assert authorization(restarted.get("/kii/me")) == ["Bearer token-of-bob"]

    back = cli(latchkey, "use", "kii", "kii-alice", "--config", path)
    assert back.returncode == 0, back.stderr
    assert "(its configured one)" in back.stdout
    assert wait_until(lambda: authorization(restarted.get("/kii/me")) == ["Bearer token-of-alice"], timeout=5)
    assert not choices.exists()


def test_use_refuses_what_the_route_does_not_allow(latchkey, upstream, tmp_path):
    cfg = kii_config(tmp_path, upstream)
    cfg["identities"]["kii-carol"] = {"grant": "static", "token": {"value": "token-of-carol"}}
    path = config_file(latchkey, cfg)
    carol = cli(latchkey, "use", "kii", "kii-carol", "--config", path)
    assert carol.returncode == 1
    assert ("route kii does not allow identity kii-carol (allowed: kii-alice, kii-bob); "
            "add it to the route's selectable_identities first") in carol.stderr
    nowhere = cli(latchkey, "use", "kiii", "kii-bob", "--config", path)
    assert nowhere.returncode == 1 and "has no route kiii (its routes: kii)" in nowhere.stderr
    in_memory = cli(latchkey, "use", "kii", "kii-bob", "--config", config_file(latchkey, dict(cfg, store={"type": "memory"})))
    assert in_memory.returncode == 1 and "store: type: memory" in in_memory.stderr
    assert not store_path(latchkey, ".route-identities.json").exists()


# ----- latchkey status ------------------------------------------------------------------------

def test_status_shows_every_identity_and_route_without_a_secret(latchkey, make_idp, upstream, tmp_path):
    idp = make_idp(access_token_seconds=3600)
    cfg = two_identity_config(idp)
    cfg["identities"]["web"] = browser_identity(idp)
    cfg["identities"]["kii"] = {"grant": "static", "token": {"value": "lk-itest-static-token-77"}}
    proxy = latchkey.serve(copy.deepcopy(cfg))
    seen = proxy.get("/x").json()
    path = config_file(latchkey, cfg)
    assert cli(latchkey, "use", "alice", "service", "--config", path).returncode == 0

    text = cli(latchkey, "status", "--config", path)
    assert text.returncode == 0, text.stderr
    identity_table, route_table = text.stdout.split("\n\n")
    rows = {line.split()[0]: line.split() for line in identity_table.splitlines()}
    assert rows["IDENTITY"] == ["IDENTITY", "GRANT", "TOKEN", "STATE", "EXPIRES", "OBTAINED", "REFRESH", "TOKEN", "NOTE"]
    assert rows["alice"][:4] == ["alice", "password", "store", "valid"]
    assert rows["alice"][5] == "(in" and rows["alice"][8] == "yes"  # expires in an hour; a refresh token
    assert rows["service"][:5] == ["service", "client_credentials", "store", "no", "token"]
    assert rows["web"][:5] == ["web", "authorization_code", "store", "login", "required"]
    assert rows["kii"][:4] == ["kii", "static", "static", "valid"]
    assert [line.split() for line in route_table.splitlines()] == [
        ["ROUTE", "IDENTITY", "CONFIGURED", "ALLOWED", "NOTE"], ["alice", "service", "alice", "alice,", "service"]]

    report = json.loads(cli(latchkey, "status", "--config", path, "--json").stdout)
    identities = {i["name"]: i for i in report["identities"]}
    alice = identities["alice"]
    assert (alice["state"], alice["source"], alice["refresh_token"]) == ("valid", "store", True)
    assert alice["expires_at"].endswith("Z") and alice["obtained_at"].endswith("Z")
    assert identities["web"]["state"] == "login_required" and "latchkey login web" in identities["web"]["detail"]
    assert identities["service"]["state"] == "no_token"
    assert identities["kii"]["source"] == "static"
    assert report["routes"] == [{"name": "alice", "identity": "service", "configured": "alice",
                                 "allowed": ["alice", "service"], "detail": None}]

    stored = json.loads(store_path(latchkey, "alice.json").read_text())["token"]
    for output in (text.stdout + text.stderr, json.dumps(report)):
        for secret in (seen["token"], stored["access_token"], stored["refresh_token"], idp.password,
                       idp.password_client.secret, "lk-itest-static-token-77"):
            assert secret not in output


def test_the_running_server_shows_what_only_it_knows_behind_the_listeners_checks(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3600)
    down = password_identity(idp, token_url=f"http://127.0.0.1:{free_port()}/o/token/")
    cfg = config(routes=[api_route(idp, "idp"), api_route(idp, "down", "/down")], credentials={},
                 identities={"idp": password_identity(idp), "down": down},
                 listeners=[{"name": "main", "inbound": {"shared_secret": {"header": "X-Latchkey-Secret", "value": SECRET}}}])
    proxy = latchkey.serve(cfg)
    secret = [("X-Latchkey-Secret", SECRET)]
    assert proxy.get("/.latchkey/identities").status == 401
    seen = proxy.get("/x", headers=secret).json()
    assert proxy.get("/down/x", headers=secret).status == 503

    r = proxy.get("/.latchkey/identities", headers=secret)
    assert r.status == 200, r
    assert r.header("Content-Type") == "application/json" and r.header("Cache-Control") == "no-store"
    identities = {i["name"]: i for i in r.json()["identities"]}
    assert (identities["idp"]["state"], identities["idp"]["refresh_token"]) == ("valid", True)
    assert identities["down"]["state"] == "failing"
    assert "cannot get an answer from the authorization server" in identities["down"]["detail"]
    assert "next attempt at" in identities["down"]["detail"]
    assert [route["identity"] for route in r.json()["routes"]] == ["idp", "down"]
    assert seen["token"] not in r.body.decode() and idp.password not in r.body.decode()
    assert proxy.request("POST", "/.latchkey/identities", headers=secret, body=b"").status == 405


def test_a_wrong_client_secret_is_named_everywhere_and_not_retried_until_its_file_changes(latchkey, idp, tmp_path):
    secret_file = tmp_path / "client_secret"
    secret_file.write_text("lk-itest-wrong-secret")
    secret_file.chmod(0o600)
    cfg = config(routes=[api_route(idp, "idp")], credentials={},
                 identities={"idp": password_identity(idp, client_secret={"file": str(secret_file)})})
    path = config_file(latchkey, cfg)
    proxy = latchkey.serve(copy.deepcopy(cfg))
    r = proxy.get("/1")
    assert r.status == 503 and r.header("Retry-After") is None, r
    message = refused(r, "identity_misconfigured")["message"]
    assert "invalid_client" in message and "identity idp" in message and "identities.idp.client_secret" in message

    live = proxy.get("/.latchkey/identities").json()["identities"][0]
    stored = json.loads(cli(latchkey, "status", "--config", path, "--json").stdout)["identities"][0]
    for status in (live, stored):
        assert status["state"] == "misconfigured", status
        assert status["last_error"]["config_key"] == "identities.idp.client_secret"
        assert "invalid_client" in status["last_error"]["message"] and status["last_error"]["at"].endswith("Z")
    # Requests keep coming; the IdP sees no other token request.
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        assert proxy.get("/again").status == 503
        time.sleep(0.1)
    assert idp.token_requests() == idp.token_errors("invalid_client") == 1

    secret_file.write_text(idp.password_client.secret)
    assert wait_until(lambda: proxy.get("/fixed").status == 200, timeout=10), proxy.log_tail()
    assert idp.token_requests() == 2
    fixed = json.loads(cli(latchkey, "status", "--config", path, "--json").stdout)["identities"][0]
    assert (fixed["state"], fixed["last_error"]) == ("valid", None)
    assert "lk-itest-wrong-secret" not in proxy.log() and idp.password_client.secret not in proxy.log()


# ----- latchkey token -------------------------------------------------------------------------

def test_token_prints_a_token_the_idp_accepts_and_refreshes_an_expired_one_for_the_server(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3)
    cfg = config(routes=[api_route(idp, "idp")], credentials={},
                 identities={"idp": password_identity(idp, refresh_ahead="0s", clock_skew="0s")})
    path = config_file(latchkey, cfg)
    proxy = latchkey.serve(copy.deepcopy(cfg))
    first = proxy.get("/1").json()["token"]

    printed = cli(latchkey, "token", "idp", "--config", path)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == first + "\n" and printed.stderr == ""
    assert idp.token_requests() == 1

    time.sleep(3.3)  # expired: the command refreshes it, and stores the rotated refresh token
    renewed = cli(latchkey, "token", "idp", "--config", path)
    assert renewed.returncode == 0, renewed.stderr
    token = renewed.stdout.strip()
    assert token and token != first
    assert idp.token_requests("refresh_token") == 1
    assert fetch(idp.api_url, headers={"Authorization": f"Bearer {token}"}).json()["user"] == idp.username
    assert json.loads(store_path(latchkey, "idp.json").read_text())["token"]["access_token"] == token

    # The server goes on with what the command stored, never with the spent refresh token.
    r = proxy.get("/2")
    assert r.status == 200, r
    assert r.json()["token"] == token
    time.sleep(3.3)
    assert proxy.get("/3").status == 200
    assert idp.token_requests("refresh_token") == 2 and idp.token_requests("password") == 1
    assert "invalid_grant" not in proxy.log()


def test_token_of_an_identity_that_needs_a_login_fails_clearly(latchkey, idp):
    cfg = config(routes=[api_route(idp, "web")], credentials={}, identities={"web": browser_identity(idp)})
    path = config_file(latchkey, cfg)
    r = cli(latchkey, "token", "web", "--config", path)
    assert r.returncode == 1
    assert r.stdout == ""
    assert f"identity web needs a login (no token yet): run `latchkey login web --config {path}`" in r.stderr
    unknown = cli(latchkey, "token", "nobody", "--config", path)
    assert unknown.returncode == 1 and "has no identity nobody (its identities: web)" in unknown.stderr


# ----- latchkey logout ------------------------------------------------------------------------

def test_logout_revokes_at_the_idp_and_the_server_answers_login_required(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3600)
    # The issuer's metadata names the revocation endpoint.
    identity = password_identity(idp, issuer=idp.url)
    del identity["token_url"]
    cfg = config(routes=[api_route(idp, "idp")], credentials={}, identities={"idp": identity})
    path = config_file(latchkey, cfg)
    proxy = latchkey.serve(copy.deepcopy(cfg))
    assert proxy.get("/1").status == 200
    stored = json.loads(store_path(latchkey, "idp.json").read_text())["token"]

    out = cli(latchkey, "logout", "idp", "--config", path)
    assert out.returncode == 0, out.stderr
    assert out.stdout == (f"logged out identity idp: its tokens are out of the store; revoked its refresh token and access token "
                          f"at {idp.url}/o/revoke_token/\n")
    assert idp.revocations("refresh_token") == 1 and idp.revocations("access_token") == 1
    dead = fetch(idp.token_url, form={"grant_type": "refresh_token", "refresh_token": stored["refresh_token"]},
                 basic=(idp.password_client.id, idp.password_client.secret))
    assert dead.status == 400 and dead.json()["error"] == "invalid_grant"
    assert json.loads(store_path(latchkey, "idp.json").read_text()) == {"format": "latchkey-token-v1", "logged_out": True}

    # The running server: login_required, and no silent password grant behind the user's back.
    line = proxy.wait_log(r"event=logged_out", timeout=10)
    assert line and "identity=idp" in line, proxy.log_tail()
    metrics = proxy.get("/.latchkey/metrics").body.decode()
    assert 'latchkey_auth_events_total{identity="idp",event="logged_out"} 1' in metrics
    for attempt in range(3):
        r = proxy.get(f"/after-{attempt}")
        assert r.status == 401, r
        doc = refused(r, "login_required")
        assert "logged out with `latchkey logout`" in doc["message"] and "`latchkey login idp`" in doc["message"]
    assert idp.token_requests("password") == 1

    # Nor after a restart; `latchkey login` ends the logout, and the server takes it up.
    assert proxy.stop() == 0
    restarted = latchkey.serve(copy.deepcopy(cfg))
    assert restarted.get("/restarted").status == 401
    assert idp.token_requests("password") == 1
    login = cli(latchkey, "login", "idp", "--config", path)
    assert login.returncode == 0, login.stderr
    assert first_success(restarted, "/back").json()["user"] == idp.username
    for secret in (stored["access_token"], stored["refresh_token"]):
        assert secret not in out.stdout + out.stderr + proxy.log() + restarted.log()


def test_logout_all_with_auth0_revokes_at_the_revocation_url(latchkey, auth0):
    def auth0_identity() -> dict:
        return {"grant": "password", "token_url": auth0.url + "/oauth/token", "revocation_url": auth0.url + "/oauth/revoke",
                "username": auth0.username, "password": {"value": auth0.password}, "scope": "openid offline_access",
                "client_id": auth0.client_id, "client_secret": {"value": auth0.client_secret}, "client_auth": "client_secret_post"}

    routes = [{"name": name, "path": f"/{name}", "upstream": auth0.url + "/api",
               "inject": [{"header": "Authorization", "value": "Bearer {access_token}", "identity": name}]}
              for name in ("first", "second")]
    cfg = config(routes=routes, credentials={}, identities={"first": auth0_identity(), "second": auth0_identity(),
                                                          "kii": {"grant": "static", "token": {"value": "lk-itest-kii-token"}}})
    path = config_file(latchkey, cfg)
    proxy = latchkey.serve(copy.deepcopy(cfg))
    assert proxy.get("/first/x").status == 200 and proxy.get("/second/x").status == 200
    refresh_tokens = [json.loads(store_path(latchkey, f"{name}.json").read_text())["token"]["refresh_token"]
                      for name in ("first", "second")]

    out = cli(latchkey, "logout", "--all", "--config", path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines == [f"logged out identity {name}: its tokens are out of the store; revoked its refresh token and access token "
                     f"at {auth0.url}/oauth/revoke" for name in ("first", "second")]
    assert auth0.counters().get("revoke") == 4
    for refresh_token in refresh_tokens:
        r = fetch(auth0.url + "/oauth/token", form={"grant_type": "refresh_token", "refresh_token": refresh_token,
                                                   "client_id": auth0.client_id, "client_secret": auth0.client_secret})
        assert r.status == 403 and r.json()["error"] == "invalid_grant"
    for name in ("first", "second"):
        assert wait_until(lambda: proxy.get(f"/{name}/y").status == 401, timeout=10), proxy.log_tail()
    assert auth0.token_requests("password") == 2

    usage = cli(latchkey, "logout", "--config", path)
    assert usage.returncode != 0 and "give an identity, or --all" in usage.stderr
    static = cli(latchkey, "logout", "kii", "--config", path)
    assert static.returncode == 1 and "uses a static token from its configuration; there is nothing to log out of" in static.stderr


def test_a_seeded_identity_logged_out_comes_back_with_a_login_that_redeems_its_refresh_token(latchkey, make_idp, tmp_path):
    idp = make_idp(access_token_seconds=3600)
    seed_file = tmp_path / "seed"

    def new_seed() -> None:
        seed_file.write_text(password_grant(idp)["refresh_token"])
        seed_file.chmod(0o600)

    new_seed()
    identity = {"grant": "refresh_token", "token_url": idp.token_url, "revocation_url": idp.revoke_url,
                "refresh_token": {"file": str(seed_file)},
                "client_id": idp.password_client.id, "client_secret": {"value": idp.password_client.secret}}
    cfg = config(routes=[api_route(idp, "seeded")], credentials={}, identities={"seeded": identity})
    path = config_file(latchkey, cfg)
    proxy = latchkey.serve(copy.deepcopy(cfg))
    assert proxy.get("/1").status == 200
    out = cli(latchkey, "logout", "seeded", "--config", path)
    assert out.returncode == 0, out.stderr
    assert "revoked its refresh token and access token" in out.stdout
    assert wait_until(lambda: proxy.get("/2").status == 401, timeout=10), proxy.log_tail()

    # The configured seed was spent by the first refresh: a login with it is refused...
    spent = cli(latchkey, "login", "seeded", "--config", path)
    assert spent.returncode == 1 and "invalid_grant" in spent.stderr
    # ...and a new one put in the configuration brings the identity back.
    new_seed()
    login = cli(latchkey, "login", "seeded", "--config", path)
    assert login.returncode == 0, login.stderr
    assert login.stdout.startswith("identity seeded redeemed its configured refresh_token: access token valid until ")
    assert first_success(proxy, "/3").json()["user"] == idp.username


def test_a_failed_revocation_is_reported_and_the_tokens_still_leave(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3600)
    unreachable = idp.url.rsplit(":", 1)[0] + ":9/o/revoke_token/"
    cfg = config(routes=[api_route(idp, "idp"), api_route(idp, "other", "/other")], credentials={},
                 identities={"idp": password_identity(idp, revocation_url=unreachable), "other": service_identity(idp)})
    path = config_file(latchkey, cfg)
    proxy = latchkey.serve(copy.deepcopy(cfg))
    assert proxy.get("/x").status == 200 and proxy.get("/other/x").status == 200

    failed = cli(latchkey, "logout", "idp", "--config", path)
    assert failed.returncode == 1
    assert failed.stdout == "logged out identity idp: its tokens are out of the store\n"
    assert f"cannot revoke the tokens of identity idp at {unreachable}: the refresh token: cannot get an answer" in failed.stderr
    assert "they may stay valid at the IdP until they expire" in failed.stderr
    assert wait_until(lambda: proxy.get("/y").status == 401, timeout=10), proxy.log_tail()

    # No endpoint known at all: removed, said so, and not a failure.
    unrevoked = cli(latchkey, "logout", "other", "--config", path)
    assert unrevoked.returncode == 0, unrevoked.stderr
    assert "not revoked, as no revocation endpoint is known (set revocation_url, or issuer to discover it)" in unrevoked.stdout
    assert wait_until(lambda: proxy.get("/other/y").status == 401, timeout=10)
    status = json.loads(cli(latchkey, "status", "--config", path, "--json").stdout)
    assert [i["state"] for i in status["identities"]] == ["login_required", "login_required"]


def test_help_names_the_identity_commands(latchkey):
    overview = cli(latchkey, "--help")
    assert overview.returncode == 0
    for command in ("logout", "status", "token", "use"):
        assert f"\n  {command} " in overview.stdout
    assert "USAGE: latchkey token <identity> --config <file>" in cli(latchkey, "token", "--help").stdout
    assert "USAGE: latchkey use <route> <identity> --config <file>" in cli(latchkey, "use", "--help").stdout
    assert "USAGE: latchkey status --config <file> [--json]" in cli(latchkey, "status", "--help").stdout
