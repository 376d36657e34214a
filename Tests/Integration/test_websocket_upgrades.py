"""Which requests a route switches, through the real binary: malformed WebSocket handshakes
(RFC 6455 §4.1: one Sec-WebSocket-Key that is the base64 of 16 bytes, one
Sec-WebSocket-Version, a GET without a body) answered 400 `bad_request` without reaching
the upstream; a protocol the route does not list answered 400 `upgrade_not_allowed`, or
forwarded without the upgrade with `unlisted_upgrades: plain`; `upgrades: []`; another
listed protocol switched and relayed; `h2c` refused by `check`; a cross-site handshake.
Raw sockets (httpraw.Conn) send what a WebSocket library would not."""

from __future__ import annotations

import os
import socket

import pytest
from websockets.exceptions import InvalidStatus

from support import TOKEN, config, dump_yaml, json_lines, wait_until
from websocket_support import RawUpgradeServer, client, handshake_headers, make_ws_server, ws_server  # noqa: F401


def raw_handshake(p, headers, method: str = "GET", path: str = "/ws", body: bytes | None = None):
    with p.conn() as c:
        c.request(method, path, headers=headers, body=body, host=p.host_header)
        return c.read_response(method=method)


def error_of(response) -> str:
    assert "json" in (response.header("Content-Type") or ""), response
    return response.json()["error"]


@pytest.mark.parametrize("label, headers, method, body", [
    ("no key", handshake_headers(key=None), "GET", None),
    ("a key of 15 bytes", handshake_headers(key="AAAAAAAAAAAAAAAAAAAA"), "GET", None),
    ("a key that is not base64", handshake_headers(key="not base64 at all!!!!!=="), "GET", None),
    ("two keys", handshake_headers(extra=[("Sec-WebSocket-Key", "AQIDBAUGBwgJCgsMDQ4PEA==")]), "GET", None),
    ("no version", handshake_headers(version=None), "GET", None),
    ("two versions", handshake_headers(extra=[("Sec-WebSocket-Version", "13")]), "GET", None),
    ("a POST", handshake_headers(), "POST", b""),
    ("a GET with a body", handshake_headers(), "GET", b"hello"),
])
def test_a_malformed_handshake_is_400_and_never_reaches_the_upstream(latchkey, ws_server, label, headers, method, body):
    p = latchkey.serve(config(ws_server.url))
    answer = raw_handshake(p, headers, method=method, body=body)
    assert answer.status == 400, f"{label}: {answer}"
    assert error_of(answer) == "bad_request", f"{label}: {answer}"
    assert ws_server.handshakes == [], f"{label}: the upstream was asked"
    # The same request well formed goes through.
    with client(p, "/ws") as ws:
        ws.send(label)
        assert ws.recv(timeout=10) == label


def test_an_unlisted_protocol_is_refused(latchkey, upstream):
    p = latchkey.serve(config(upstream.url))
    answer = raw_handshake(p, [("Connection", "Upgrade"), ("Upgrade", "foo")])
    assert answer.status == 400, answer
    assert error_of(answer) == "upgrade_not_allowed"
    assert answer.json().get("route") == "api"
    assert upstream.accepted == 0


def test_an_unlisted_protocol_goes_as_a_plain_request_with_unlisted_upgrades_plain(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, route={"unlisted_upgrades": "plain"}))
    answer = raw_handshake(p, [("Connection", "keep-alive, Upgrade"), ("Upgrade", "foo/2, bar"), ("X-Marker", "kept")],
                           path="/echo/plain")
    assert answer.status == 200, answer
    seen = answer.json()
    names = {name.lower(): value for name, value in seen["headers"]}
    assert "upgrade" not in names, seen["headers"]
    assert "upgrade" not in names.get("connection", "").lower(), seen["headers"]
    assert names["x-marker"] == "kept"
    assert names["authorization"] == f"Bearer {TOKEN}"
    assert seen["path"] == "/echo/plain"


def test_upgrades_empty_refuses_websocket_too(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url, route={"upgrades": []}))
    with pytest.raises(InvalidStatus) as refused:
        client(p, "/ws")
    assert refused.value.response.status_code == 400
    assert b"upgrade_not_allowed" in refused.value.response.body
    assert ws_server.handshakes == []


def test_upgrades_empty_with_unlisted_plain_sends_a_plain_get(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, route={"upgrades": [], "unlisted_upgrades": "plain"}))
    answer = raw_handshake(p, handshake_headers(), path="/echo/ws")
    # A plain GET: the stub answers it as any GET, and the handshake's own fields pass as
    # end-to-end fields; the switch's hop-by-hop ones do not.
    assert answer.status == 200, answer
    names = {name.lower(): value for name, value in answer.json()["headers"]}
    assert "upgrade" not in names and "upgrade" not in names.get("connection", "").lower(), names


def test_another_listed_protocol_is_switched_and_relayed(latchkey):
    raw = RawUpgradeServer("foo")
    try:
        p = latchkey.serve(config(raw.url, route={"upgrades": ["websocket", "foo"]}))
        with p.conn() as c:
            c.request("GET", "/raw", headers=[("Connection", "Upgrade"), ("Upgrade", "foo/1"),
                                             ("Authorization", "Bearer the-clients-own")], host=p.host_header)
            head = c.read_head()
            assert head.status == 101, head
            assert head.header("Upgrade") == "foo"
            assert "upgrade" in head.header("Connection").lower()
            assert head.header("X-Raw-Upstream") == "yes"
            data = os.urandom(200_000)
            c.send(data)
            echoed = bytes(c.buf)
            c.sock.settimeout(10)
            while len(echoed) < len(data):
                chunk = c.sock.recv(65536)
                assert chunk, f"the relay ended after {len(echoed)} bytes"
                echoed += chunk
            assert echoed == data
            c.sock.shutdown(socket.SHUT_WR)
            assert c.sock.recv(10) == b"", "the relay did not end after both FINs"
        assert len(raw.heads) == 1
        lines = raw.heads[0].split("\r\n")
        assert lines[0] == "GET /raw HTTP/1.1"
        assert f"Authorization: Bearer {TOKEN}" in lines
        assert "Upgrade: foo/1" in lines
    finally:
        raw.close()


def test_h2c_is_refused_by_check(latchkey):
    path = latchkey.write("h2c.yaml", dump_yaml(config("http://127.0.0.1:9", route={"upgrades": ["websocket", "h2c"]})))
    done = latchkey.run(["check", "--config", str(path)])
    assert done.returncode == 1, done.stdout + done.stderr
    assert "h2c" in done.stdout + done.stderr
    path = latchkey.write("bad.yaml", dump_yaml(config("http://127.0.0.1:9", route={"unlisted_upgrades": "sometimes"})))
    done = latchkey.run(["check", "--config", str(path)])
    assert done.returncode == 1 and "unlisted_upgrades" in done.stdout + done.stderr, done.stdout + done.stderr


def test_a_cross_site_handshake_is_403(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url, logging={"format": "json"}))
    for origin in ("http://evil.example", f"http://127.0.0.1:{p.port + 1 if p.port < 65535 else 1}"):
        with pytest.raises(InvalidStatus) as refused:
            client(p, "/ws", origin=origin)
        assert refused.value.response.status_code == 403
        assert b"cross_site" in refused.value.response.body
    assert ws_server.handshakes == []
    # The proxy's own origin is the same site.
    with client(p, "/ws", origin=f"http://{p.host_header}") as ws:
        ws.send("same site")
        assert ws.recv(timeout=10) == "same site"
    statuses = lambda: [line.get("status") for line in json_lines(p.log()) if line.get("path") == "/ws"]  # noqa: E731
    assert wait_until(lambda: len(statuses()) == 3), p.log_tail()
    assert statuses() == [403, 403, 101]
