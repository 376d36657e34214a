"""The status page `GET /.latchkey/` through the real binary: in a real headless Chromium,
the identities (an OAuth one at the django-oauth-toolkit IdP, a static one, one whose IdP
is down), their states, the routes and the auth events, no token anywhere in the page, its
stylesheet admitted by its Content-Security-Policy, and a new event shown by the page's own
reload; behind a listener's shared secret and Host allow-list like the metrics, with its
security headers, HEAD, 405 and the redirect from `/.latchkey`."""

from support import SECRET, config, free_port, wait_until
from test_login import api_route
from test_oauth import password_identity

STATIC_TOKEN = "lk-itest-static-token-status-page"


def page_text(browser) -> str | None:
    """The page's text as a person reads it; None while a reload is between documents."""
    try:
        return browser.evaluate("document.body ? document.body.innerText : null")
    except AssertionError:
        return None


def test_the_status_page_in_a_browser(latchkey, make_idp, upstream, browser, tmp_path):
    idp = make_idp(access_token_seconds=3600)
    down = password_identity(idp, token_url=f"http://127.0.0.1:{free_port()}/o/token/")
    routes = [
        {"name": "static", "path": "/", "upstream": upstream.url,
         "inject": [{"header": "Authorization", "value": "Bearer {access_token}", "identity": "kii"}]},
        api_route(idp, "idp", "/idp"),
        api_route(idp, "down", "/down"),
    ]
    cfg = config(routes=routes, credentials={},
                 identities={"idp": password_identity(idp), "down": down,
                             "kii": {"grant": "static", "token": {"value": STATIC_TOKEN}}})
    p = latchkey.serve(cfg)
    first = p.get("/idp/echo")
    assert first.status == 200, first
    tokens = {first.json()["token"]}
    assert p.get("/down/echo").status == 503
    assert p.get("/echo").json()["headers"]

    page = browser.open(p.base_url + "/.latchkey/")
    assert page.url == p.base_url + "/.latchkey/"
    text = page_text(browser)
    for shown in ("Identities", "Routes", "Recent auth events", "idp", "kii", "down", "valid", "failing",
                  "acquired", "failed", "Last error", "cannot get an answer from the authorization server",
                  "/idp", upstream.url):
        assert shown in text, f"{shown!r} is not on the page:\n{text}"
    # The stylesheet is admitted by its hash: the layout applies.
    assert browser.evaluate("getComputedStyle(document.querySelector('.cards')).display") == "grid"

    # A new event: the upstream refuses the expired token, the identity refreshes. The page
    # shows it by reloading itself, with nothing navigating it.
    browser.evaluate("window.latchkeyTestMark = 1")
    idp.expire_access_tokens()
    replayed = p.get("/idp/echo")
    assert replayed.status == 200, replayed
    tokens.add(replayed.json()["token"])
    assert wait_until(lambda: "refreshed" in (page_text(browser) or ""), timeout=20), page_text(browser)
    assert browser.evaluate("window.latchkeyTestMark") is None

    shot = browser.screenshot(tmp_path / "status-page.png")
    phone = browser.screenshot(tmp_path / "status-page-phone.png", width=390)
    print(f"\nstatus page screenshots: {shot} {phone}")

    html = browser.open(p.base_url + "/.latchkey/").html
    refresh_tokens = {answer["issued"] for answer in idp.token_answers() if answer["issued"]}
    assert len(tokens) == 2 and refresh_tokens
    for secret in (*tokens, *refresh_tokens, STATIC_TOKEN, idp.password, idp.password_client.secret):
        assert secret not in html, "a secret is on the status page"
    # The page loads nothing, not even a favicon through the route on `/`.
    assert not upstream.find_requests("favicon")


def test_the_status_page_is_behind_the_listeners_checks(latchkey, upstream):
    listener = {"name": "main", "inbound": {"shared_secret": {"header": "X-Latchkey-Secret", "value": SECRET}}}
    p = latchkey.serve(config(upstream.url, listeners=[listener]))
    secret = [("X-Latchkey-Secret", SECRET)]
    assert p.get("/.latchkey/").status == 401
    assert p.get("/.latchkey/", headers=[("X-Latchkey-Secret", "not-the-secret")]).status == 403
    assert p.get("/.latchkey/", host="evil.example", headers=secret).status == 421

    r = p.get("/.latchkey/", headers=secret)
    assert r.status == 200, r
    assert r.header("Content-Type") == "text/html; charset=utf-8"
    assert r.header("Cache-Control") == "no-store"
    policy = r.header("Content-Security-Policy")
    assert policy.startswith("default-src 'none'; style-src 'sha256-") and "frame-ancestors 'none'" in policy
    assert r.header("X-Frame-Options") == "DENY" and r.header("Referrer-Policy") == "no-referrer"
    assert b"api" in r.body and SECRET.encode() not in r.body

    head = p.request("HEAD", "/.latchkey/", headers=secret)
    assert head.status == 200 and head.body == b""
    assert p.request("POST", "/.latchkey/", headers=secret, body=b"").status == 405
    moved = p.get("/.latchkey", headers=secret)
    assert (moved.status, moved.header("Location")) == (308, "/.latchkey/")
    # A route on `/` does not take the page's paths.
    assert upstream.accepted == 0
