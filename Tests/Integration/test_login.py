"""`latchkey login` through the real binary against the django-oauth-toolkit IdP: the
authorization code grant with PKCE, driven by a scripted user agent that follows the
redirect to latchkey's loopback port; the device grant with a scripted approval; the token
handed to a running `serve` through the token store, without a restart; refusals, a forged
redirect, a timeout, Ctrl-C; and the grants that log in by themselves."""

import copy
import os
import re
import signal
import socket
import stat
import urllib.parse

from idp_support import fetch
from support import config, wait_until

URL_RE = re.compile(r"^\s+(http://\S+/o/authorize/\?\S+)$", re.M)
CODE_RE = re.compile(r"enter the code:\s+(\S+)")
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def api_route(idp, identity: str, path: str = "/") -> dict:
    return {"name": identity, "path": path, "upstream": idp.url + "/api",
            "inject": [{"header": "Authorization", "value": "Bearer {access_token}", "identity": identity}]}


def login_config(idp, identities: dict, routes: list | None = None) -> dict:
    """A config whose route `/` forwards to the IdP's API with the identity `web`."""
    return config(routes=routes or [api_route(idp, "web")], credentials={}, identities=identities)


def browser_identity(idp, **extra) -> dict:
    identity = {"grant": "authorization_code", "issuer": idp.url, "client_id": idp.public_client.id, "scope": "read write"}
    identity.update(extra)
    return identity


def device_identity(idp, **extra) -> dict:
    identity = {"grant": "device_code", "token_url": idp.token_url, "device_authorization_url": idp.device_authorization_url,
                "client_id": idp.device_client.id}
    identity.update(extra)
    return identity


def login_config_file(latchkey, cfg: dict):
    """The config as `login` reads it: a login binds no listener, but the file must be valid."""
    cfg = copy.deepcopy(cfg)
    for listener in cfg["listeners"]:
        listener.setdefault("listen", "127.0.0.1:0")
    return str(latchkey.write_config(cfg))


def start_login(latchkey, cfg: dict, name: str = "web", *extra: str, env: dict | None = None):
    return latchkey.start(["login", name, "--config", login_config_file(latchkey, cfg), "--no-browser", *extra], env=env)


def stderr(proc) -> str:
    return proc.stderr_path.read_text(errors="replace")


def stdout(proc) -> str:
    return proc.stdout_path.read_text(errors="replace")


def printed_url(proc) -> str:
    m = wait_until(lambda: URL_RE.search(stderr(proc)), timeout=20)
    assert m, f"no authorization URL printed:\n{proc.log()}"
    return m.group(1)


def printed_user_code(proc) -> str:
    m = wait_until(lambda: CODE_RE.search(stderr(proc)), timeout=20)
    assert m, f"no user code printed:\n{proc.log()}"
    return m.group(1)


def query(url: str) -> dict:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def test_code_grant_follows_the_redirect_to_the_loopback_port(latchkey, idp):
    proc = start_login(latchkey, login_config(idp, {"web": browser_identity(idp)}))
    url = printed_url(proc)
    assert url.startswith(idp.authorize_url)  # discovered from the issuer's metadata
    asked = query(url)
    assert asked["code_challenge_method"] == "S256" and len(asked["code_challenge"]) == 43
    redirect_uri = asked["redirect_uri"]
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/callback", redirect_uri)  # RFC 8252 §8.3: an IP literal
    assert "open this URL in a browser" in stderr(proc)

    location = idp.authorize(url)  # the user approves; the IdP sends the browser back
    assert location.startswith(redirect_uri + "?")
    page = fetch(location)
    assert page.status == 200 and "You may close this window" in page.text
    assert proc.wait_exit(20) == 0, proc.log()
    assert stdout(proc).startswith("logged in identity web: access token valid until ")
    assert "a refresh token" in stdout(proc)
    assert idp.token_requests("authorization_code") == 1
    # Nothing of the exchange reaches the terminal, and the port is closed.
    assert query(location)["code"] not in proc.log()
    assert not listening(int(urllib.parse.urlsplit(redirect_uri).port))


def test_fixed_redirect_port_and_path(latchkey, idp):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    identity = {"grant": "authorization_code", "authorization_url": idp.authorize_url, "token_url": idp.token_url,
                "client_id": idp.public_client.id, "scope": "read", "redirect_port": port, "redirect_path": "/callback"}
    proc = start_login(latchkey, login_config(idp, {"web": identity}))
    url = printed_url(proc)
    assert query(url)["redirect_uri"] == f"http://127.0.0.1:{port}/callback"
    assert fetch(idp.authorize(url)).status == 200
    assert proc.wait_exit(20) == 0, proc.log()


def test_forged_redirect_with_another_state_is_refused(latchkey, idp):
    proc = start_login(latchkey, login_config(idp, {"web": browser_identity(idp)}))
    url = printed_url(proc)
    redirect_uri = query(url)["redirect_uri"]
    # Another page sends a code of its own straight to the loopback port.
    forged = fetch(redirect_uri + "?code=forged-code&state=not-this-login")
    assert forged.status == 400 and "does not belong to the login" in forged.text
    assert fetch(redirect_uri + "?code=forged-code").status == 400
    assert wait_until(lambda: "state does not match this login" in stderr(proc), timeout=10)
    assert proc.alive() and idp.token_requests() == 0
    # The login's own redirect still completes it.
    assert fetch(idp.authorize(url)).status == 200
    assert proc.wait_exit(20) == 0, proc.log()
    assert idp.token_requests("authorization_code") == 1


def test_unrelated_requests_get_404_and_the_wait_goes_on(latchkey, idp):
    proc = start_login(latchkey, login_config(idp, {"web": browser_identity(idp)}))
    url = printed_url(proc)
    origin = query(url)["redirect_uri"].rsplit("/", 1)[0]
    assert fetch(origin + "/favicon.ico").status == 404
    assert proc.alive()
    assert fetch(idp.authorize(url)).status == 200
    assert proc.wait_exit(20) == 0, proc.log()


def test_denied_authorization_fails_clearly(latchkey, idp):
    proc = start_login(latchkey, login_config(idp, {"web": browser_identity(idp)}))
    location = idp.deny(printed_url(proc))
    assert query(location)["error"] == "access_denied"
    page = fetch(location)
    assert page.status == 400 and "access_denied" in page.text
    assert proc.wait_exit(20) == 1
    assert stderr(proc).strip().endswith("Error: cannot log in identity web: the authorization server refused the login with access_denied")
    assert idp.token_requests() == 0


def test_no_redirect_in_time_is_a_timeout(latchkey, idp):
    proc = start_login(latchkey, login_config(idp, {"web": browser_identity(idp)}), "web", "--timeout", "1")
    redirect_uri = query(printed_url(proc))["redirect_uri"]
    assert proc.wait_exit(20) == 1
    assert "no redirect arrived within 1 s" in stderr(proc)
    assert not listening(int(urllib.parse.urlsplit(redirect_uri).port))


def test_ctrl_c_leaves_no_listening_socket_behind(latchkey, idp, tmp_path):
    """The browser is started and never waited for; it outlives the login and must not
    have inherited the listener."""
    args_file, pid_file = tmp_path / "browser-args", tmp_path / "browser-pid"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho $$ > {pid_file}\nprintf "%s\\n" "$@" > {args_file}\nexec sleep 60\n')
    browser.chmod(browser.stat().st_mode | stat.S_IXUSR)
    path = login_config_file(latchkey, login_config(idp, {"web": browser_identity(idp)}))
    proc = latchkey.start(["login", "web", "--config", path], env={"BROWSER": str(browser)})
    url = printed_url(proc)
    assert "A browser is opening" in stderr(proc)
    assert wait_until(lambda: args_file.exists() and args_file.read_text().strip() == url, timeout=10)
    port = int(urllib.parse.urlsplit(query(url)["redirect_uri"]).port)
    assert listening(port)
    proc.send_signal(signal.SIGINT)
    assert proc.wait_exit(20) == 1
    assert "the login was cancelled" in stderr(proc)
    assert not listening(port)
    browser_pid = int(pid_file.read_text())
    os.kill(browser_pid, 0)  # still running: the login never waited for it
    os.kill(browser_pid, signal.SIGTERM)


def test_device_grant_polls_until_approved(latchkey, idp):
    proc = start_login(latchkey, login_config(idp, {"web": device_identity(idp)}))
    code = printed_user_code(proc)
    out = stderr(proc)
    assert f"{idp.url}/o/device/" in out and "Waiting for the approval" in out
    # The IdP's interval is 1 s: latchkey keeps polling while the user has not answered.
    assert wait_until(lambda: idp.token_requests(DEVICE_GRANT) >= 2, timeout=20), proc.log()
    assert proc.alive()
    idp.approve_device(code)
    assert proc.wait_exit(20) == 0, proc.log()
    assert stdout(proc).startswith("logged in identity web: access token valid until ")
    polls = idp.token_requests(DEVICE_GRANT)
    assert polls >= 3 and idp.token_requests() == polls


def test_denied_device_fails_clearly(latchkey, idp):
    proc = start_login(latchkey, login_config(idp, {"web": device_identity(idp)}))
    idp.deny_device(printed_user_code(proc))
    assert proc.wait_exit(20) == 1
    assert "the authorization server refused the login with access_denied" in stderr(proc)


def password_identity(idp) -> dict:
    return {"grant": "password", "token_url": idp.token_url, "username": idp.username,
            "password": {"value": idp.password}, "client_id": idp.password_client.id,
            "client_secret": {"value": idp.password_client.secret}}


def serve(latchkey, cfg: dict):
    return latchkey.serve(copy.deepcopy(cfg))  # it fills in the listener's address


def log_in_with_browser(latchkey, idp, cfg: dict) -> None:
    proc = start_login(latchkey, cfg)
    assert fetch(idp.authorize(printed_url(proc))).status == 200
    assert proc.wait_exit(20) == 0, proc.log()


def first_success(proxy, target: str):
    """The running server checks the store about once a second: poll until it answers."""
    reply = wait_until(lambda: (r := proxy.get(target)).status == 200 and r, timeout=10)
    assert reply, f"the running server did not take up the login:\n{proxy.log_tail()}"
    return reply


def test_a_running_serve_takes_up_the_login_and_refreshes_it_with_rotation(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3600)
    cfg = login_config(idp, {"web": browser_identity(idp), "service": password_identity(idp)},
                       routes=[api_route(idp, "web"), api_route(idp, "service", "/service")])
    proxy = serve(latchkey, cfg)
    before = proxy.get("/whoami")
    assert before.status == 401, before
    assert before.json()["error"] == "login_required"
    assert "identity web needs a login" in before.json()["message"] and "`latchkey login web`" in before.json()["message"]
    assert proxy.get("/service/x").status == 200  # other identities keep serving

    log_in_with_browser(latchkey, idp, cfg)
    stored = latchkey.workdir / "state" / "latchkey" / "web.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    seen = first_success(proxy, "/whoami").json()
    assert (seen["user"], seen["client_id"], seen["path"]) == (idp.username, idp.public_client.id, "/api/whoami")
    assert proxy.wait_log("taken from the token store", timeout=5)
    assert idp.token_requests() == idp.token_requests("authorization_code") + idp.token_requests("password") == 2

    # Later the IdP refuses the token: serve refreshes it, and the rotated refresh token is
    # the one it uses next time (DOT refuses a used one at once).
    for refreshes in (1, 2):
        idp.expire_access_tokens()
        again = proxy.get(f"/again-{refreshes}")
        assert again.status == 200, again
        assert again.json()["token"] != seen["token"]
        seen = again.json()
        assert idp.token_requests("refresh_token") == refreshes
    assert "invalid_grant" not in proxy.log()
    assert seen["token"] not in proxy.log()


def test_a_refused_refresh_needs_a_new_login_and_gets_it_without_a_restart(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3600)
    cfg = login_config(idp, {"web": browser_identity(idp), "service": password_identity(idp)},
                       routes=[api_route(idp, "web"), api_route(idp, "service", "/service")])
    proxy = serve(latchkey, cfg)
    log_in_with_browser(latchkey, idp, cfg)
    first_success(proxy, "/one")
    assert proxy.get("/service/x").status == 200
    idp.revoke_refresh_tokens()  # and with them their access tokens
    refused = proxy.get("/two")
    assert refused.status == 401, refused
    assert refused.json()["error"] == "login_required" and "`latchkey login web`" in refused.json()["message"]
    assert proxy.get("/service/y").status == 200  # other identities keep serving
    log_in_with_browser(latchkey, idp, cfg)
    assert first_success(proxy, "/three").json()["user"] == idp.username
    assert idp.token_requests("authorization_code") == 2


def test_a_device_login_reaches_a_running_serve(latchkey, idp):
    cfg = login_config(idp, {"web": device_identity(idp)})
    proxy = serve(latchkey, cfg)
    assert proxy.get("/x").status == 401
    proc = start_login(latchkey, cfg)
    idp.approve_device(printed_user_code(proc))
    assert proc.wait_exit(20) == 0, proc.log()
    assert first_success(proxy, "/x").json()["client_id"] == idp.device_client.id


def test_an_unsafe_store_stops_the_login_before_the_browser(latchkey, idp):
    store = latchkey.workdir / "state" / "latchkey"
    store.mkdir(parents=True)
    store.chmod(0o755)
    path = login_config_file(latchkey, login_config(idp, {"web": browser_identity(idp)}))
    r = latchkey.run(["login", "web", "--config", path, "--no-browser"], timeout=30)
    assert r.returncode == 1
    assert "is accessible by others (mode 0755)" in r.stderr and "/o/authorize/" not in r.stderr


def test_grants_that_need_no_person(latchkey, idp):
    password = password_identity(idp)
    wrong = dict(password, password={"value": "not-the-password"})
    cfg = login_config(idp, {"web": password, "wrong": wrong, "kii": {"grant": "static", "token": {"value": "t"}}})
    path = login_config_file(latchkey, cfg)
    ok = latchkey.run(["login", "web", "--config", path])
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("identity web uses the password grant and logs in by itself: its credentials work")
    refused = latchkey.run(["login", "wrong", "--config", path])
    assert refused.returncode == 1
    assert "invalid_grant" in refused.stderr and "not-the-password" not in refused.stderr
    static = latchkey.run(["login", "kii", "--config", path])
    assert static.returncode == 1 and "uses a static token from its configuration; there is nothing to log in to" in static.stderr
    unknown = latchkey.run(["login", "nobody", "--config", path])
    assert unknown.returncode == 1 and "has no identity nobody (its identities: kii, web, wrong)" in unknown.stderr
    assert idp.token_requests("password") == 2
    assert (latchkey.workdir / "state" / "latchkey" / "web.json").exists()  # stored for serve
    in_memory = login_config_file(latchkey, dict(cfg, store={"type": "memory"}))
    unseen = latchkey.run(["login", "web", "--config", in_memory])
    assert unseen.returncode == 0, unseen.stderr
    assert "keeps tokens in memory (store: type: memory), so no other process sees this login" in unseen.stderr
