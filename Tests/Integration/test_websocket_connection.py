"""The client's connection around a handshake, through the real binary: a kept-alive
connection that makes plain requests and then switches; a handshake the upstream answers
without switching (a JSON 200 from a plain HTTP server, a 401 with a body) relayed as a
response, after which the connection serves the next request; a client that leaves while
the handshake is under way, whose upstream connection is closed."""

from __future__ import annotations

import threading

from support import TOKEN, config, json_lines, wait_until
from test_metrics import scrape
from websocket_support import TEXT, frame, handshake_headers, make_ws_server, read_frame, ws_server  # noqa: F401


def test_plain_requests_then_a_switch_on_one_connection(latchkey, ws_server, make_ws_server):
    ws_server.pages["/page"] = ("text/plain", b"a plain page\n")
    p = latchkey.serve(config(ws_server.url))
    with p.conn() as c:
        for n in range(3):
            c.request("GET", "/page", host=p.host_header)
            answer = c.read_response()
            assert (answer.status, answer.body) == (200, b"a plain page\n"), answer
        c.request("GET", "/then-switch", headers=handshake_headers(), host=p.host_header)
        head = c.read_head()
        assert head.status == 101, head
        c.send(frame(TEXT, b"switched after three requests"))
        assert read_frame(c.sock, c.buf) == (TEXT, True, b"switched after three requests")
    assert ws_server.wait_session().header("Authorization") == f"Bearer {TOKEN}"


def test_a_handshake_a_plain_server_answers_is_relayed_and_the_connection_goes_on(latchkey, upstream):
    p = latchkey.serve(config(upstream.url))
    with p.conn() as c:
        c.request("GET", "/echo/not-a-websocket-server", headers=handshake_headers(), host=p.host_header)
        answer = c.read_response()
        assert answer.status == 200, answer
        seen = {name.lower(): value for name, value in answer.json()["headers"]}
        # The upstream was asked to switch, with the route's credential.
        assert seen["upgrade"] == "websocket" and "upgrade" in seen["connection"].lower()
        assert seen["authorization"] == f"Bearer {TOKEN}"
        assert seen["sec-websocket-key"] == handshake_headers()[2][1]
        c.request("GET", "/echo/next", host=p.host_header)
        following = c.read_response()
        assert following.status == 200 and following.json()["path"] == "/echo/next", following


def test_a_refused_handshake_with_a_body_and_then_another_request(latchkey, make_ws_server):
    server = make_ws_server(check=lambda seen: (401, "x" * 100_000, {}) if "refuse" in seen.path else None)
    p = latchkey.serve(config(server.url))
    with p.conn() as c:
        c.request("GET", "/refuse", headers=handshake_headers(), host=p.host_header)
        answer = c.read_response()
        assert answer.status == 401 and answer.body == b"x" * 100_000 and answer.complete, answer
        # The upstream closes its connection after a refusal; the client's stays open.
        c.request("GET", "/accept", headers=handshake_headers(), host=p.host_header)
        assert c.read_head().status == 101


def test_a_client_that_leaves_while_the_upstream_holds_the_handshake(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, logging={"format": "json"}))
    c = p.conn()
    c.request("GET", "/hold", headers=handshake_headers(), host=p.host_header)
    held = upstream.wait_for_request("hold")
    assert held is not None
    c.close()
    assert upstream.wait_until(lambda: upstream.connection(held.conn_id).closed_at is not None, timeout=10), \
        "the upstream connection of a client that left stays open"
    assert wait_until(lambda: [line for line in json_lines(p.log()) if line.get("path") == "/hold"]), p.log_tail()


def test_a_client_that_leaves_before_a_late_101(latchkey, make_ws_server):
    release = threading.Event()

    def slow(seen):
        release.wait(10)
        return None
    server = make_ws_server(check=slow)
    p = latchkey.serve(config(server.url, logging={"format": "json"}))
    c = p.conn()
    c.request("GET", "/leaving", headers=handshake_headers(), host=p.host_header)
    assert wait_until(lambda: server.handshakes)
    c.close()
    assert wait_until(lambda: [line for line in json_lines(p.log()) if line.get("path") == "/leaving"]), p.log_tail()
    release.set()
    # The 101 found nobody: no stream was opened, and Latchkey goes on switching.
    with p.conn() as again:
        again.request("GET", "/after", headers=handshake_headers(), host=p.host_header)
        assert again.read_head().status == 101
        again.send(frame(TEXT, b"after one left"))
        assert read_frame(again.sock, again.buf) == (TEXT, True, b"after one left")
        assert scrape(p)[1]['latchkey_upgraded_connections{route="api"}'] == 1
