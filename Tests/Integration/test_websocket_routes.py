"""A WebSocket handshake as a route's request, through the real binary: the route's path
mapping (a prefix stripped, an upstream base path, the query kept), a query-parameter
injection kept out of the log, a wss:// upstream with its own CA, a listener's shared
secret, bytes that come right behind the handshake or right behind the 101, case and
list forms of the switch's fields, HTTP/1.0, an upstream that refuses the connection or
never answers, and a reload while a stream is open."""

from __future__ import annotations

import socket
import ssl
import time

import pytest
from websockets.exceptions import InvalidStatus

from support import SECRET, TOKEN, config, free_port, json_lines, wait_until
from test_metrics import scrape
from tls_support import Certs
from websocket_support import (TEXT, RawUpgradeServer, client, frame, frame_size, handshake_headers,  # noqa: F401
                               make_ws_server, read_frame, ws_server)


def echo(ws, message) -> None:
    ws.send(message)
    assert ws.recv(timeout=10) == message


def upgrade_lines(p, path: str) -> list[dict]:
    return [line for line in json_lines(p.log()) if line.get("path", "").startswith(path) and line.get("status") == 101]


def test_prefix_stripping_base_path_and_query(latchkey, ws_server):
    route = {"path": "/socket", "strip_prefix": True, "upstream": ws_server.url + "/backend"}
    p = latchkey.serve(config(ws_server.url, route=route))
    with client(p, "/socket/live/room?id=7&x=%20y") as ws:
        echo(ws, "mapped")
    assert ws_server.wait_session().path == "/backend/live/room?id=7&x=%20y"


def test_a_query_injection_on_the_handshake_stays_out_of_the_log(latchkey, ws_server):
    route = {"inject": [{"query": "api_key", "value": "{token}", "credential": "api"}]}
    p = latchkey.serve(config(ws_server.url, route=route, logging={"format": "json"}))
    with client(p, "/q?page=2") as ws:
        echo(ws, "query")
    session = ws_server.wait_session()
    assert session.path.startswith("/q?") and f"api_key={TOKEN}" in session.path and "page=2" in session.path
    assert session.header("Authorization") is None
    assert wait_until(lambda: upgrade_lines(p, "/q")), p.log_tail()
    assert TOKEN not in p.log()


def tls_ws_server(make_ws_server, tmp_path):
    """A wss:// upstream whose certificate (for localhost) a CA of its own signed; the CA's
    files are returned beside the server."""
    certs = Certs(tmp_path / "pki")
    ca = certs.ca("upstream-ca")
    leaf = certs.leaf(ca, "upstream", names=("localhost",))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(leaf.cert), str(leaf.key))
    return make_ws_server(ssl=context), ca


def test_a_wss_upstream_with_its_own_ca(latchkey, make_ws_server, tmp_path):
    server, ca = tls_ws_server(make_ws_server, tmp_path)
    p = latchkey.serve(config(server.url, route={"upstream": {"url": server.url, "ca_file": str(ca.cert)}}))
    with client(p, "/tls-upstream") as ws:
        big = bytes(range(256)) * 20000  # 5 MB: many TLS records each way
        echo(ws, big)
        for n in range(500):
            echo(ws, f"over TLS {n}")
    session = server.wait_session()
    assert session.header("Authorization") == f"Bearer {TOKEN}"
    assert session.wait_ended() and session.close_code == 1000


def test_a_client_that_leaves_without_a_close_frame_ends_a_tls_upstreams_stream(latchkey, make_ws_server, tmp_path):
    """A TLS upstream cannot be half-closed through libcurl: a client's end of its sending
    (here its FIN, no close frame) ends the stream at once rather than leaving it open
    until the upstream gives up."""
    server, ca = tls_ws_server(make_ws_server, tmp_path)
    p = latchkey.serve(config(server.url, route={"upstream": {"url": server.url, "ca_file": str(ca.cert)}}, logging={"format": "json"}))
    c = p.conn()
    head = "GET /leaving HTTP/1.1\r\nHost: " + p.host_header + "\r\n" + \
        "".join(f"{k}: {v}\r\n" for k, v in handshake_headers()) + "\r\n"
    c.send(head.encode() + frame(TEXT, b"bye"))
    assert c.read_head().status == 101
    assert read_frame(c.sock, c.buf) == (TEXT, True, b"bye")
    c.sock.shutdown(socket.SHUT_WR)
    session = server.wait_session()
    assert session.wait_ended(), "the upstream's stream stays open"
    assert wait_until(lambda: upgrade_lines(p, "/leaving")), p.log_tail()
    c.close()


def test_a_wss_upstream_that_latchkey_does_not_trust_is_502(latchkey, make_ws_server, tmp_path):
    server, _ = tls_ws_server(make_ws_server, tmp_path)  # its CA is not given to Latchkey
    p = latchkey.serve(config(server.url))
    with pytest.raises(InvalidStatus) as refused:
        client(p, "/untrusted")
    assert refused.value.response.status_code == 502
    assert server.sessions == []


def test_a_listeners_shared_secret_guards_the_handshake(latchkey, ws_server):
    listener = {"name": "main", "inbound": {"shared_secret": {"header": "X-Latchkey-Secret", "value": SECRET}}}
    p = latchkey.serve(config(ws_server.url, listeners=[listener]))
    for headers, status in (({}, 401), ({"X-Latchkey-Secret": "wrong"}, 403)):
        with pytest.raises(InvalidStatus) as refused:
            client(p, "/guarded", additional_headers=headers)
        assert refused.value.response.status_code == status
    assert ws_server.handshakes == []
    with client(p, "/guarded", additional_headers={"X-Latchkey-Secret": SECRET}) as ws:
        echo(ws, "let in")
    session = ws_server.wait_session()
    assert session.header("X-Latchkey-Secret") is None, "the listener's secret went upstream"


def test_a_frame_sent_right_behind_the_handshake(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url, logging={"format": "json"}))
    c = p.conn()
    head = "GET /eager HTTP/1.1\r\nHost: " + p.host_header + "\r\n" + \
        "".join(f"{k}: {v}\r\n" for k, v in handshake_headers()) + "\r\n"
    eager = frame(TEXT, b"sent before the 101")
    c.send(head.encode() + eager)
    assert c.read_head().status == 101
    assert read_frame(c.sock, c.buf) == (TEXT, True, b"sent before the 101")
    assert ws_server.wait_session().messages == ["sent before the 101"]
    c.close()
    assert wait_until(lambda: upgrade_lines(p, "/eager")), p.log_tail()
    [line] = upgrade_lines(p, "/eager")
    # The frame reached the upstream (above): it counts as a byte sent upstream.
    assert line["bytes_in"] == len(eager), line
    assert line["bytes_out"] == frame_size(len(b"sent before the 101"), masked=False), line
    samples = scrape(p)[1]
    assert samples['latchkey_upgraded_bytes_total{route="api",direction="to_upstream"}'] == len(eager)


def test_bytes_the_upstream_sends_with_its_101(latchkey):
    greeting = frame(TEXT, b"welcome, sent with the 101", mask=False)
    raw = RawUpgradeServer("websocket", greeting=greeting)
    try:
        p = latchkey.serve(config(raw.url, logging={"format": "json"}))
        c = p.conn()
        c.request("GET", "/greeted", headers=handshake_headers(), host=p.host_header)
        assert c.read_head().status == 101
        assert read_frame(c.sock, c.buf) == (TEXT, True, b"welcome, sent with the 101")
        c.send(frame(TEXT, b"and an echo"))
        assert read_frame(c.sock, c.buf)[2] == b"and an echo"
        c.close()
        assert wait_until(lambda: upgrade_lines(p, "/greeted")), p.log_tail()
        [line] = upgrade_lines(p, "/greeted")
        assert line["bytes_out"] == len(greeting) + frame_size(len(b"and an echo"), masked=True), line
    finally:
        raw.close()


@pytest.mark.parametrize("connection, upgrade", [
    ("keep-alive, Upgrade", "websocket"),
    ("upgrade", "WebSocket"),
    ("keep-alive,UPGRADE", "websocket"),
])
def test_the_switchs_fields_in_any_case_and_list_form(latchkey, ws_server, connection, upgrade):
    p = latchkey.serve(config(ws_server.url))
    fields = [("Connection", connection), ("Upgrade", upgrade)] + handshake_headers()[2:]
    with p.conn() as c:
        c.request("GET", "/forms", headers=fields, host=p.host_header)
        head = c.read_head()
        assert head.status == 101, head
        assert head.header("Sec-WebSocket-Accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="  # RFC 6455 §1.3's example
        c.send(frame(TEXT, b"any form"))
        assert read_frame(c.sock, c.buf) == (TEXT, True, b"any form")


def test_an_http_1_0_request_with_upgrade_is_a_plain_request(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url))
    with p.conn() as c:
        lines = ["GET /old HTTP/1.0", f"Host: {p.host_header}"] + [f"{k}: {v}" for k, v in handshake_headers()]
        c.send(("\r\n".join(lines) + "\r\n\r\n").encode())
        answer = c.read_response()
    assert answer.status != 101, answer
    assert not ws_server.upgrade_handshakes(), "an HTTP/1.0 request was sent as an upgrade"


def test_an_upstream_that_refuses_the_connection_is_502(latchkey):
    p = latchkey.serve(config(f"http://127.0.0.1:{free_port()}"))
    with pytest.raises(InvalidStatus) as refused:
        client(p, "/nobody-home")
    assert refused.value.response.status_code == 502


def test_an_upstream_that_never_answers_the_handshake_is_504(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, route={"upstream": {"url": upstream.url, "first_byte_timeout": "1s"}}))
    started = time.monotonic()
    with pytest.raises(InvalidStatus) as refused:
        client(p, "/hold")
    assert refused.value.response.status_code == 504
    assert 0.9 <= time.monotonic() - started < 8
    assert upstream.wait_for_request("hold")


def test_a_reload_leaves_an_open_stream_alone(latchkey, ws_server, make_ws_server):
    other = make_ws_server()
    cfg = config(ws_server.url)
    p = latchkey.serve(cfg)
    with client(p, "/before-reload") as ws:
        echo(ws, "before")
        outcome = p.reload(config(other.url))
        assert "not reloaded" not in outcome, outcome
        for n in range(20):
            echo(ws, f"after the reload {n}")
    assert ws_server.wait_session().messages[-1] == "after the reload 19"
    # New streams go where the new configuration says.
    with client(p, "/after-reload") as ws:
        echo(ws, "new")
    assert other.wait_session().path == "/after-reload"


@pytest.mark.parametrize("preserve", [False, True])
def test_the_handshakes_host(latchkey, ws_server, preserve):
    p = latchkey.serve(config(ws_server.url, route={"preserve_host": preserve}))
    with client(p, "/host") as ws:
        echo(ws, "host")
    expected = p.host_header if preserve else f"127.0.0.1:{ws_server.port}"
    assert ws_server.wait_session().header("Host") == expected


def test_a_cookie_injection_on_the_handshake(latchkey, ws_server):
    route = {"inject": [{"cookie": "sid", "value": "{token}", "credential": "api"}]}
    p = latchkey.serve(config(ws_server.url, route=route))
    with client(p, "/cookie", additional_headers={"Cookie": "theme=dark"}) as ws:
        echo(ws, "cookie")
    cookies = ws_server.wait_session().header("Cookie")
    assert f"sid={TOKEN}" in cookies and "theme=dark" in cookies, cookies


def test_a_routes_upstream_proxy_carries_the_handshake_in_a_connect_tunnel(latchkey, make_ws_server):
    """`upstream.proxy`: the handshake and the stream go through a CONNECT tunnel of that
    proxy (here a second Latchkey listener, a forward proxy that tunnels to the server's
    address), never as requests for the proxy itself."""
    from tunnel_support import machine_address
    address = machine_address()
    server = make_ws_server(host=address)
    proxy_port = free_port()
    route = {"upstream": {"url": f"http://{address}:{server.port}", "proxy": f"http://127.0.0.1:{proxy_port}"}, "listeners": ["main"]}
    listeners = [{"name": "main"}, {"name": "fwd", "listen": f"127.0.0.1:{proxy_port}", "mode": "forward", "tunnel": [address]}]
    p = latchkey.serve(config(route=route, listeners=listeners, logging={"format": "json"}))
    with client(p, "/through-proxy") as ws:
        echo(ws, "tunnelled")
    assert server.wait_session().path == "/through-proxy"
    assert server.handshakes[0].header("Authorization") == f"Bearer {TOKEN}"
    connects = wait_until(lambda: [r for r in json_lines(p.log()) if r.get("method") == "CONNECT"])
    assert connects and connects[0]["path"] == f"{address}:{server.port}", p.log_tail()
