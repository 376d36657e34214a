"""The browser handoff (Basecamp's way of giving a web view a session): a navigation that
the upstream answers 401 gets the cookies of the route's handoff endpoint, rewritten for the
proxy, and a 303 back to its page; one handoff per navigation; `/.latchkey/handoff?to=`.
The browser tests drive a real headless Chromium (browser.py) against the Basecamp-style
app of emulations/basecamp.py."""

from support import TOKEN, config

NAVIGATE = [("Sec-Fetch-Mode", "navigate"), ("Sec-Fetch-Site", "none"), ("Accept", "text/html")]


def navigate(cookie: str) -> list:
    """A browser's navigation that presents `cookie`."""
    return NAVIGATE + [("Cookie", cookie)]


def handoff_config(app, **handoff) -> dict:
    """Route `/` to the app with a static identity holding TOKEN and the app's handoff."""
    route = {"name": "web", "path": "/", "upstream": app.url,
             "inject": [{"header": "Authorization", "value": "Bearer {access_token}", "identity": "bc"}],
             "handoff": {"url": "/session/from_token", **handoff}}
    return config(routes=[route], credentials={}, identities={"bc": {"grant": "static", "token": {"value": TOKEN}}})


def alice_app(make_basecamp):
    return make_basecamp(lambda token: "alice" if token == TOKEN else None)


def set_cookies(response) -> dict:
    """Set-Cookie fields by cookie name: the list of their attributes, as sent."""
    out = {}
    for value in response.header_all("Set-Cookie"):
        pair, *attributes = [part.strip() for part in value.split(";")]
        out[pair.split("=", 1)[0]] = [pair] + attributes
    return out


def test_browser_gets_the_session_and_a_second_page_needs_no_second_handoff(latchkey, make_basecamp, browser):
    app = alice_app(make_basecamp)
    proxy = latchkey.serve(handoff_config(app))

    page = browser.open(f"{proxy.base_url}/projects")
    assert "Projects of alice" in page.html, page.html
    assert page.url == f"{proxy.base_url}/projects"
    assert app.counters()["handoff"] == 1 and app.counters()["page_refused"] == 1

    page = browser.open(f"{proxy.base_url}/projects/2")
    assert "Projects of alice" in page.html and "/projects/2" in page.html, page.html
    assert app.counters()["handoff"] == 1 and app.counters()["page"] == 2

    cookies = {c["name"]: c for c in browser.cookies()}
    session = cookies["session"]
    assert session["domain"] == "127.0.0.1" and session["httpOnly"] and not session["secure"]
    assert "latchkey_handoff" not in cookies  # cleared once the page loaded
    assert not any("latchkey_" in header for header in app.cookie_headers)  # the proxy's own, never forwarded
    assert TOKEN not in proxy.log()


def test_a_refused_handoff_shows_an_error_page_and_does_not_loop(latchkey, make_basecamp, browser):
    app = alice_app(make_basecamp)
    app.refuse_handoff = True
    proxy = latchkey.serve(handoff_config(app))

    page = browser.open(f"{proxy.base_url}/projects")
    assert "handoff_failed" in page.html and "the handoff endpoint answered 403" in page.html, page.html
    assert app.counters()["handoff"] == 1 and app.counters()["page_refused"] == 1
    assert not any(c["name"] == "session" for c in browser.cookies())


def test_a_session_the_page_still_refuses_shows_an_error_page_after_one_handoff(latchkey, make_basecamp, browser):
    app = alice_app(make_basecamp)
    app.useless_sessions = True
    proxy = latchkey.serve(handoff_config(app))

    page = browser.open(f"{proxy.base_url}/projects")
    assert "still answered 401 after a handoff" in page.html, page.html
    assert app.counters()["handoff"] == 1 and app.counters()["page_refused"] == 2


def test_the_handoff_answer_rewrites_the_cookies_for_the_proxy(latchkey, make_basecamp):
    app = alice_app(make_basecamp)
    proxy = latchkey.serve(handoff_config(app))

    r = proxy.get("/projects?sort=name", headers=NAVIGATE)
    assert r.status == 303, r
    assert r.header("Location") == "/projects?sort=name"
    assert r.header("Cache-Control") == "no-store"
    cookies = set_cookies(r)
    # Domain removed, Path kept on the route's prefix, Secure dropped for plain HTTP, the rest kept.
    assert cookies["session"][1:] == ["Path=/", "HttpOnly", "SameSite=Lax"]
    guard = cookies["latchkey_handoff"]
    assert guard[1:] == ["Max-Age=60", "Path=/", "HttpOnly", "SameSite=Lax"]

    # Back with the cookies: the page, and the guard cleared.
    cookie = "; ".join(c[0] for c in cookies.values())
    r = proxy.get("/projects?sort=name", headers=navigate(cookie))
    assert r.status == 200 and b"Projects of alice" in r.body, r
    assert set_cookies(r)["latchkey_handoff"][:2] == ["latchkey_handoff=", "Max-Age=0"]
    assert app.cookie_headers[-1] == cookies["session"][0]


def test_a_forged_or_foreign_guard_does_not_stop_the_handoff(latchkey, make_basecamp):
    app = alice_app(make_basecamp)
    proxy = latchkey.serve(handoff_config(app))
    guard = set_cookies(proxy.get("/projects/1", headers=NAVIGATE))["latchkey_handoff"][0]

    forged = guard[:-3] + ("AAA" if not guard.endswith("AAA") else "BBB")
    assert proxy.get("/projects/1", headers=navigate(forged)).status == 303
    # A guard is for the page it was given for.
    assert proxy.get("/projects/2", headers=navigate(guard)).status == 303
    r = proxy.get("/projects/1", headers=navigate(guard))
    assert r.status == 502 and b"still answered 401" in r.body, r
    assert r.header("Content-Type").startswith("text/html")


def test_requests_that_are_not_navigations_get_the_upstream_401(latchkey, make_basecamp):
    app = alice_app(make_basecamp)
    proxy = latchkey.serve(handoff_config(app))

    # A script's fetch says cors even when it accepts HTML; an API client asks for JSON.
    assert proxy.get("/projects", headers=[("Sec-Fetch-Mode", "cors"), ("Accept", "text/html")]).status == 401
    assert proxy.get("/projects", headers=[("Accept", "application/json")]).status == 401
    assert proxy.request("POST", "/projects", headers=NAVIGATE, body=b"x=1").status == 401
    assert app.counters().get("handoff", 0) == 0
    # A web view that sends no fetch metadata but asks for HTML navigates.
    assert proxy.get("/projects", headers=[("Accept", "text/html,application/xhtml+xml")]).status == 303


def test_the_handoff_endpoint_by_hand(latchkey, make_basecamp):
    app = alice_app(make_basecamp)
    cfg = handoff_config(app)
    cfg["routes"].append({"name": "plain", "path": "/plain", "upstream": app.url})
    proxy = latchkey.serve(cfg)

    r = proxy.get("/.latchkey/handoff?to=%2Fprojects%2F7%3Ftab%3Ddocs")
    assert r.status == 303 and r.header("Location") == "/projects/7?tab=docs", r
    assert "session" in set_cookies(r)
    assert app.counters()["handoff"] == 1

    # Never another site, and only pages of a route with a handoff.
    for to in ("//evil.example/", "https://evil.example/", "/\\evil.example", "evil", "/a/../b", "/x%0d%0aSet-Cookie:%20a=b"):
        r = proxy.get("/.latchkey/handoff?to=" + to.replace("/", "%2F").replace("\\", "%5C"))
        assert r.status == 400 and r.json()["error"] == "bad_request", (to, r)
    assert proxy.get("/.latchkey/handoff").status == 400
    assert proxy.get("/.latchkey/handoff?to=/a&to=/b").status == 400
    assert proxy.get("/.latchkey/handoff?to=/plain/x").status == 404
    assert proxy.request("POST", "/.latchkey/handoff?to=/projects", body=b"").status == 405
    # It spends the credential: another site may not start it.
    assert proxy.get("/.latchkey/handoff?to=/projects", headers=[("Sec-Fetch-Site", "cross-site")]).status == 403
    assert app.counters()["handoff"] == 1


def test_before_the_first_page_when_configured(latchkey, make_basecamp):
    app = alice_app(make_basecamp)
    proxy = latchkey.serve(handoff_config(app, before_first_page=True))

    r = proxy.get("/projects", headers=NAVIGATE)
    assert r.status == 303, r
    assert app.counters().get("page_refused", 0) == 0  # the page was not asked first
    cookies = set_cookies(r)
    assert cookies["latchkey_handed_off"] == ["latchkey_handed_off=1", "Path=/", "HttpOnly", "SameSite=Lax"]

    r = proxy.get("/projects", headers=navigate("; ".join(c[0] for c in cookies.values())))
    assert r.status == 200 and b"Projects of alice" in r.body, r
    assert app.counters()["handoff"] == 1
