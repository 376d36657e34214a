"""Routes: longest prefix, strip/replace prefix, upstream base path, Host-matched routes,
no route, forwarding headers (Host, X-Forwarded-*, Via), and response rewriting
(Location, Content-Location, Set-Cookie)."""

from support import TOKEN, bearer, config


def route(name, path, up, **kw):
    r = {"name": name, "path": path, "upstream": up, "inject": [bearer()]}
    r.update(kw)
    return r


def header(seen, name):
    return [v for k, v in seen["headers"] if k.lower() == name.lower()]


def test_longest_prefix_wins(latchkey, make_upstream):
    a, b, c = make_upstream("a"), make_upstream("b"), make_upstream("c")
    p = latchkey.serve(config(routes=[
        route("root", "/", a.url),
        route("api", "/api", b.url),
        route("api-v2", "/api/v2", c.url),
    ]))
    assert p.get("/other").json()["upstream"] == "a"
    assert p.get("/api/things").json()["upstream"] == "b"
    assert p.get("/api/v2/things").json()["upstream"] == "c"
    assert p.get("/api/v3/things").json()["upstream"] == "b"


def test_route_order_does_not_matter(latchkey, make_upstream):
    a, b = make_upstream("a"), make_upstream("b")
    p = latchkey.serve(config(routes=[route("api-v2", "/api/v2", b.url), route("api", "/api", a.url)]))
    assert p.get("/api/v2/x").json()["upstream"] == "b"
    assert p.get("/api/x").json()["upstream"] == "a"


def test_prefix_stripped_by_default(latchkey, upstream):
    p = latchkey.serve(config(routes=[route("api", "/api", upstream.url)]))
    seen = p.get("/api/users/7?expand=1").json()
    assert seen["path"] == "/users/7"
    assert seen["query"] == "expand=1"


def test_strip_prefix_false_keeps_path(latchkey, upstream):
    p = latchkey.serve(config(routes=[route("api", "/api", upstream.url, strip_prefix=False)]))
    assert p.get("/api/users/7").json()["path"] == "/api/users/7"


def test_replace_prefix(latchkey, upstream):
    p = latchkey.serve(config(routes=[route("api", "/api", upstream.url, replace_prefix="/v3")]))
    assert p.get("/api/users/7").json()["path"] == "/v3/users/7"


def test_upstream_base_path(latchkey, upstream):
    p = latchkey.serve(config(routes=[route("api", "/api", upstream.url + "/base/v1")]))
    seen = p.get("/api/users/7?a=1&b=2").json()
    assert seen["path"] == "/base/v1/users/7"
    assert seen["query"] == "a=1&b=2"


def test_upstream_base_path_with_root_route(latchkey, upstream):
    p = latchkey.serve(config(upstream.url + "/base"))
    assert p.get("/users").json()["path"] == "/base/users"


def test_percent_encoding_preserved(latchkey, upstream):
    p = latchkey.serve(config(routes=[route("api", "/api", upstream.url + "/base")]))
    seen = p.get("/api/files/a%2Fb%20c?q=x%26y").json()
    assert seen["path"] == "/base/files/a%2Fb%20c"
    assert seen["query"] == "q=x%26y"


def test_host_matched_route(latchkey, make_upstream):
    a, b = make_upstream("a"), make_upstream("b")
    cfg = config(listeners=[{"name": "main", "allowed_hosts": ["api.test"]}],
                 routes=[route("by-host", "/", a.url, host="api.test"), route("default", "/", b.url)])
    p = latchkey.serve(cfg)
    assert p.get("/x", host=f"api.test:{p.port}").json()["upstream"] == "a"
    assert p.get("/x").json()["upstream"] == "b"


def test_wildcard_host_routes_every_name_under_a_domain(latchkey, make_upstream):
    a, b, c = make_upstream("a"), make_upstream("b"), make_upstream("c")
    cfg = config(listeners=[{"name": "main", "allowed_hosts": ["*.api.test"]}],
                 routes=[route("exact", "/", a.url, host="billing.api.test"), route("wild", "/", b.url, host="*.api.test"),
                         route("default", "/", c.url)])
    p = latchkey.serve(cfg)
    assert p.get("/x", host=f"billing.api.test:{p.port}").json()["upstream"] == "a"
    assert p.get("/x", host=f"uploads.api.test:{p.port}").json()["upstream"] == "b"
    assert p.get("/x", host="eu.uploads.api.test").json()["upstream"] == "b"
    assert p.get("/x").json()["upstream"] == "c"
    # The domain itself is not under its wildcard, so the listener does not take it.
    assert p.get("/x", host=f"api.test:{p.port}").status == 421


def test_no_route_is_404_json(latchkey, upstream):
    p = latchkey.serve(config(routes=[route("api", "/api", upstream.url)]))
    r = p.get("/elsewhere")
    assert r.status == 404, r
    assert "json" in (r.header("Content-Type") or "")
    body = r.json()
    assert isinstance(body.get("error"), str) and body["error"]
    assert isinstance(body.get("message"), str) and body["message"]
    assert upstream.accepted == 0, "no route must mean nothing is forwarded"


def test_route_bound_to_listener(latchkey, make_upstream):
    from support import free_port
    a, b = make_upstream("a"), make_upstream("b")
    cfg = config(
        listeners=[{"name": "one", "listen": f"127.0.0.1:{free_port()}"},
                   {"name": "two", "listen": f"127.0.0.1:{free_port()}"}],
        routes=[route("r1", "/", a.url, listeners=["one"]), route("r2", "/", b.url, listeners=["two"])])
    p = latchkey.serve(cfg)
    port_two = p.addresses["two"][1]
    assert p.get("/x", listener="one").json()["upstream"] == "a"
    assert p.get("/x", listener="two", host=f"127.0.0.1:{port_two}").json()["upstream"] == "b"


# ----- request headers ----------------------------------------------------------------

def test_host_is_upstreams(proxy, upstream):
    assert header(proxy.get("/echo").json(), "Host") == [f"127.0.0.1:{upstream.port}"]


def test_preserve_host(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, route={"preserve_host": True}))
    assert header(p.get("/echo").json(), "Host") == [p.host_header]


def test_x_forwarded_headers(proxy, upstream):
    seen = proxy.get("/echo").json()
    xff = header(seen, "X-Forwarded-For")
    assert xff and xff[-1].split(",")[-1].strip() == "127.0.0.1", xff
    assert header(seen, "X-Forwarded-Proto") == ["http"]
    assert header(seen, "X-Forwarded-Host") == [proxy.host_header]


def test_x_forwarded_for_appends_client_chain(proxy, upstream):
    seen = proxy.get("/echo", headers=[("X-Forwarded-For", "203.0.113.9")]).json()
    xff = ",".join(header(seen, "X-Forwarded-For"))
    assert xff.replace(" ", "").endswith("127.0.0.1"), xff


def test_via(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, route={"via": "latchkey"}))
    via = ",".join(header(p.get("/echo").json(), "Via"))
    assert "1.1 latchkey" in via, via


def test_end_to_end_headers_kept_in_order(proxy, upstream):
    hdrs = [("X-First", "1"), ("X-Dup", "a"), ("Accept", "application/json"), ("X-Dup", "b")]
    seen = proxy.get("/echo", headers=hdrs).json()
    assert header(seen, "X-Dup") == ["a", "b"]
    assert header(seen, "X-First") == ["1"]
    assert header(seen, "Accept") == ["application/json"]


# ----- response rewriting -------------------------------------------------------------

def test_location_rewritten_to_proxy(latchkey, upstream):
    p = latchkey.serve(config(routes=[route("api", "/api", upstream.url + "/base")]))
    r = p.get("/api/redirect")
    assert r.status == 302, r
    assert r.header("Location") == f"http://{p.host_header}/api/echo/after?x=1"
    assert r.header("Content-Location") == f"http://{p.host_header}/api/echo/content"


def test_location_rewritten_quick_start(proxy, upstream):
    r = proxy.get("/redirect")
    assert r.status == 302, r
    assert r.header("Location") == f"http://{proxy.host_header}/echo/after?x=1"


def test_foreign_location_untouched(proxy, upstream):
    r = proxy.get("/redirect?to=https%3A%2F%2Fother.example%2Flogin")
    assert r.status == 302, r
    assert r.header("Location") == "https://other.example/login"


def _cookie_attrs(value: str) -> tuple:
    parts = [p.strip() for p in value.split(";")]
    attrs = {}
    for p in parts[1:]:
        k, _, v = p.partition("=")
        attrs[k.lower()] = v
    return parts[0], attrs


def test_set_cookie_domain_removed_and_path_mapped(latchkey, upstream):
    p = latchkey.serve(config(routes=[route("api", "/api", upstream.url + "/base")]))
    r = p.get("/api/redirect")
    cookies = r.header_all("Set-Cookie")
    assert len(cookies) == 2, r  # never folded into one header
    first, attrs = _cookie_attrs(cookies[0])
    assert first == "sid=cookie-from-upstream"
    assert "domain" not in attrs, cookies[0]
    assert attrs.get("path") == "/api/", cookies[0]
    assert "httponly" in attrs
    second, attrs2 = _cookie_attrs(cookies[1])
    assert second == "pref=dark"
    assert "domain" not in attrs2
    assert attrs2.get("path") == "/api/echo", cookies[1]


def test_set_cookie_secure_kept_by_default(latchkey, upstream):
    p = latchkey.serve(config(upstream.url))
    for c in p.get("/redirect?secure=1").header_all("Set-Cookie"):
        assert "secure" in _cookie_attrs(c)[1], c


def test_set_cookie_secure_dropped_on_loopback_when_configured(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, route={"cookies": {"drop_secure_on_loopback": True}}))
    cookies = p.get("/redirect?secure=1").header_all("Set-Cookie")
    assert cookies
    for c in cookies:
        assert "secure" not in _cookie_attrs(c)[1], c


def test_client_cannot_spoof_forwarded_host_and_proto(proxy, upstream):
    seen = proxy.get("/echo", headers=[("X-Forwarded-Host", "evil.example"),
                                       ("X-Forwarded-Proto", "https")]).json()
    assert header(seen, "X-Forwarded-Host") == [proxy.host_header]
    assert header(seen, "X-Forwarded-Proto") == ["http"]
