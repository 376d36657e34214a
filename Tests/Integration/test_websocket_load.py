"""Upgraded streams under load, through the real binary: a hundred WebSockets at once, each
with its own round trips, all logged and counted; and backpressure each way, a reader that
stops holding back a writer that floods it, with Latchkey's memory staying flat while
hundreds of MiB wait (README: a stream holds at most a few hundred KiB)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from websockets.asyncio.client import connect as async_connect

from support import Background, config, json_lines, wait_until
from test_metrics import scrape
from websocket_support import MAX_SIZE, client, frame_size, make_ws_server, ws_server, ws_url  # noqa: F401 (fixtures)

MiB = 1024 * 1024


def rss(p) -> int:
    """Latchkey's resident memory in bytes."""
    for line in Path(f"/proc/{p.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_a_hundred_websockets_at_once(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url, logging={"format": "json"}))
    all_open = threading.Barrier(100, timeout=60)

    def one(n: int) -> tuple[int, int]:
        sent_in = sent_out = 0
        with client(p, f"/many/{n}") as ws:
            all_open.wait()
            for k in range(50):
                message = f"stream {n} message {k} " + "x" * (n * 10)
                ws.send(message)
                assert ws.recv(timeout=30) == message
                sent_in += frame_size(len(message), masked=True)
                sent_out += frame_size(len(message), masked=False)
        return sent_in + frame_size(2, masked=True), sent_out + frame_size(2, masked=False)

    gauge = []
    watcher = Background(lambda: wait_until(lambda: gauge.append(scrape(p)[1]['latchkey_upgraded_connections{route="api"}'])
                                            or gauge[-1] == 100, timeout=60))
    with ThreadPoolExecutor(100) as pool:
        totals = list(pool.map(one, range(100)))
    watcher.result()
    assert max(gauge) == 100, gauge[-5:]
    assert wait_until(lambda: len([line for line in json_lines(p.log()) if line.get("status") == 101]) == 100), p.log_tail()
    lines = {line["path"]: line for line in json_lines(p.log()) if line.get("status") == 101}
    for n, (to_upstream, to_client) in enumerate(totals):
        line = lines[f"/many/{n}"]
        assert (line["bytes_in"], line["bytes_out"], line["outcome"]) == (to_upstream, to_client, "upgrade_closed"), line
    samples = wait_until(lambda: (s := scrape(p)[1])['latchkey_upgraded_connections{route="api"}'] == 0 and s)
    assert samples['latchkey_upgraded_bytes_total{route="api",direction="to_upstream"}'] == sum(t[0] for t in totals)
    assert samples['latchkey_upgraded_bytes_total{route="api",direction="to_client"}'] == sum(t[1] for t in totals)
    assert len(ws_server.sessions) == 100


def test_a_client_that_stops_reading_holds_back_the_upstream(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url))
    with client(p, "/slow-reader", max_queue=1) as ws:
        ws.send("warm up")
        assert ws.recv(timeout=10) == "warm up"
        before = rss(p)
        ws.send("!cmd flood 300 1048576")  # 300 MiB towards a client that reads nothing yet
        peak = before
        for _ in range(30):
            threading.Event().wait(0.1)
            peak = max(peak, rss(p))
        assert peak - before < 48 * MiB, f"Latchkey grew by {(peak - before) / MiB:.0f} MiB while the client read nothing"
        for n in range(300):
            assert len(ws.recv(timeout=30)) == MiB, f"message {n}"
        assert ws.recv(timeout=30) == "flood done"
        assert rss(p) - before < 48 * MiB


def test_an_upstream_that_stops_reading_holds_back_the_client(latchkey, ws_server):
    """With the asyncio client, which reads while it writes (the sync one holds a lock
    while a send blocks, so it cannot read the echoes of what it is still sending)."""
    p = latchkey.serve(config(ws_server.url))
    block = bytes(MiB)

    async def run() -> tuple[int, int, int]:
        async with async_connect(ws_url(p, "/slow-upstream"), max_size=MAX_SIZE, compression=None,
                                 ping_interval=None) as ws:
            await ws.send("warm up")
            assert await ws.recv() == "warm up"
            before = rss(p)
            await ws.send("!cmd sleep 3")
            sent = []

            async def flood():
                for n in range(200):  # 200 MiB towards an upstream that reads nothing for 3 s
                    await ws.send(block)
                    sent.append(n)
            writer = asyncio.create_task(flood())
            peak = before
            for _ in range(25):
                await asyncio.sleep(0.1)
                peak = max(peak, rss(p))
            held_at = len(sent)
            assert await asyncio.wait_for(ws.recv(), 30) == "slept"
            for n in range(200):
                assert await asyncio.wait_for(ws.recv(), 30) == block, f"echo {n}"
            await asyncio.wait_for(writer, 60)
            return before, peak, held_at

    before, peak, held_at = asyncio.run(run())
    assert held_at < 200, "the client's writes were never held back"
    assert peak - before < 48 * MiB, f"Latchkey grew by {(peak - before) / MiB:.0f} MiB while the upstream read nothing"
    session = ws_server.wait_session()
    assert len(session.messages) == 202
