"""The example configs of the auth schemes Latchkey reproduces (Configs/), each run
against a local emulation of its API with only the addresses and secrets swapped."""

import yaml

from idp_support import fetch
from support import REPO, free_port


def example(name: str) -> dict:
    return yaml.safe_load((REPO / "Configs" / name).read_text())


def test_podio_app_authentication(latchkey, make_podio):
    podio = make_podio(access_token_seconds=3600)
    cfg = example("podio.yaml")
    cfg["listeners"] = [{"name": "main"}]
    app = cfg["identities"]["podio-app"]
    app["token_url"] = f"{podio.url}/oauth/token"
    app["client_id"] = podio.client_id
    app["params"]["app_id"] = podio.app_id
    cfg["routes"][0]["upstream"] = podio.url
    proxy = latchkey.serve(cfg, env={"PODIO_APP_TOKEN": podio.app_token, "PODIO_CLIENT_SECRET": podio.client_secret})

    r = proxy.get("/podio/item/1")
    assert r.status == 200, r
    seen = r.json()
    assert seen["ref"] == {"type": "app", "id": int(podio.app_id)}
    assert seen["path"] == "/item/1"
    assert podio.token_requests("app") == 1

    # Podio says expired_token: the token is refreshed and the request replayed.
    podio.expire_access_tokens()
    r = proxy.request("POST", "/podio/item/2", body=b'{"title": "x"}')
    assert r.status == 200, r
    assert r.json()["body"] == '{"title": "x"}'
    assert podio.token_requests("refresh_token") == 1
    assert podio.app_token not in proxy.log()


KII_APP_KEY = "app-key-of-my-app"


def kii_config(tmp_path, upstream) -> dict:
    """Configs/kii.yaml with its listener on a free port, its users' token files in tmp_path
    (token-of-alice, token-of-bob), its application key file (KII_APP_KEY) there too, and
    its upstream the stub."""
    cfg = example("kii.yaml")
    cfg["listeners"] = [{"name": "main"}]
    secrets = {"kii-alice-token": "token-of-alice", "kii-bob-token": "token-of-bob", "kii-app-key": KII_APP_KEY}
    for name, value in secrets.items():
        (tmp_path / name).write_text(value + "\n")
        (tmp_path / name).chmod(0o600)
    for user in ("alice", "bob"):
        cfg["identities"][f"kii-{user}"]["token"] = {"file": str(tmp_path / f"kii-{user}-token")}
    cfg["credentials"]["kii-app-key"] = {"file": str(tmp_path / "kii-app-key")}
    cfg["routes"][0]["upstream"] = upstream.url
    return cfg


def received(reply, header: str) -> list:
    """The values of `header` the stub upstream received."""
    return [v for k, v in reply.json()["headers"] if k.lower() == header.lower()]


def authorization(reply) -> list:
    """The Authorization values the stub upstream received."""
    return received(reply, "Authorization")


def test_kii_static_tokens_of_several_users(latchkey, upstream, tmp_path):
    proxy = latchkey.serve(kii_config(tmp_path, upstream))
    r = proxy.get("/kii/apps/my-app/users/me")
    assert r.status == 200, r
    assert authorization(r) == ["Bearer token-of-alice"]
    r = proxy.get("/kii/apps/my-app/users/me", headers=[("Latchkey-Identity", "kii-bob")])
    assert r.status == 200, r
    assert authorization(r) == ["Bearer token-of-bob"]
    # Kii's REST API wants the application's id and key on every call, whoever the user.
    for reply in (r, proxy.get("/kii/apps/my-app/buckets")):
        assert received(reply, "X-Kii-AppID") == ["my-app"], reply
        assert received(reply, "X-Kii-AppKey") == [KII_APP_KEY], reply
    assert KII_APP_KEY not in proxy.log()


def test_basecamp_api_token_and_web_session_handoff(latchkey, make_idp, make_basecamp, browser):
    """Configs/basecamp.yaml: the token from a browser login (the django IdP stands in for
    Launchpad), the API with the bearer token, and the web app's pages in a real browser
    through the handoff; a handoff whose token has expired renews it first."""
    from test_login import printed_url, start_login

    idp = make_idp(access_token_seconds=3600)

    def user_of(token: str):
        answer = fetch(idp.api_url, headers={"Authorization": f"Bearer {token}"})
        return answer.json()["user"] if answer.status == 200 else None

    app = make_basecamp(user_of)
    cfg = example("basecamp.yaml")
    cfg["listeners"] = [{"name": "main"}]
    identity = cfg["identities"]["basecamp"]
    identity.update(authorization_url=idp.authorize_url, token_url=idp.token_url, client_id=idp.public_client.id,
                    client_auth="none", scope="read write")
    for key in ("client_secret", "redirect_port"):
        del identity[key]
    for route in cfg["routes"]:
        route["upstream"] = app.url

    login = start_login(latchkey, cfg, "basecamp")
    assert fetch(idp.authorize(printed_url(login))).status == 200
    assert login.wait_exit(20) == 0, login.log()
    proxy = latchkey.serve(cfg)

    r = proxy.get("/api/4242/projects.json")
    assert r.status == 200 and r.json() == {"user": idp.username, "path": "/4242/projects.json"}, r

    page = browser.open(f"{proxy.base_url}/4242/projects")
    assert f"Projects of {idp.username}" in page.html, page.html
    assert browser.open(f"{proxy.base_url}/4242/projects/7").html.count(f"Projects of {idp.username}") == 1
    assert app.counters()["handoff"] == 1 and app.counters()["page"] == 2

    # Later: the web session is gone and the token has expired. The handoff endpoint refuses
    # the token, which is renewed, and the second call gives the session.
    browser.call("Network.clearBrowserCookies")
    idp.expire_access_tokens()
    page = browser.open(f"{proxy.base_url}/4242/projects")
    assert f"Projects of {idp.username}" in page.html, page.html
    assert app.counters()["handoff"] == 3
    assert idp.token_requests("refresh_token") == 1


def auth0_config(auth0) -> dict:
    cfg = example("auth0.yaml")
    cfg["listeners"] = [{"name": "main"}]
    user = cfg["identities"]["auth0-user"]
    user["username"] = auth0.username
    user["token_url"] = f"{auth0.url}/oauth/token"
    user["client_id"] = auth0.client_id
    user["userinfo_url"] = f"{auth0.url}/userinfo"
    cfg["routes"][0]["upstream"] = f"{auth0.url}/api"
    return cfg


def test_auth0_checks_the_stored_token_at_start_and_renews_a_revoked_one(latchkey, make_auth0):
    auth0 = make_auth0(access_token_seconds=3600)
    env = {"AUTH0_PASSWORD": auth0.password, "AUTH0_CLIENT_SECRET": auth0.client_secret}

    first = latchkey.serve(auth0_config(auth0), env=env)
    r = first.get("/api/orders")
    assert r.status == 200, r
    stored = r.json()["token"]
    assert auth0.token_requests("password") == 1
    assert auth0.counters().get("userinfo", 0) == 0, "nothing to check on a first start"
    assert first.stop() == 0

    # Still accepted: checked once, used as it is.
    second = latchkey.serve(auth0_config(auth0), env=env)
    r = second.get("/api/orders")
    assert r.status == 200, r
    assert r.json()["token"] == stored
    assert auth0.counters()["userinfo"] == 1
    assert auth0.token_requests() == 1
    assert second.stop() == 0

    # Revoked while Latchkey was down: renewed with the refresh token before the first
    # request, which reaches the API once, with the new token (no 401 and replay).
    assert auth0.invalidate_access_token(stored)
    api_calls = auth0.counters()["api"]
    third = latchkey.serve(auth0_config(auth0), env=env)
    r = third.get("/api/orders")
    assert r.status == 200, r
    assert r.json()["token"] != stored
    assert auth0.counters()["userinfo"] == 2
    assert auth0.token_requests("refresh_token") == 1
    assert auth0.token_requests("password") == 1
    assert auth0.counters()["api"] == api_calls + 1
    assert "no longer accepted" in third.log()
    for secret in (auth0.password, auth0.client_secret, stored):
        assert secret not in third.log()


def test_auth0_unreachable_userinfo_leaves_the_stored_token_in_use(latchkey, make_auth0):
    auth0 = make_auth0(access_token_seconds=3600)
    env = {"AUTH0_PASSWORD": auth0.password, "AUTH0_CLIENT_SECRET": auth0.client_secret}
    first = latchkey.serve(auth0_config(auth0), env=env)
    stored = first.get("/api/orders").json()["token"]
    assert first.stop() == 0

    cfg = auth0_config(auth0)
    cfg["identities"]["auth0-user"]["userinfo_url"] = f"http://127.0.0.1:{free_port()}/userinfo"
    second = latchkey.serve(cfg, env=env)
    r = second.get("/api/orders")
    assert r.status == 200, r
    assert r.json()["token"] == stored
    assert auth0.token_requests() == 1
    assert "cannot check the stored token, using it" in second.log()
