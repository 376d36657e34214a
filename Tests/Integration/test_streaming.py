"""Streaming both ways: large bodies, slow chunked and SSE responses arriving as they are
produced, client disconnects aborting the upstream transfer, upstream resets reaching the
client as a response cut short (never a fake complete one)."""

import hashlib
import socket
import time

import pytest

from httpraw import ConnectionClosed
from stub_upstream import pattern_bytes, pattern_sha256

MIB = 1 << 20
BIG = 50 * MIB


@pytest.mark.parametrize("endpoint", ["big", "big-chunked"])
def test_large_download(proxy, upstream, endpoint):
    r = proxy.get(f"/{endpoint}?bytes={BIG}", timeout=180)
    assert r.status == 200
    assert r.complete, f"got {len(r.body)} of {BIG} bytes"
    assert len(r.body) == BIG
    assert hashlib.sha256(r.body).hexdigest() == pattern_sha256(BIG)


def _upload(proxy, n: int, chunked: bool, timeout: float = 180):
    with proxy.conn(timeout=timeout) as c:
        framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {n}"
        c.send(f"PUT /echo/upload HTTP/1.1\r\nHost: {proxy.host_header}\r\n{framing}\r\n"
               f"Content-Type: application/octet-stream\r\n\r\n".encode())
        for block in pattern_bytes(n, 256 * 1024):
            c.send(b"%x\r\n%s\r\n" % (len(block), block) if chunked else block)
        if chunked:
            c.send(b"0\r\n\r\n")
        return c.read_response(timeout=timeout)


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_large_upload(proxy, upstream, chunked):
    r = _upload(proxy, BIG, chunked)
    assert r.status == 200, r
    seen = r.json()
    assert seen["body_length"] == BIG
    assert seen["body_sha256"] == pattern_sha256(BIG)


def test_upload_streams_to_upstream_before_it_completes(proxy, upstream):
    """The proxy forwards the request while the client is still sending its body."""
    n = 4 * MIB
    with proxy.conn(timeout=60) as c:
        c.send(f"POST /echo/streaming-upload HTTP/1.1\r\nHost: {proxy.host_header}\r\n"
               f"Content-Length: {n}\r\n\r\n".encode())
        blocks = list(pattern_bytes(n, MIB))
        c.send(blocks[0])
        rec = upstream.wait_for_request(path_contains="streaming-upload", timeout=10)
        assert rec is not None, "upstream saw nothing while the client was still sending the body"
        for b in blocks[1:]:
            c.send(b)
        r = c.read_response()
    assert r.status == 200, r
    assert r.json()["body_sha256"] == pattern_sha256(n)


def _assert_incremental(r, what: str):
    assert r.status == 200, r
    assert r.complete
    times = [t for t, _ in r.arrivals]
    assert len(times) >= 3, f"{what}: the body arrived in {len(times)} piece(s); it was buffered"
    spread = times[-1] - times[0]
    # The upstream spends 4 x 0.3 s between its first and last chunk.
    assert spread >= 0.6, f"{what}: all chunks arrived within {spread:.2f}s: buffered, not streamed"
    first_after_head = times[0] - r.head_at
    assert first_after_head < 1.0, f"{what}: first chunk {first_after_head:.2f}s after the head"


def test_slow_chunked_stream_arrives_incrementally(proxy, upstream):
    t0 = time.monotonic()
    r = proxy.get("/stream")
    _assert_incremental(r, "stream")
    assert r.body == b"".join(f"chunk {i}\n".encode() for i in range(5))
    assert r.arrivals[0][0] - t0 < 1.1, "the first chunk should arrive before the upstream finishes (1.2 s)"


def test_server_sent_events(proxy, upstream):
    r = proxy.get("/sse", headers=[("Accept", "text/event-stream")])
    _assert_incremental(r, "sse")
    assert (r.header("Content-Type") or "").startswith("text/event-stream")
    assert r.body.count(b"data: tick") == 5


def test_client_disconnect_while_waiting_aborts_upstream(proxy, upstream):
    c = proxy.conn()
    c.request("GET", "/hold", host=proxy.host_header)
    rec = upstream.wait_for_request(endpoint="hold", timeout=10)
    assert rec is not None, "request never reached the upstream"
    c.close()
    assert upstream.wait_until(lambda: upstream.connection(rec.conn_id).closed_at is not None, timeout=10), \
        "the upstream connection stayed open after the client went away"
    # The proxy still works.
    assert proxy.get("/echo").status == 200


def test_client_disconnect_mid_download_aborts_upstream(proxy, upstream):
    c = proxy.conn()
    c.request("GET", "/drip?interval=0.05", host=proxy.host_header)
    head = c.read_head()
    assert head.status == 200
    c.reset()
    rec = upstream.wait_for_request(endpoint="drip", timeout=5)
    assert upstream.wait_until(lambda: rec.aborted_at is not None, timeout=10), \
        "the upstream kept streaming after the client disconnected"


def test_client_disconnect_mid_upload_aborts_upstream(proxy, upstream):
    c = proxy.conn()
    c.send(f"POST /echo/partial HTTP/1.1\r\nHost: {proxy.host_header}\r\nContent-Length: {100 * MIB}\r\n\r\n".encode())
    c.send(b"x" * MIB)
    rec = upstream.wait_for_request(path_contains="/echo/partial", timeout=10)
    assert rec is not None, "the upload never reached the upstream"
    c.close()
    assert upstream.wait_until(lambda: upstream.connection(rec.conn_id).closed_at is not None, timeout=10), \
        "the upstream connection stayed open after the uploading client went away"
    assert not rec.body_complete


def test_upstream_reset_mid_body_content_length(proxy, upstream):
    with proxy.conn() as c:
        c.request("GET", "/reset?after=5000&total=100000", host=proxy.host_header)
        try:
            r = c.read_response(timeout=20)
        except ConnectionClosed:
            return  # closing without a response also tells the client something went wrong
        if r.status == 200:
            assert not r.complete, "upstream reset turned into a complete-looking response"
            assert len(r.body) < 100000
            assert c.closed_by_peer(5)
        else:
            assert r.status == 502, r
    assert proxy.get("/echo").status == 200, "the proxy must survive an upstream reset"


def test_upstream_reset_mid_body_chunked(proxy, upstream):
    with proxy.conn() as c:
        c.request("GET", "/reset?after=5000&chunked=1", host=proxy.host_header)
        try:
            r = c.read_response(timeout=20)
        except ConnectionClosed:
            return
        if r.status == 200:
            assert not r.complete, "chunked response ended with a 0-chunk although the upstream was reset"
            assert c.closed_by_peer(5)
        else:
            assert r.status == 502, r
    assert proxy.get("/echo").status == 200


def test_upstream_reset_after_head_client_sees_head(proxy, upstream):
    """With the head and some body forwarded, the status is already 200: the cut must show."""
    with proxy.conn() as c:
        c.request("GET", "/reset?after=5000&total=100000&pause=1.0", host=proxy.host_header)
        r = c.read_response(timeout=20)
        assert r.status == 200, "head and first bytes should stream before the reset"
        assert not r.complete
        assert len(r.body) == 5000 or len(r.body) < 100000


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_download_backpressure_keeps_memory_flat(proxy, upstream):
    """A client that stops reading must not make the proxy buffer the upstream's body."""
    n = 200 * MIB
    before = _rss_kib(proxy.proc.pid)
    with proxy.conn(timeout=120) as c:
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        c.request("GET", f"/big?bytes={n}", host=proxy.host_header)
        head = c.read_head()
        assert head.status == 200
        peak = before
        deadline = time.monotonic() + 3  # the upstream could push all 200 MiB in this time
        while time.monotonic() < deadline:
            peak = max(peak, _rss_kib(proxy.proc.pid))
            time.sleep(0.1)
        r = c.read_body(head, timeout=120)
    assert r.complete and len(r.body) == n
    assert hashlib.sha256(r.body).hexdigest() == pattern_sha256(n)
    growth_mib = (peak - before) / 1024
    assert growth_mib < 64, f"RSS grew by {growth_mib:.0f} MiB while the client was not reading"
