"""HTTP/1.1 on the client side, over raw sockets: keep-alive, pipelining, chunked bodies,
Expect: 100-continue, bodiless responses, hop-by-hop headers, upstream connection reuse."""

import hashlib
import json
import time

import pytest

from httpraw import Conn
from support import TOKEN, config, wait_until


def test_keep_alive_several_requests_one_socket(proxy, upstream):
    with proxy.conn() as c:
        for i in range(5):
            c.request("GET", f"/echo?i={i}", host=proxy.host_header)
            r = c.read_response()
            assert r.status == 200, r
            assert r.json()["query"] == f"i={i}"
    assert len(upstream.requests) == 5


def test_upstream_connections_reused(latchkey, upstream):
    p = latchkey.quick(upstream.url, extra=["--loops", "1"])
    for i in range(10):
        assert p.get(f"/echo?i={i}").status == 200
    assert upstream.accepted <= 2, f"{upstream.accepted} upstream connections for 10 sequential requests"


def test_upstream_reuse_across_client_connections_keepalive(latchkey, upstream):
    p = latchkey.quick(upstream.url, extra=["--loops", "1"])
    with p.conn() as c:
        for i in range(10):
            c.request("POST", f"/echo?i={i}", host=p.host_header, body=b"x" * 100)
            assert c.read_response().status == 200
    assert upstream.accepted <= 2, upstream.accepted


def test_pipelining_in_order(proxy, upstream):
    # The first request is the slowest: its answer must still come first.
    body = b"pipelined body"
    raw = (
        f"GET /slow?delay=0.5&n=1 HTTP/1.1\r\nHost: {proxy.host_header}\r\n\r\n"
        f"POST /echo?n=2 HTTP/1.1\r\nHost: {proxy.host_header}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body + f"GET /echo?n=3 HTTP/1.1\r\nHost: {proxy.host_header}\r\n\r\n".encode()
    with proxy.conn() as c:
        c.send(raw)
        got = [c.read_response() for _ in range(3)]
    assert [r.status for r in got] == [200, 200, 200], got
    seen = [r.json() for r in got]
    assert [s["query"] for s in seen] == ["delay=0.5&n=1", "n=2", "n=3"]
    assert seen[1]["method"] == "POST"
    assert seen[1]["body_sha256"] == hashlib.sha256(body).hexdigest()


def test_pipelined_head_then_get(proxy, upstream):
    raw = (f"HEAD /echo?h=1 HTTP/1.1\r\nHost: {proxy.host_header}\r\n\r\n"
           f"GET /echo?h=2 HTTP/1.1\r\nHost: {proxy.host_header}\r\n\r\n").encode()
    with proxy.conn() as c:
        c.send(raw)
        head = c.read_response(method="HEAD")
        get = c.read_response()
    assert head.status == 200, head
    assert head.body == b""
    assert get.status == 200, get
    assert get.json()["query"] == "h=2"


def test_head_has_no_body(proxy, upstream):
    with proxy.conn() as c:
        c.request("HEAD", "/echo", host=proxy.host_header)
        r = c.read_response(method="HEAD")
        assert r.status == 200, r
        # Nothing may follow the head: a GET on the same connection parses cleanly.
        c.request("GET", "/echo?after=head", host=proxy.host_header)
        r2 = c.read_response()
        assert r2.status == 200, r2
        assert r2.json()["query"] == "after=head"
    assert upstream.requests[0].method == "HEAD"


@pytest.mark.parametrize("code", [204, 304])
def test_bodiless_status(proxy, upstream, code):
    with proxy.conn() as c:
        c.request("GET", f"/status/{code}", host=proxy.host_header)
        r = c.read_response()
        assert r.status == code, r
        assert not r.has_header("Transfer-Encoding"), r
        if code == 204:
            assert r.header("Content-Length") in (None, "0"), r
        c.request("GET", "/echo?after=bodiless", host=proxy.host_header)
        r2 = c.read_response()
        assert r2.status == 200, r2
        assert r2.json()["query"] == "after=bodiless"


@pytest.mark.parametrize("code,length,forwarded", [(204, "0", None), (304, "12", "12")])
def test_bodiless_status_content_length(proxy, upstream, code, length, forwarded):
    """RFC 9110 §8.6: a 204 must not carry Content-Length, whatever the upstream sent; a
    304 may carry the length its 200 would have, and keeps it."""
    with proxy.conn() as c:
        c.request("GET", f"/status/{code}?content_length={length}", host=proxy.host_header)
        r = c.read_response()
        assert r.status == code, r
        assert r.header("Content-Length") == forwarded, r
        c.request("GET", "/echo?after=bodiless", host=proxy.host_header)
        assert c.read_response().json()["query"] == "after=bodiless"


def test_upstream_error_status_passes_through(proxy, upstream):
    r = proxy.get("/status/500")
    assert r.status == 500
    assert r.json() == {"status": 500}


def test_chunked_request_body(proxy, upstream):
    pieces = [b"hello ", b"chunked ", b"world" * 1000, b"!"]
    expected = b"".join(pieces)
    with proxy.conn() as c:
        c.send(f"POST /echo HTTP/1.1\r\nHost: {proxy.host_header}\r\nTransfer-Encoding: chunked\r\n"
               f"Content-Type: text/plain\r\n\r\n".encode())
        for i, piece in enumerate(pieces):
            ext = ";note=x" if i == 1 else ""
            c.send(b"%x%s\r\n%s\r\n" % (len(piece), ext.encode(), piece))
            time.sleep(0.05)
        c.send(b"0\r\n\r\n")
        r = c.read_response()
    assert r.status == 200, r
    seen = r.json()
    assert seen["body_length"] == len(expected)
    assert seen["body_sha256"] == hashlib.sha256(expected).hexdigest()


def test_chunked_request_then_next_request_on_same_socket(proxy, upstream):
    with proxy.conn() as c:
        c.send(f"POST /echo HTTP/1.1\r\nHost: {proxy.host_header}\r\nTransfer-Encoding: chunked\r\n\r\n"
               f"5\r\nabcde\r\n0\r\n\r\n"
               f"GET /echo?second=1 HTTP/1.1\r\nHost: {proxy.host_header}\r\n\r\n".encode())
        r1, r2 = c.read_response(), c.read_response()
    assert r1.json()["body_length"] == 5
    assert r2.json()["query"] == "second=1"


def test_chunked_response(proxy, upstream):
    n = 300_000
    r = proxy.get(f"/big-chunked?bytes={n}")
    assert r.status == 200, r
    assert r.complete
    assert len(r.body) == n
    assert hashlib.sha256(r.body).hexdigest() == r.header("X-Body-Sha256")


def test_expect_100_continue(proxy, upstream):
    body = b"x" * 10_000
    with proxy.conn() as c:
        c.send(f"POST /echo HTTP/1.1\r\nHost: {proxy.host_header}\r\nContent-Length: {len(body)}\r\n"
               f"Expect: 100-continue\r\n\r\n".encode())
        interim = c.read_response(skip_interim=False, timeout=10)
        assert interim.status == 100, f"expected 100 Continue before sending the body, got {interim}"
        c.send(body)
        r = c.read_response()
    assert r.status == 200, r
    assert r.json()["body_length"] == len(body)


def test_http10_client(proxy, upstream):
    with proxy.conn() as c:
        c.send(f"GET /echo HTTP/1.0\r\nHost: {proxy.host_header}\r\n\r\n".encode())
        r = c.read_response()
        assert r.status == 200, r
        assert r.json()["path"] == "/echo"
        assert "chunked" not in (r.header("Transfer-Encoding") or "").lower(), "no chunked to HTTP/1.0"
        assert c.closed_by_peer(10), "an HTTP/1.0 request without keep-alive ends the connection"


def test_connection_close_honoured(proxy, upstream):
    with proxy.conn() as c:
        c.request("GET", "/echo", host=proxy.host_header, headers=[("Connection", "close")])
        r = c.read_response()
        assert r.status == 200
        assert c.closed_by_peer(10)


def test_hop_by_hop_request_headers_removed(proxy, upstream):
    seen = proxy.get("/echo", headers=[
        ("Connection", "keep-alive, X-Drop-Me"),
        ("X-Drop-Me", "should-not-arrive"),
        ("Keep-Alive", "timeout=5"),
        ("Proxy-Connection", "keep-alive"),
        ("TE", "trailers"),
        ("X-Keep-Me", "arrives"),
    ]).json()
    names = {k.lower() for k, _ in seen["headers"]}
    for gone in ("x-drop-me", "keep-alive", "proxy-connection", "te"):
        assert gone not in names, f"{gone} was forwarded: {seen['headers']}"
    assert ("X-Keep-Me", "arrives") in [tuple(h) for h in seen["headers"]]
    for k, v in seen["headers"]:
        if k.lower() == "connection":
            assert "x-drop-me" not in v.lower()


def test_proxy_authorization_not_forwarded(proxy, upstream):
    """Credentials meant for a proxy (RFC 9110 §11.7.2) are not the upstream's business."""
    seen = proxy.get("/echo", headers=[("Proxy-Authorization", "Basic c2VjcmV0")]).json()
    assert not [v for k, v in seen["headers"] if k.lower() == "proxy-authorization"], seen["headers"]


def test_hop_by_hop_response_headers_removed(proxy, upstream):
    r = proxy.get("/hop")
    assert r.status == 200, r
    assert not r.has_header("X-Hop-Resp"), r
    assert not r.has_header("Keep-Alive"), r
    assert r.header("X-Keep") == "yes"


def test_idle_keep_alive_connection_closed(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, limits={"idle_timeout": "1s"}))
    with p.conn() as c:
        c.request("GET", "/echo", host=p.host_header)
        assert c.read_response().status == 200
        t0 = time.monotonic()
        assert c.closed_by_peer(10), "idle keep-alive connection was not closed"
        assert time.monotonic() - t0 < 8


def test_many_sequential_connections(proxy, upstream):
    for i in range(50):
        assert proxy.get(f"/echo?i={i}").status == 200


def test_concurrent_clients(proxy, upstream):
    from concurrent.futures import ThreadPoolExecutor

    def one(i):
        with proxy.conn() as c:
            for j in range(5):
                c.request("GET", f"/echo?c={i}&j={j}", host=proxy.host_header)
                r = c.read_response()
                if r.status != 200 or r.json()["query"] != f"c={i}&j={j}":
                    return False
        return True

    with ThreadPoolExecutor(16) as ex:
        assert all(ex.map(one, range(32)))


def test_upstream_close_delimited_body_framed_for_client(proxy, upstream):
    """An upstream body delimited by closing its connection must reach the client framed
    (Content-Length or chunked) on a connection that stays usable, or delimited by close."""
    n = 200_000
    with proxy.conn() as c:
        c.request("GET", f"/eof-body?bytes={n}", host=proxy.host_header)
        r = c.read_response(timeout=30)
        assert r.status == 200, r
        assert r.complete and len(r.body) == n, f"got {len(r.body)} of {n} bytes"
        assert hashlib.sha256(r.body).hexdigest() == r.header("X-Body-Sha256")
        if not r.close_delimited:
            c.request("GET", "/echo?after=eof", host=proxy.host_header)
            assert c.read_response().status == 200


def test_upstream_connection_close_not_reused(latchkey, upstream):
    p = latchkey.quick(upstream.url, extra=["--loops", "1"])
    assert p.get("/close").status == 200
    assert p.get("/echo").status == 200
    assert upstream.accepted == 2


def test_stale_pooled_upstream_connection_recovered(latchkey, upstream):
    """The upstream closes an idle keep-alive connection; the next request must not fail."""
    p = latchkey.quick(upstream.url, extra=["--loops", "1"])
    for i in range(3):
        assert p.get(f"/close-after?i={i}").status == 200
        first = upstream.connections[-1]
        assert upstream.wait_until(lambda: first.closed_at is not None, 5)
        r = p.get(f"/echo?after-stale={i}")
        assert r.status == 200, f"request after the upstream closed its idle connection: {r}"


def test_upstream_trailers(proxy, upstream):
    r = proxy.get("/trailers")
    assert r.status == 200, r
    assert r.complete
    assert r.body == b"hello world"


def test_chunked_request_with_trailers(proxy, upstream):
    with proxy.conn() as c:
        c.send(f"POST /echo HTTP/1.1\r\nHost: {proxy.host_header}\r\nTransfer-Encoding: chunked\r\n"
               f"Trailer: X-Sum\r\n\r\n5\r\nhello\r\n0\r\nX-Sum: 1\r\n\r\n"
               f"GET /echo?next=1 HTTP/1.1\r\nHost: {proxy.host_header}\r\n\r\n".encode())
        r1, r2 = c.read_response(), c.read_response()
    assert r1.status == 200 and r1.json()["body_length"] == 5, r1
    assert r2.json()["query"] == "next=1"


def test_head_keeps_content_length(proxy, upstream):
    get = proxy.get("/big?bytes=12345")
    assert get.status == 200
    with proxy.conn() as c:
        c.request("HEAD", "/big?bytes=12345", host=proxy.host_header)
        head = c.read_response(method="HEAD")
    assert head.status == 200
    assert head.header("Content-Length") == "12345", f"HEAD should carry GET's Content-Length: {head}"


def test_get_with_body_forwarded(proxy, upstream):
    r = proxy.request("DELETE", "/echo/item", body=b'{"why":"test"}')
    assert r.status == 200
    seen = r.json()
    assert seen["method"] == "DELETE" and seen["body_length"] == len(b'{"why":"test"}')


def test_many_idle_connections_then_requests(proxy, upstream):
    conns = [proxy.conn() for _ in range(300)]
    try:
        for i, c in enumerate(conns):
            c.request("GET", f"/echo?c={i}", host=proxy.host_header)
        for i, c in enumerate(conns):
            r = c.read_response()
            assert r.status == 200 and r.json()["query"] == f"c={i}", r
    finally:
        for c in conns:
            c.close()


def test_large_upstream_response_header(proxy, upstream):
    r = proxy.get("/redirect?pad=20000")
    assert r.status == 302, r
    assert r.header("Location") == "https://other.example/" + "x" * 20000
