"""Per-route upstream options that need a peer of their own: an HTTP proxy for corporate
networks (the request goes to the proxy in absolute form, credential attached) and the
connect timeout."""

import json

import pytest
import socket

from canned_server import CannedServer
from support import TOKEN, config


class ForwardProxyStub(CannedServer):
    """A minimal HTTP forward proxy: records each request line and its headers and answers
    itself (the upstream named in the URL need not exist)."""

    def __init__(self):
        self.requests = []
        super().__init__(self._answer)

    def _answer(self, head, conn):
        lines = head.decode("latin-1").split("\r\n")
        headers = [line.split(":", 1) for line in lines[1:]]
        self.requests.append({"line": lines[0], "headers": [[k, v.strip()] for k, v in headers]})
        body = json.dumps({"via": "forward-proxy"}).encode()
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                     b"Connection: close\r\n\r\n%s" % (len(body), body))


def test_route_reaches_its_upstream_through_an_http_proxy(latchkey):
    stub = ForwardProxyStub()
    try:
        upstream = {"url": "http://api.internal.example:8000/v1", "proxy": f"http://127.0.0.1:{stub.port}"}
        p = latchkey.serve(config(route={"upstream": upstream}))
        r = p.get("/things?page=2")
        assert r.status == 200, r
        assert r.json() == {"via": "forward-proxy"}
        assert stub.requests, "the request never reached the forward proxy"
        seen = stub.requests[0]
        assert seen["line"] == "GET http://api.internal.example:8000/v1/things?page=2 HTTP/1.1", seen
        auth = [v for k, v in seen["headers"] if k.lower() == "authorization"]
        assert auth == [f"Bearer {TOKEN}"], seen
    finally:
        stub.close()


def test_connect_timeout_is_a_504(latchkey):
    # A listening socket whose backlog is full and never accepted: further connects hang
    # in SYN_SENT on loopback, which is what an unreachable host looks like.
    blackhole = socket.socket()
    blackhole.bind(("127.0.0.1", 0))
    blackhole.listen(0)
    port = blackhole.getsockname()[1]
    fillers = []
    try:
        for _ in range(8):
            s = socket.socket()
            s.setblocking(False)
            try:
                s.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
            fillers.append(s)
        upstream = {"url": f"http://127.0.0.1:{port}", "connect_timeout": "500ms"}
        p = latchkey.serve(config(route={"upstream": upstream}))
        r = p.get("/echo", timeout=10)
        assert r.status == 504, r
        assert r.json()["error"] == "upstream_timeout"
    finally:
        for s in fillers:
            s.close()
        blackhole.close()


def test_response_heads_ended_by_bare_lf_are_read_by_both_engines(latchkey):
    """RFC 9112 §2.2 lets a recipient take a bare LF as a line's end: Latchkey's own HTTP/1.1
    reads such a response head, as libcurl (`engine: libcurl`) and nginx do, and the client
    gets it with CRLF."""
    stub = CannedServer(lambda head, conn: conn.sendall(
        b"HTTP/1.1 200 OK\nContent-Length: 2\nX-Upstream: lf\r\nConnection: close\n\nok"))
    try:
        for route in ({"upstream": stub.url}, {"upstream": {"url": stub.url, "engine": "libcurl"}}):
            p = latchkey.serve(config(route=route))
            answered = p.get("/thing")
            assert answered.status == 200, (route, answered)
            assert answered.body == b"ok"
            assert answered.header("X-Upstream") == "lf"
            p.stop()
    finally:
        stub.close()


def test_engine_is_a_route_setting_only(latchkey, tmp_path):
    path = tmp_path / "engine.yaml"
    path.write_text("routes:\n  - { name: a, path: /, upstream: { url: 'http://127.0.0.1:9', engine: curl } }\n")
    result = latchkey.run(["check", "--config", str(path)])
    assert result.returncode != 0
    assert "routes[0].upstream.engine: unknown engine \"curl\"" in result.stderr + result.stdout


def test_chunk_framing_ended_by_bare_lf_is_read_by_both_engines(latchkey):
    """An upstream's chunk framing lines may end in a bare LF, as nginx and libcurl read
    them: Latchkey's own HTTP/1.1 reads the body too, and the client gets it framed anew
    with CRLF. A client's may not (the request decoder's cases)."""
    stub = CannedServer(lambda head, conn: conn.sendall(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\nok\n3;x=y\n!!!\r\n0\nT: v\n\n"))
    try:
        for route in ({"upstream": stub.url}, {"upstream": {"url": stub.url, "engine": "libcurl"}}):
            p = latchkey.serve(config(route=route))
            answered = p.get("/thing")
            assert answered.status == 200 and answered.complete, (route, answered)
            assert answered.body == b"ok!!!"
            p.stop()
    finally:
        stub.close()
