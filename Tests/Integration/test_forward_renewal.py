"""Renewal inside an intercepted tunnel, against the real OAuth2 server (django-oauth-toolkit,
idp_support.py): a client calls https://api.test/… through a forward listener; the route's
upstream is the IdP's protected API, which answers 401 to a token that no longer holds;
Latchkey renews the identity's token and replays the request inside the tunnel, so the
client sees 200 and the IdP saw the renewal; the same for a child of `latchkey exec`."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import requests

from exec_support import start_exec, wait_while_running
from forward_support import HOST, PROXY_SECRET, local_ca, proxy_url


def identity_config(idp) -> dict:
    """A forward listener whose route for api.test goes to the IdP's API with the token of a
    password-grant identity."""
    route = {"name": "api", "host": HOST, "path": "/", "upstream": idp.url + "/api",
             "inject": [{"header": "Authorization", "value": "Bearer {access_token}", "identity": "idp"}]}
    identity = {"grant": "password", "token_url": idp.token_url, "username": idp.username,
                "password": {"value": idp.password}, "client_id": idp.password_client.id,
                "client_secret": {"value": idp.password_client.secret}}
    listener = {"name": "fwd", "mode": "forward", "inbound": {"proxy_auth": {"value": PROXY_SECRET}}}
    return {"listeners": [listener], "credentials": {}, "identities": {"idp": identity}, "routes": [route]}


def client(p, latchkey) -> requests.Session:
    """requests through the forward listener, trusting the local CA; one kept connection, so
    the requests after the first go inside the same tunnel."""
    session = requests.Session()
    session.trust_env = False
    session.proxies = {"https": proxy_url(p)}
    session.verify = str(local_ca(latchkey))
    return session


def test_an_expired_token_is_refreshed_and_the_request_replayed_in_the_tunnel(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3600)  # nothing expires unless the test says so
    p = latchkey.serve(identity_config(idp))
    session = client(p, latchkey)
    first = session.get(f"https://{HOST}/first", timeout=20)
    assert first.status_code == 200, first.text
    assert first.json()["user"] == idp.username
    idp.expire_access_tokens()  # the IdP's API now answers 401 to the token Latchkey holds
    idp.reset_counters()
    body = {"replayed": "intact é"}
    answer = session.post(f"https://{HOST}/after-expiry?x=1", json=body, timeout=20)
    assert answer.status_code == 200, answer.text
    seen = answer.json()
    assert seen["user"] == idp.username and seen["path"] == "/api/after-expiry" and seen["query"] == "x=1"
    assert json.loads(seen["body"]) == body  # the replay carried the body
    assert idp.token_requests("refresh_token") == 1
    assert idp.token_requests() == 1
    # Two attempts reached the API: the refused one and the replay.
    assert idp.counters()["api"] == 2


def test_a_revoked_grant_is_renewed_by_signing_in_again_inside_the_tunnel(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3600)
    p = latchkey.serve(identity_config(idp))
    session = client(p, latchkey)
    assert session.get(f"https://{HOST}/first", timeout=20).status_code == 200
    idp.revoke_refresh_tokens()  # the access token goes too: the API answers 401
    idp.reset_counters()
    answer = session.get(f"https://{HOST}/after-revocation", timeout=20)
    assert answer.status_code == 200, answer.text
    assert answer.json()["user"] == idp.username
    assert idp.token_requests("refresh_token") == 1  # refused: invalid_grant
    assert idp.token_errors("invalid_grant") == 1
    assert idp.token_requests("password") == 1       # signed in again with the stored password


def test_a_child_of_exec_gets_its_answer_across_an_expiry(latchkey, make_idp, tmp_path):
    """The same through `latchkey exec`: the child's second request meets an expired token."""
    idp = make_idp(access_token_seconds=3600)
    out = tmp_path / "answers"
    child = [sys.executable, "-c", textwrap.dedent(f"""
        import json, os, sys, time, requests
        out = sys.argv[1]
        first = requests.get("https://{HOST}/first", timeout=20)
        open(out + ".first", "w").write(str(first.status_code))
        while not os.path.exists(out + ".go"):
            time.sleep(0.05)
        second = requests.get("https://{HOST}/second", timeout=20)
        json.dump([first.status_code, second.status_code, second.json()], open(out, "w"))
    """), str(out)]
    p = start_exec(latchkey, child, cfg=identity_config(idp))
    assert wait_while_running(p, lambda: Path(f"{out}.first").exists() and Path(f"{out}.first").read_text()) == "200"
    idp.expire_access_tokens()
    idp.reset_counters()
    Path(f"{out}.go").touch()
    assert p.wait_exit(30) == 0, p.log_tail()
    first, second, seen = json.loads(out.read_text())
    assert (first, second) == (200, 200)
    assert seen["user"] == idp.username and seen["path"] == "/api/second"
    assert idp.token_requests("refresh_token") == 1
