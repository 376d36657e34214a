"""`jar: proxy`: Latchkey keeps the upstream's cookies per identity (libcurl's cookie
engine, shared by every loop) and sends them with every request of the route, so that any
client — curl here — shares one web session; the handoff endpoint fills the jar on a 401,
and the jar is kept in the token store across restarts; `latchkey logout` empties it, in
the store and in the running serve."""

import copy
import json
import subprocess

from support import wait_until
from test_handoff import alice_app, handoff_config
from test_login import login_config_file
from test_oauth import password_identity


def jar_config(app) -> dict:
    """The app's session cookie as an app on this host over plain HTTP sets it."""
    app.cookie_attributes = "Path=/; HttpOnly; SameSite=Lax"
    cfg = handoff_config(app)
    cfg["routes"][0]["jar"] = "proxy"
    return cfg


def curl(proxy, path: str, *args: str) -> tuple[int, str, str]:
    """(status, head, body) of a request by the curl command line tool, with no cookies."""
    done = subprocess.run(["curl", "-s", "-i", "--max-time", "20", *args, proxy.base_url + path],
                          capture_output=True, timeout=30)
    head, _, body = done.stdout.decode().partition("\r\n\r\n")
    return int(head.split()[1]), head, body


def stored_cookies(latchkey) -> list:
    path = latchkey.workdir / "state" / "latchkey" / "bc.json"
    return json.loads(path.read_text()).get("cookies", []) if path.exists() else []


def test_two_clients_share_one_upstream_session_and_a_restart_keeps_it(latchkey, make_basecamp):
    app = alice_app(make_basecamp)
    cfg = jar_config(app)
    proxy = latchkey.serve(copy.deepcopy(cfg))

    # The first client meets the app's 401: the handoff fills the jar, the request goes again.
    status, head, body = curl(proxy, "/projects")
    assert status == 200 and "Projects of alice" in body, head + body
    assert "set-cookie" not in head.lower()  # the session stays with the proxy
    assert app.counters()["handoff"] == 1 and app.counters()["page_refused"] == 1

    # Another client, with cookies of its own, is in the same session.
    status, _, body = curl(proxy, "/projects/2", "-b", "theme=dark")
    assert status == 200 and "/projects/2" in body
    assert app.counters()["handoff"] == 1
    session = next(h for h in app.cookie_headers if "theme=dark" in h)
    assert session.startswith("session=") and session.endswith("; theme=dark")  # one Cookie field

    # The jar is in the token store; a restarted proxy still has the session.
    assert wait_until(lambda: any("\tsession\t" in line for line in stored_cookies(latchkey)), timeout=10)
    assert proxy.stop() == 0
    proxy = latchkey.serve(copy.deepcopy(cfg))
    status, _, body = curl(proxy, "/projects/3")
    assert status == 200 and "Projects of alice" in body, body
    assert app.counters()["handoff"] == 1
    assert app.counters()["page_refused"] == 1


def test_a_session_the_app_ended_is_refilled_once_and_a_refused_one_is_not_retried(latchkey, make_basecamp):
    app = alice_app(make_basecamp)
    proxy = latchkey.serve(jar_config(app))
    assert curl(proxy, "/projects")[0] == 200

    app.sessions.clear()  # the app ends every session
    status, _, body = curl(proxy, "/projects")
    assert status == 200 and "Projects of alice" in body
    assert app.counters()["handoff"] == 2

    # A session the app does not accept: one handoff, then the app's 401 reaches the client.
    app.sessions.clear()
    app.useless_sessions = True
    status, _, body = curl(proxy, "/projects")
    assert status == 401 and "Sign in" in body
    assert app.counters()["handoff"] == 3

    app.refuse_handoff = True
    status, _, body = curl(proxy, "/projects")
    assert status == 502 and json.loads(body)["error"] == "handoff_failed"
    assert "answered 403" in json.loads(body)["message"]


def test_the_handoff_by_hand_is_not_for_jar_routes(latchkey, make_basecamp):
    app = alice_app(make_basecamp)
    proxy = latchkey.serve(jar_config(app))
    r = proxy.get("/.latchkey/handoff?to=/projects")
    assert r.status == 404 and "jar: proxy" in r.json()["message"], r


def test_latchkey_logout_empties_the_jar_in_the_store_and_in_the_running_serve(latchkey, make_idp, make_basecamp):
    idp = make_idp(access_token_seconds=3600)
    app = make_basecamp(lambda token: "alice" if token else None)
    cfg = jar_config(app)
    cfg["identities"] = {"bc": password_identity(idp)}
    path = login_config_file(latchkey, cfg)
    proxy = latchkey.serve(copy.deepcopy(cfg))
    assert curl(proxy, "/projects")[0] == 200
    assert wait_until(lambda: any("\tsession\t" in line for line in stored_cookies(latchkey)), timeout=10)

    out = latchkey.run(["logout", "bc", "--config", path])
    assert out.returncode == 0, out.stderr
    # The store keeps the logout mark alone: the jar's copy went with the tokens.
    assert json.loads((latchkey.workdir / "state" / "latchkey" / "bc.json").read_text()) == {
        "format": "latchkey-token-v1", "logged_out": True}
    assert wait_until(lambda: curl(proxy, "/projects")[0] == 401, timeout=10), proxy.log_tail()

    # After a login the app's session is still valid, but the running jar was emptied: a new handoff.
    login = latchkey.run(["login", "bc", "--config", path])
    assert login.returncode == 0, login.stderr
    assert wait_until(lambda: curl(proxy, "/projects")[0] == 200, timeout=10), proxy.log_tail()
    assert app.counters()["handoff"] == 2
