"""Who may use the proxy and what it refuses: strict parsing against request smuggling,
slow clients, DNS rebinding (Host), cross-site browser requests, inbound shared secrets,
non-loopback listeners, and never acting as an open proxy."""

import select
import time

import pytest

from httpraw import ConnectionClosed
from support import SECRET, TOKEN, config, free_port

# ----- request smuggling and malformed requests --------------------------------------

H = "Host: {host}\r\n"

# (label, raw request with {host}, whether the connection must be closed afterwards)
SMUGGLING = [
    ("cl-and-te", "POST /echo HTTP/1.1\r\n" + H + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", True),
    ("te-and-cl", "POST /echo HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n", True),
    ("two-different-cl", "POST /echo HTTP/1.1\r\n" + H + "Content-Length: 4\r\nContent-Length: 5\r\n\r\nabcde", True),
    ("cl-list-different", "POST /echo HTTP/1.1\r\n" + H + "Content-Length: 4, 5\r\n\r\nabcde", True),
    ("cl-not-a-number", "POST /echo HTTP/1.1\r\n" + H + "Content-Length: 4x\r\n\r\nabcd", True),
    ("cl-negative", "POST /echo HTTP/1.1\r\n" + H + "Content-Length: -1\r\n\r\n", True),
    ("cl-plus-sign", "POST /echo HTTP/1.1\r\n" + H + "Content-Length: +4\r\n\r\nabcd", True),
    ("bad-chunk-size", "POST /echo HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", True),
    ("chunk-size-overflow", "POST /echo HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\n\r\n"
     "fffffffffffffffffffff\r\nabc\r\n0\r\n\r\n", True),
    ("chunk-missing-crlf", "POST /echo HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n", True),
    ("te-not-chunked-last", "POST /echo HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", True),
    ("te-obfuscated", "POST /echo HTTP/1.1\r\n" + H + "Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", True),
    ("nul-in-header-value", "GET /echo HTTP/1.1\r\n" + H + "X-Bad: a\x00b\r\n\r\n", True),
    ("nul-in-target", "GET /echo\x00x HTTP/1.1\r\n" + H + "\r\n", True),
    ("bare-cr-in-value", "GET /echo HTTP/1.1\r\n" + H + "X-Bad: a\rb\r\n\r\n", True),
    ("obs-fold", "GET /echo HTTP/1.1\r\n" + H + "X-Folded: a\r\n  continued\r\n\r\n", True),
    ("space-before-colon", "GET /echo HTTP/1.1\r\n" + H + "X-Bad : a\r\n\r\n", True),
    ("space-in-header-name", "GET /echo HTTP/1.1\r\n" + H + "X Bad: a\r\n\r\n", True),
    ("missing-host", "GET /echo HTTP/1.1\r\nX-Nothing: 1\r\n\r\n", True),
    ("two-hosts", "GET /echo HTTP/1.1\r\n" + H + H + "\r\n", True),
    ("garbage-request-line", "GARBAGE\r\n" + H + "\r\n", True),
    ("bad-version", "GET /echo HTTP/9.9x\r\n" + H + "\r\n", True),
    ("space-in-target", "GET /echo x HTTP/1.1\r\n" + H + "\r\n", True),
]


@pytest.mark.parametrize("label,raw,must_close", SMUGGLING, ids=[s[0] for s in SMUGGLING])
def test_malformed_request_is_400(proxy, upstream, label, raw, must_close):
    with proxy.conn() as c:
        c.send(raw.replace("{host}", proxy.host_header).encode("latin-1"))
        try:
            r = c.read_response(timeout=10)
        except ConnectionClosed as e:
            pytest.fail(f"{label}: connection closed without a 400 ({e})")
        allowed = (400, 501) if label.startswith("te-") else (400,)
        assert r.status in allowed, f"{label}: {r}"
        if must_close:
            assert c.closed_by_peer(5), f"{label}: connection left open after a framing error"
    assert not any(q.body_complete and q.method == "POST" for q in upstream.requests), \
        f"{label}: a smuggling vector reached the upstream as a complete request"


def test_smuggled_second_request_never_reaches_upstream(proxy, upstream):
    # CL.TE: if the proxy used Content-Length and the upstream chunked (or vice versa), the
    # bytes after the body would become a second request to the upstream.
    smuggled = "GET /echo/smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
    body = f"0\r\n\r\n{smuggled}"
    raw = (f"POST /echo HTTP/1.1\r\nHost: {proxy.host_header}\r\nTransfer-Encoding: chunked\r\n"
           f"Content-Length: {len(body)}\r\n\r\n{body}")
    with proxy.conn() as c:
        c.send(raw.encode())
        try:
            r = c.read_response(timeout=10)
            assert r.status == 400, r
        except ConnectionClosed:
            pass
    time.sleep(0.5)
    assert not upstream.find_requests("smuggled")


# ----- slow clients -------------------------------------------------------------------

def test_head_timeout_closes_slow_loris(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, limits={"head_timeout": "1s"}))
    c = p.conn()
    c.send(b"GET /echo HTTP/1.1\r\n")
    t0 = time.monotonic()
    closed = False
    for _ in range(60):  # trickle a header byte every 0.2 s, for up to 12 s
        try:
            c.send(b"X")
        except OSError:
            closed = True
            break
        readable, _, _ = select.select([c.sock], [], [], 0.2)
        if readable:
            try:
                data = c.sock.recv(1 << 16)
            except OSError:
                closed = True
                break
            if not data:
                closed = True
                break
    if not closed:
        closed = c.closed_by_peer(timeout=max(0.1, 8 - (time.monotonic() - t0)))
    elapsed = time.monotonic() - t0
    c.close()
    assert closed, "a client trickling its head was never disconnected"
    assert elapsed < 8, f"slow-loris connection closed only after {elapsed:.1f}s with a 1s head timeout"


def test_head_timeout_silent_connection(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, limits={"head_timeout": "1s", "idle_timeout": "1s"}))
    with p.conn() as c:
        c.send(b"GET /ech")
        t0 = time.monotonic()
        assert c.closed_by_peer(10), "a half-sent head was kept open"
        assert time.monotonic() - t0 < 8


def test_new_connection_that_sends_nothing_is_closed_at_head_timeout(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, limits={"head_timeout": "1s", "idle_timeout": "30s"}))
    with p.conn() as c:
        t0 = time.monotonic()
        assert c.closed_by_peer(10), "a connection that sent nothing was kept past the head timeout"
        assert time.monotonic() - t0 < 8


def test_body_timeout_cuts_a_trickled_body_with_408(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, limits={"body_timeout": "2s", "idle_timeout": "30s"}))
    c = p.conn()
    c.send(f"POST /echo HTTP/1.1\r\nHost: {p.host_header}\r\nContent-Length: 100\r\n\r\n".encode())
    t0 = time.monotonic()
    for _ in range(40):  # a body byte every 0.5 s, well inside the idle timeout, for up to 20 s
        c.send(b"x")
        readable, _, _ = select.select([c.sock], [], [], 0.5)
        if readable:
            break
    r = c.read_response(timeout=10)
    elapsed = time.monotonic() - t0
    assert r.status == 408, r
    assert r.json()["error"] == "request_timeout"
    assert c.closed_by_peer(10), "the connection stayed open after the body timeout"
    c.close()
    assert elapsed < 8, f"a trickled body was cut only after {elapsed:.1f}s with a 2s body timeout"


# ----- Host (DNS rebinding) -----------------------------------------------------------

def test_unknown_host_refused(proxy, upstream):
    r = proxy.get("/echo", host="evil.example")
    assert 400 <= r.status < 500, r
    r = proxy.get("/echo", host=f"evil.example:{proxy.port}")
    assert 400 <= r.status < 500, r
    assert upstream.accepted == 0


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "[::1]", "LOCALHOST"])
def test_loopback_hosts_accepted(proxy, upstream, name):
    r = proxy.get("/echo", host=f"{name}:{proxy.port}")
    assert r.status == 200, r


@pytest.mark.parametrize("path", ["/a/../echo", "/..", "/a/./echo", "/a/%2e%2e/echo", "/a/%2E./echo", "/%/../echo"])
def test_dot_segments_refused(proxy, upstream, path):
    r = proxy.get(path)
    assert r.status == 400 and r.json()["error"] == "bad_request", r
    assert upstream.accepted == 0


def test_dots_within_a_segment_are_forwarded(proxy, upstream):
    for path in ("/a/..b", "/a/...", "/.well-known/x", "/a/%2/b"):
        r = proxy.get(path)
        assert r.status == 200 and r.json()["path"] == path, (path, r)


def test_allowed_hosts_extend_the_list(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, listeners=[{"name": "main", "allowed_hosts": ["myproxy.test"]}]))
    assert p.get("/echo", host=f"myproxy.test:{p.port}").status == 200
    assert 400 <= p.get("/echo", host=f"other.test:{p.port}").status < 500


# ----- cross-site browser requests ------------------------------------------------------

def test_cross_site_fetch_refused(proxy, upstream):
    r = proxy.get("/echo", headers=[("Sec-Fetch-Site", "cross-site")])
    assert r.status == 403, r
    assert r.json()["error"]
    assert upstream.accepted == 0


def test_foreign_origin_refused(proxy, upstream):
    r = proxy.request("POST", "/echo", headers=[("Origin", "https://evil.example")], body=b"{}")
    assert r.status == 403, r
    assert upstream.accepted == 0


def test_null_origin_refused(proxy, upstream):
    r = proxy.request("POST", "/echo", headers=[("Origin", "null")], body=b"{}")
    assert r.status == 403, r


def test_same_origin_allowed(proxy, upstream):
    r = proxy.get("/echo", headers=[("Origin", f"http://{proxy.host_header}"), ("Sec-Fetch-Site", "same-origin")])
    assert r.status == 200, r


@pytest.mark.parametrize("site", ["none", "same-origin"])
def test_non_cross_site_fetch_allowed(proxy, upstream, site):
    assert proxy.get("/echo", headers=[("Sec-Fetch-Site", site)]).status == 200


def test_cross_site_allowed_on_route_without_credentials(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, route={"inject": []}))
    r = p.get("/echo", headers=[("Sec-Fetch-Site", "cross-site"), ("Origin", "https://evil.example")])
    assert r.status == 200, r


# ----- TRACE and CONNECT on routes that inject, two browser headers, same-site pages -------

@pytest.mark.parametrize("method", ["TRACE", "CONNECT"])
def test_trace_and_origin_form_connect_refused_where_credentials_are_injected(proxy, upstream, method):
    """An upstream that echoes the request (TRACE does, RFC 9110 §9.3.8) would show the
    injected token to the client."""
    with proxy.conn() as c:
        c.send(f"{method} /echo HTTP/1.1\r\nHost: {proxy.host_header}\r\n\r\n".encode())
        r = c.read_response(method=method, timeout=10)
    assert r.status == 405, r
    assert r.json()["error"] == "method_not_allowed"
    assert TOKEN.encode() not in r.body
    assert upstream.accepted == 0


def test_allow_methods_forwards_trace(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, route={"allow_methods": ["TRACE"]}))
    r = p.request("TRACE", "/echo")
    assert r.status == 200, r
    assert r.json()["method"] == "TRACE"
    with p.conn() as c:
        c.send(f"CONNECT /echo HTTP/1.1\r\nHost: {p.host_header}\r\n\r\n".encode())
        assert c.read_response(method="CONNECT", timeout=10).status == 405


def test_trace_forwarded_on_route_without_credentials(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, route={"inject": []}))
    assert p.request("TRACE", "/echo").status == 200


@pytest.mark.parametrize("name,value", [("Origin", None), ("Sec-Fetch-Site", "same-origin")])
def test_two_origin_or_fetch_site_lines_refused(proxy, upstream, name, value):
    """Only the first line used to be checked: a second could carry the real site."""
    value = value or f"http://{proxy.host_header}"
    other = "https://evil.example" if name == "Origin" else "cross-site"
    for pair in ([value, value], [value, other]):
        r = proxy.get("/echo", headers=[(name, pair[0]), (name, pair[1])])
        assert r.status == 400, r
        assert name in r.json()["message"]
    assert upstream.accepted == 0


def test_same_site_page_refused_on_loopback(proxy, upstream):
    """A page on another localhost port is the same site as the proxy, another origin."""
    r = proxy.request("POST", "/echo", headers=[("Origin", "http://localhost:3000"), ("Sec-Fetch-Site", "same-site")],
                      body=b"{}")
    assert r.status == 403, r
    assert r.json()["error"] == "cross_site"
    assert proxy.get("/echo", headers=[("Sec-Fetch-Site", "same-site")]).status == 403
    assert upstream.accepted == 0


def test_allowed_origins_admits_an_app_under_development(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, listeners=[{"name": "main", "allowed_origins": ["http://localhost:3000"]}]))
    app = [("Origin", "http://localhost:3000"), ("Sec-Fetch-Site", "same-site")]
    r = p.request("POST", "/echo", headers=app, body=b"{}")
    assert r.status == 200, r
    assert [v for k, v in r.json()["headers"] if k.lower() == "authorization"] == [f"Bearer {TOKEN}"]
    other = [("Origin", "http://localhost:3001"), ("Sec-Fetch-Site", "same-site")]
    assert p.request("POST", "/echo", headers=other, body=b"{}").status == 403


def test_invalid_allowed_origin_names_the_key(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, listeners=[{"name": "main", "allowed_origins": ["localhost:3000"]}]), wait=False)
    assert p.wait_exit(30) not in (None, 0)
    assert "listeners[0].allowed_origins[0]" in p.log(), p.log()


# ----- inbound access ---------------------------------------------------------------------

def _secret_listener(tmp_path, listen=None):
    f = tmp_path / "inbound-secret"
    f.write_text(SECRET + "\n")
    l = {"name": "main", "inbound": {"shared_secret": {"header": "X-Latchkey-Secret", "file": str(f)}}}
    if listen:
        l["listen"] = listen
    return l


def test_shared_secret_inbound(latchkey, upstream, tmp_path):
    p = latchkey.serve(config(upstream.url, listeners=[_secret_listener(tmp_path)]))
    missing = p.get("/echo")
    assert missing.status in (401, 403), missing
    wrong = p.get("/echo", headers=[("X-Latchkey-Secret", "not-the-secret")])
    assert wrong.status in (401, 403), wrong
    assert upstream.accepted == 0
    ok = p.get("/echo", headers=[("X-Latchkey-Secret", SECRET)])
    assert ok.status == 200, ok


def test_health_answers_without_the_shared_secret(latchkey, upstream, tmp_path):
    """Probes (Docker HEALTHCHECK, a kubelet) carry no credentials; health reveals nothing."""
    p = latchkey.serve(config(upstream.url, listeners=[_secret_listener(tmp_path)]))
    r = p.get("/.latchkey/health")
    assert r.status == 200, r
    assert r.json() == {"status": "ok"}
    assert upstream.accepted == 0


def test_shared_secret_not_forwarded_upstream(latchkey, upstream, tmp_path):
    p = latchkey.serve(config(upstream.url, listeners=[_secret_listener(tmp_path)]))
    seen = p.get("/echo", headers=[("X-Latchkey-Secret", SECRET)]).json()
    assert not [v for k, v in seen["headers"] if k.lower() == "x-latchkey-secret"], \
        "the inbound secret was forwarded to the upstream"


def test_non_loopback_with_shared_secret_starts(latchkey, upstream, tmp_path):
    p = latchkey.serve(config(upstream.url, listeners=[_secret_listener(tmp_path, f"0.0.0.0:{free_port()}")]))
    assert p.get("/echo", headers=[("X-Latchkey-Secret", SECRET)]).status == 200
    assert p.get("/echo").status in (401, 403)


def test_non_loopback_without_inbound_refused_config(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, listeners=[{"name": "main", "listen": f"0.0.0.0:{free_port()}"}]),
                       wait=False)
    rc = p.wait_exit(30)
    assert rc is not None and rc != 0, "a non-loopback listener without inbound check started"
    log = p.log().lower()
    assert "0.0.0.0" in log or "inbound" in log or "loopback" in log, p.log()


def test_non_loopback_without_inbound_refused_flags(latchkey, upstream):
    p = latchkey.quick(upstream.url, listen=f"0.0.0.0:{free_port()}", wait=False)
    rc = p.wait_exit(30)
    assert rc is not None and rc != 0, "--listen 0.0.0.0 without inbound check started"
    log = p.log().lower()
    assert "inbound" in log or "loopback" in log or "0.0.0.0" in log, p.log()


def test_non_loopback_open_true_starts(latchkey, upstream):
    port = free_port()
    p = latchkey.serve(config(upstream.url, listeners=[{"name": "main", "listen": f"0.0.0.0:{port}",
                                                        "inbound": {"open": True}}]))
    assert p.get("/echo", host=f"127.0.0.1:{port}").status == 200


# ----- never an open proxy --------------------------------------------------------------

def test_absolute_form_to_foreign_host_not_forwarded(proxy, upstream, make_upstream):
    other = make_upstream("other")
    with proxy.conn() as c:
        c.send(f"GET http://127.0.0.1:{other.port}/echo HTTP/1.1\r\nHost: 127.0.0.1:{other.port}\r\n\r\n".encode())
        try:
            r = c.read_response(timeout=10)
            assert r.status >= 400 or r.json().get("upstream") == "upstream", r
        except ConnectionClosed:
            pass
    time.sleep(0.3)
    assert other.accepted == 0, "the proxy forwarded to a host no route names"


def test_connect_method_refused(proxy, upstream, make_upstream):
    other = make_upstream("other")
    with proxy.conn() as c:
        c.send(f"CONNECT 127.0.0.1:{other.port} HTTP/1.1\r\nHost: 127.0.0.1:{other.port}\r\n\r\n".encode())
        try:
            r = c.read_response(method="CONNECT", timeout=10)
            assert r.status >= 400, r
        except ConnectionClosed:
            pass
    assert other.accepted == 0


def test_error_bodies_never_contain_the_token(latchkey):
    p = latchkey.quick(f"http://127.0.0.1:{free_port()}")
    for r in (p.get("/echo"), p.get("/echo", host="evil.example"),
              p.get("/echo", headers=[("Sec-Fetch-Site", "cross-site")])):
        assert TOKEN.encode() not in r.body
        assert all(TOKEN not in v for _, v in r.headers)
