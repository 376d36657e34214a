"""What Latchkey records of an upgraded stream, through the real binary: one JSON access-log
line when the stream ends (GET, status 101, the bytes each way as the frames on the wire add
up, the duration, outcome `upgrade_closed`, or `upgrade_failed` for a client that resets),
and the metrics `latchkey_upgraded_connections{route}` (open streams) and
`latchkey_upgraded_bytes_total{route,direction}` (counted when a stream ends)."""

from __future__ import annotations

import os
import time

from support import TOKEN, config, json_lines, wait_until
from test_metrics import scrape
from websocket_support import BINARY, TEXT, client, frame, frame_size, handshake_headers, make_ws_server, read_frame, ws_server  # noqa: F401


def open_gauge(route: str = "api") -> str:
    return f'latchkey_upgraded_connections{{route="{route}"}}'


def bytes_total(direction: str, route: str = "api") -> str:
    return f'latchkey_upgraded_bytes_total{{route="{route}",direction="{direction}"}}'


def upgrade_lines(p, path: str) -> list[dict]:
    return [line for line in json_lines(p.log()) if line.get("path") == path and line.get("status") == 101]


def test_the_access_log_line_and_metrics_of_a_stream(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url, logging={"format": "json"}))
    messages = ["x" * 10, os.urandom(200), os.urandom(70_000), "é" * 40]
    payloads = [len(m.encode() if isinstance(m, str) else m) for m in messages]
    with client(p, "/accounted") as ws:
        opened = time.monotonic()
        for message in messages:
            ws.send(message)
            assert ws.recv(timeout=10) == message
        _, samples = scrape(p)
        assert samples[open_gauge()] == 1
        with client(p, "/second") as other:
            other.send("two at once")
            assert other.recv(timeout=10) == "two at once"
            assert scrape(p)[1][open_gauge()] == 2
        assert wait_until(lambda: scrape(p)[1][open_gauge()] == 1)
        assert upgrade_lines(p, "/accounted") == [], "logged before the stream ended"
        time.sleep(0.3)
        ws.close()
        held = time.monotonic() - opened
    assert wait_until(lambda: upgrade_lines(p, "/accounted")), p.log_tail()
    [line] = upgrade_lines(p, "/accounted")
    # Client frames are masked (4 more bytes each); the close frames carry the code 1000,
    # the client's and the server's answer.
    to_upstream = sum(frame_size(n, masked=True) for n in payloads) + frame_size(2, masked=True)
    to_client = sum(frame_size(n, masked=False) for n in payloads) + frame_size(2, masked=False)
    assert line["method"] == "GET" and line["route"] == "api"
    assert line["bytes_in"] == to_upstream, line
    assert line["bytes_out"] == to_client, line
    assert line["outcome"] == "upgrade_closed", line
    assert held - 0.2 <= line["duration_ms"] / 1000 <= held + 5, (held, line)
    assert TOKEN not in p.log()

    # The second stream's counts add to the totals.
    other_in = frame_size(len("two at once"), masked=True) + frame_size(2, masked=True)
    other_out = frame_size(len("two at once"), masked=False) + frame_size(2, masked=False)
    [other] = upgrade_lines(p, "/second")
    assert (other["bytes_in"], other["bytes_out"]) == (other_in, other_out)

    def settled():
        samples = scrape(p)[1]
        return samples if samples[open_gauge()] == 0 else None
    samples = wait_until(settled)
    assert samples, scrape(p)[0]
    assert samples[bytes_total("to_upstream")] == to_upstream + other_in
    assert samples[bytes_total("to_client")] == to_client + other_out


def test_a_client_that_resets_ends_the_stream_as_failed(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url, logging={"format": "json"}))
    c = p.conn()
    c.request("GET", "/reset", headers=handshake_headers(), host=p.host_header)
    head = c.read_head()
    assert head.status == 101, head
    c.send(frame(TEXT, b"before the reset"))
    assert read_frame(c.sock, c.buf) == (TEXT, True, b"before the reset")
    c.send(frame(BINARY, os.urandom(100_000))[:5000])  # a frame cut short, then RST
    assert wait_until(lambda: scrape(p)[1][open_gauge()] == 1)
    c.reset()
    assert wait_until(lambda: upgrade_lines(p, "/reset")), p.log_tail()
    [line] = upgrade_lines(p, "/reset")
    assert line["outcome"] == "upgrade_failed", line
    assert line["bytes_in"] == frame_size(16, masked=True) + 5000, line
    assert line["bytes_out"] == frame_size(16, masked=False), line
    assert wait_until(lambda: scrape(p)[1][open_gauge()] == 0)
    # The upstream's connection is closed too: its session ends without a close frame.
    session = ws_server.wait_session()
    assert session.wait_ended(), "the upstream connection stayed open"
    assert session.close_code is None
