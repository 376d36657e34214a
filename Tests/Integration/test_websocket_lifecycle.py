"""How an upgraded stream ends besides its peers closing it, through the real binary:
`limits.upgrade_idle_timeout` closes a stream silent both ways (outcome `upgrade_idle`),
and without it a silent stream outlives the HTTP timeouts; SIGTERM sends each open
WebSocket a close frame with code 1001 both ways at the next frame boundary (a frame under
way in either direction is finished first), within `server.grace_period`, and the process
exits 0."""

from __future__ import annotations

import os
import select
import signal
import struct
import threading
import time

import pytest
from websockets.exceptions import ConnectionClosed

from support import config, json_lines, wait_until
from websocket_support import (BINARY, CLOSE, TEXT, RawUpgradeServer, client, close_payload, frame, handshake_headers, make_ws_server,  # noqa: F401
                               parse_frame, read_frame, ws_server)


def upgrade_lines(p, path: str) -> list[dict]:
    return [line for line in json_lines(p.log()) if line.get("path") == path and line.get("status") == 101]


def raw_websocket(p, path: str):
    """A raw client connection that has made the handshake."""
    c = p.conn()
    c.request("GET", path, headers=handshake_headers(), host=p.host_header)
    head = c.read_head()
    assert head.status == 101, head
    return c


# ----- idle timeout ---------------------------------------------------------------------------

def test_a_silent_stream_is_closed_after_upgrade_idle_timeout(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url, limits={"upgrade_idle_timeout": "1s"}, logging={"format": "json"}))
    with client(p, "/silent") as ws:
        ws.send("one message")
        assert ws.recv(timeout=10) == "one message"
        silent_from = time.monotonic()
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=10)
        silent_for = time.monotonic() - silent_from
    assert 0.9 <= silent_for <= 4, silent_for
    assert wait_until(lambda: upgrade_lines(p, "/silent")), p.log_tail()
    assert upgrade_lines(p, "/silent")[0]["outcome"] == "upgrade_idle"
    assert ws_server.wait_session().wait_ended(), "the upstream connection stayed open"


def test_traffic_keeps_a_stream_past_upgrade_idle_timeout(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url, limits={"upgrade_idle_timeout": "1s"}))
    with client(p, "/chatty") as ws:
        started = time.monotonic()
        n = 0
        while time.monotonic() - started < 3.5:
            ws.send(f"message {n}")
            assert ws.recv(timeout=10) == f"message {n}"
            n += 1
            time.sleep(0.4)
        # Pings and pongs are traffic too.
        for _ in range(5):
            assert ws.ping().wait(10)
            time.sleep(0.4)
        ws.send("still open")
        assert ws.recv(timeout=10) == "still open"


def test_traffic_one_way_is_not_silence(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url, limits={"upgrade_idle_timeout": "1s"}))
    with client(p, "/one-way") as ws:
        # Only the upstream speaks, for 3.5 s.
        ws.send("!cmd tick 7 0.5")
        for n in range(7):
            assert ws.recv(timeout=10) == f"tick {n}"
        # Only the client speaks, for 3 s: the server reads nothing meanwhile.
        ws.send("!cmd sleep 3")
        for n in range(6):
            threading.Event().wait(0.5)
            ws.send(f"into the silence {n}")
        assert ws.recv(timeout=10) == "slept"
        for n in range(6):
            assert ws.recv(timeout=10) == f"into the silence {n}"


def test_without_upgrade_idle_timeout_a_silent_stream_stays_open(latchkey, ws_server):
    # The HTTP timeouts (a kept-alive connection's idle time, the upstream's idle time
    # while a body comes) do not apply to a switched stream.
    p = latchkey.serve(config(ws_server.url, route={"upstream": {"url": ws_server.url, "idle_timeout": "1s"}},
                              limits={"idle_timeout": "1s", "head_timeout": "1s", "body_timeout": "1s"}))
    with client(p, "/patient") as ws:
        ws.send("before")
        assert ws.recv(timeout=10) == "before"
        with pytest.raises(TimeoutError):
            ws.recv(timeout=3)
        ws.send("after three silent seconds")
        assert ws.recv(timeout=10) == "after three silent seconds"
    assert ws_server.wait_session().wait_ended()
    assert ws_server.sessions[0].close_code == 1000


# ----- graceful shutdown ----------------------------------------------------------------------

def test_sigterm_closes_an_open_websocket_with_1001_both_ways(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url, logging={"format": "json"}))
    with client(p, "/held") as ws:
        ws.send("hello")
        assert ws.recv(timeout=10) == "hello"
        p.send_signal(signal.SIGTERM)
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=15)
    assert closed.value.rcvd is not None, "the client got no close frame"
    assert closed.value.rcvd.code == 1001
    session = ws_server.wait_session()
    assert session.wait_ended()
    assert session.close_code == 1001
    assert p.wait_exit(15) == 0, p.log_tail()
    assert upgrade_lines(p, "/held")[0]["outcome"] == "upgrade_shutdown"


def test_sigterm_finishes_a_frame_under_way_to_the_upstream_first(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url, server={"grace_period": "10s"}))
    c = raw_websocket(p, "/half-sent")
    c.send(frame(TEXT, b"a whole message"))
    assert read_frame(c.sock, c.buf) == (TEXT, True, b"a whole message")
    payload = os.urandom(300_000)
    message = frame(BINARY, payload)
    c.send(message[:150_000])
    session = ws_server.wait_session()
    p.send_signal(signal.SIGTERM)
    # Towards the client the stream is between frames: the close frame comes now.
    opcode, fin, body = read_frame(c.sock, c.buf)
    assert (opcode, struct.unpack("!H", body[:2])[0]) == (CLOSE, 1001), body
    # Towards the upstream it waits for the end of the frame the client is sending.
    time.sleep(0.5)
    assert not session.ended.is_set() and session.close_code is None
    c.send(message[150_000:])
    assert session.wait_ended(), "the upstream got no close"
    assert session.messages == ["a whole message", payload]
    assert session.close_code == 1001
    assert c.closed_by_peer(10)
    assert p.wait_exit(15) == 0, p.log_tail()


def test_sigterm_finishes_a_frame_under_way_to_the_client_first(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url, server={"grace_period": "15s"}))
    c = raw_websocket(p, "/half-received")
    payload = os.urandom(8 * 1024 * 1024)
    c.send(frame(BINARY, payload))
    # The echo has begun to come (a client that reads nothing holds the rest back).
    ready, _, _ = select.select([c.sock], [], [], 15)
    assert ready, "no echo"
    p.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    opcode, fin, body = read_frame(c.sock, c.buf, timeout=30)
    assert (opcode, fin, len(body)) == (BINARY, True, len(payload))
    assert body == payload
    opcode, _, body = read_frame(c.sock, c.buf)
    assert (opcode, struct.unpack("!H", body[:2])[0]) == (CLOSE, 1001), body
    assert c.closed_by_peer(10)
    session = ws_server.wait_session()
    assert session.wait_ended() and session.close_code == 1001
    assert p.wait_exit(15) == 0, p.log_tail()


def test_a_frame_never_finished_is_cut_at_the_grace_period(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url, server={"grace_period": "1s"}))
    c = raw_websocket(p, "/never-finished")
    c.send(frame(BINARY, os.urandom(10_000))[:100])
    session = ws_server.wait_session()
    stopping = time.monotonic()
    p.send_signal(signal.SIGTERM)
    assert read_frame(c.sock, c.buf)[0] == CLOSE
    assert c.closed_by_peer(10), "the client connection outlived the grace period"
    assert p.wait_exit(15) == 0, p.log_tail()
    assert time.monotonic() - stopping < 6
    # The upstream got no close frame (it was owed after a frame that never ended), but
    # its connection was closed.
    assert session.wait_ended() and session.close_code is None
    c.close()


def test_another_protocol_is_closed_when_the_grace_period_ends(latchkey):
    raw = RawUpgradeServer("foo")
    try:
        p = latchkey.serve(config(raw.url, route={"upgrades": ["foo"]}, server={"grace_period": "1s"},
                                  logging={"format": "json"}))
        c = p.conn()
        c.request("GET", "/foo-stream", headers=[("Connection", "Upgrade"), ("Upgrade", "foo")], host=p.host_header)
        assert c.read_head().status == 101
        c.send(b"raw bytes")
        while len(c.buf) < len(b"raw bytes"):
            assert c._fill(time.monotonic() + 5), "the relay ended"
        stopping = time.monotonic()
        p.send_signal(signal.SIGTERM)
        # No close frame to send in a protocol Latchkey does not know: the stream goes on
        # until the grace period ends, then is closed.
        c.send(b" still relayed during the grace period")
        assert c.closed_by_peer(10)
        closed_after = time.monotonic() - stopping
        assert bytes(c.buf).startswith(b"raw bytes still relayed during the grace period"), bytes(c.buf)
        assert 0.8 <= closed_after < 6, closed_after
        assert p.wait_exit(15) == 0, p.log_tail()
        [line] = upgrade_lines(p, "/foo-stream")
        assert line["outcome"] == "upgrade_shutdown", line
    finally:
        raw.close()


# A masked binary frame of 70,000 bytes: 2 header bytes, 8 of extended length, 4 of mask.
@pytest.mark.parametrize("split", [1, 2, 5, 10, 12, 14, 14 + 35_000])
def test_sigterm_waits_for_a_frame_cut_anywhere_in_its_header(latchkey, split):
    """Both directions under way at once: the raw upstream echoes the client's bytes, so the
    frame the client has half sent is half sent to the client as well."""
    raw = RawUpgradeServer("websocket")
    try:
        p = latchkey.serve(config(raw.url, server={"grace_period": "10s"}))
        c = raw_websocket(p, "/split")
        payload = os.urandom(70_000)
        message = frame(BINARY, payload)
        c.send(message[:split])
        assert wait_until(lambda: raw.received and len(raw.received[0]) == split)
        p.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        # Nothing may be written inside the frame: the upstream has the client's bytes only.
        assert bytes(raw.received[0]) == message[:split]
        c.send(message[split:])
        opcode, fin, body = read_frame(c.sock, c.buf)
        assert (opcode, fin, body) == (BINARY, True, payload)
        opcode, _, body = read_frame(c.sock, c.buf)
        assert (opcode, body) == (CLOSE, struct.pack("!H", 1001)), (opcode, body)
        # The upstream got the whole frame, then a masked close frame with 1001.
        assert wait_until(lambda: len(raw.received[0]) > len(message))
        upstream_view = bytearray(raw.received[0][len(message):])
        assert bytes(raw.received[0][:len(message)]) == message
        assert parse_frame(upstream_view) == (CLOSE, True, struct.pack("!H", 1001))
        assert c.closed_by_peer(15)
        assert p.wait_exit(15) == 0, p.log_tail()
    finally:
        raw.close()


def test_sigterm_after_the_upstreams_close_frame_sends_no_second_one_to_the_client(latchkey, ws_server):
    """RFC 6455 §5.5.1: after a Close frame, nothing more. The upstream has closed (4002) and
    the client has not answered yet when Latchkey shuts down: the client has had its close
    frame, and must not get another."""
    p = latchkey.serve(config(ws_server.url, server={"grace_period": "3s"}))
    c = raw_websocket(p, "/upstream-closed-first")
    c.send(frame(TEXT, b"!cmd close 4002 bye"))
    assert read_frame(c.sock, c.buf) == (CLOSE, True, close_payload(4002, "bye"))
    p.send_signal(signal.SIGTERM)
    following = read_frame(c.sock, c.buf, timeout=8)
    assert following is None, f"a frame after the upstream's close frame: {following}"
    assert p.wait_exit(15) == 0, p.log_tail()


def test_sigterm_after_close_frames_both_ways_sends_none(latchkey):
    raw = RawUpgradeServer("websocket")
    try:
        p = latchkey.serve(config(raw.url, server={"grace_period": "2s"}))
        c = raw_websocket(p, "/closed-both-ways")
        close = frame(CLOSE, close_payload(4001, "done"))
        c.send(close)
        # The raw upstream echoes it: a close frame has gone each way.
        assert read_frame(c.sock, c.buf)[0] == CLOSE
        p.send_signal(signal.SIGTERM)
        following = read_frame(c.sock, c.buf, timeout=8)
        assert following is None, f"a frame after the close frames: {following}"
        assert bytes(raw.received[0]) == close, "the upstream got more after the client's close frame"
        assert p.wait_exit(15) == 0, p.log_tail()
    finally:
        raw.close()


def test_a_handshake_answered_after_sigterm_is_closed_at_once(latchkey, make_ws_server):
    """The upstream's 101 comes after the signal: the stream is opened during the shutdown
    and gets its close frames (1001) at once, rather than sitting silent until the grace
    period ends."""
    server = make_ws_server(check=lambda seen: time.sleep(1.5))
    p = latchkey.serve(config(server.url, server={"grace_period": "10s"}, logging={"format": "json"}))
    c = p.conn()
    c.request("GET", "/late-101", headers=handshake_headers(), host=p.host_header)
    assert wait_until(lambda: server.handshakes)
    stopping = time.monotonic()
    p.send_signal(signal.SIGTERM)
    head = c.read_head(timeout=15)
    if head.status == 101:
        got = read_frame(c.sock, c.buf, timeout=15)
        assert got is not None and got[0] == CLOSE and got[2][:2] == struct.pack("!H", 1001), \
            f"{got} after {time.monotonic() - stopping:.1f} s"
        session = server.wait_session()
        assert session.wait_ended() and session.close_code == 1001
    else:
        assert head.status == 503, head
    assert p.wait_exit(15) == 0, p.log_tail()
    assert time.monotonic() - stopping < 6, "the shutdown waited for the grace period"
