"""A raw-socket HTTP/1.1 upstream for the integration tests, with precise control over
what goes on the wire.

One thread accepts, one thread per connection serves requests with keep-alive. Every
accepted connection and every request is recorded, so that tests can assert what the
proxy sent (exact header order and duplicates), how many TCP connections it opened
(keep-alive reuse) and when it closed them (aborted transfers).

The endpoint is the first path segment that names one (so `/base/redirect` is the
`redirect` endpoint under the base path `/base`); anything else is `echo`.

  echo                 JSON: upstream name, method, target, path, query, headers (ordered
                       [name, value] list), body_length, body_sha256, connection id
  stream?n=&interval=  slow chunked text (5 chunks, 0.3 s apart by default)
  sse?n=&interval=     text/event-stream, chunked, one event per interval
  drip?interval=&max=  chunked, a chunk every interval until the peer goes away
  big?bytes=N          N bytes of `pattern_bytes` with Content-Length
  big-chunked?bytes=N  the same, chunked
  reset?after=N[&total=T][&chunked=1][&pause=S]
                       head (Content-Length T, default 10*N, or chunked), N bytes, a pause,
                       then RST (SO_LINGER 0)
  slow?delay=S         waits S seconds before the head, then echoes
  status/NNN[?content_length=N]
                       that status; 204 and 304 with no body (and the Content-Length given)
  redirect[?to=URL][&secure=1][&pad=N]
                       302 with Location (absolute, to this upstream under its base path
                       unless `to` is given), Content-Location, and two Set-Cookie headers
                       (Domain=127.0.0.1, Path=<base>/)
  hop                  response carrying hop-by-hop headers (Connection-named, Keep-Alive)
  hold                 reads the request and never answers; records when the peer closes
  close                answers and closes the connection (Connection: close)
  eof-body?bytes=N     HTTP/1.0-style: no Content-Length, no chunked; the body ends when the
                       connection closes
  close-after          answers as if keep-alive (no Connection: close), then closes the idle
                       connection 0.1 s later: a stale pooled connection for the next request
  trailers             chunked response with a trailer section
"""

from __future__ import annotations

import hashlib
import json
import socket
import struct
import threading
import time
import urllib.parse
from dataclasses import dataclass, field

from httpraw import HeaderLookup

ENDPOINTS = {
    "echo", "stream", "sse", "drip", "big", "big-chunked", "reset", "slow", "status",
    "redirect", "hop", "hold", "close", "eof-body", "close-after", "trailers",
}

_PATTERN_BLOCK = hashlib.shake_256(b"latchkey integration pattern").digest(1 << 20)


def pattern_bytes(n: int, block_size: int = 65536):
    """Yields n deterministic, incompressible bytes (a 1 MiB pattern repeated) in blocks of
    at most block_size; the byte stream does not depend on block_size."""
    size = len(_PATTERN_BLOCK)
    sent = 0
    while sent < n:
        off = sent % size
        take = min(block_size, n - sent, size - off)
        yield _PATTERN_BLOCK[off:off + take]
        sent += take


def pattern_sha256(n: int) -> str:
    h = hashlib.sha256()
    for block in pattern_bytes(n):
        h.update(block)
    return h.hexdigest()


@dataclass
class ConnRecord:
    id: int
    peer: tuple
    opened_at: float
    closed_at: float | None = None
    close_reason: str = ""
    requests: int = 0


@dataclass
class RequestRecord(HeaderLookup):
    conn_id: int
    method: str
    target: str
    version: str
    headers: list
    endpoint: str = "echo"
    base: str = ""
    body_length: int = 0
    body_sha256: str = ""
    body_complete: bool = False
    received_at: float = 0.0
    # Set when the connection was closed while this request was being answered (or held).
    aborted_at: float | None = None

    @property
    def path(self) -> str:
        return urllib.parse.urlsplit(self.target).path

    @property
    def query(self) -> str:
        return urllib.parse.urlsplit(self.target).query


class _PeerGone(Exception):
    pass


class _Reader:
    """Buffered reads from a socket; raises _PeerGone on EOF/reset."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = bytearray()

    def _fill(self) -> None:
        try:
            data = self.sock.recv(262144)
        except (ConnectionError, OSError) as e:
            raise _PeerGone(str(e))
        if not data:
            raise _PeerGone("eof")
        self.buf += data

    def readline(self, limit: int = 1 << 20) -> bytes:
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line = bytes(self.buf[: i + 1])
                del self.buf[: i + 1]
                return line
            if len(self.buf) > limit:
                raise _PeerGone("line too long")
            self._fill()

    def read_into(self, n: int, sink) -> None:
        while n > 0:
            if not self.buf:
                self._fill()
            take = min(n, len(self.buf))
            sink(bytes(self.buf[:take]))
            del self.buf[:take]
            n -= take


class StubUpstream:
    def __init__(self, name: str = "upstream", host: str = "127.0.0.1"):
        self.name = name
        self.host = host
        self.cond = threading.Condition()
        self.connections: list[ConnRecord] = []
        self.requests: list[RequestRecord] = []
        self._socks: dict[int, socket.socket] = {}
        self._closing = False
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((host, 0))
        self.listener.listen(256)
        self.port = self.listener.getsockname()[1]
        self._thread = threading.Thread(target=self._accept_loop, name=f"stub-{name}", daemon=True)
        self._thread.start()

    # ----- public helpers -------------------------------------------------------------

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def accepted(self) -> int:
        with self.cond:
            return len(self.connections)

    def wait_until(self, predicate, timeout: float = 10.0) -> bool:
        """Waits until predicate() (called under the lock) is true."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(min(left, 0.1))
            return True

    def wait_for_request(self, endpoint: str | None = None, path_contains: str | None = None,
                         timeout: float = 10.0) -> RequestRecord | None:
        found: list = []

        def pred():
            for r in self.requests:
                if endpoint is not None and r.endpoint != endpoint:
                    continue
                if path_contains is not None and path_contains not in r.target:
                    continue
                found.append(r)
                return True
            return False

        return found[0] if self.wait_until(pred, timeout) else None

    def find_requests(self, path_contains: str) -> list[RequestRecord]:
        with self.cond:
            return [r for r in self.requests if path_contains in r.target]

    def connection(self, conn_id: int) -> ConnRecord:
        with self.cond:
            return next(c for c in self.connections if c.id == conn_id)

    def close(self) -> None:
        self._closing = True
        try:
            self.listener.close()
        except OSError:
            pass
        with self.cond:
            socks = list(self._socks.values())
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass

    # ----- server ---------------------------------------------------------------------

    def _accept_loop(self) -> None:
        while not self._closing:
            try:
                sock, peer = self.listener.accept()
            except OSError:
                return
            with self.cond:
                rec = ConnRecord(id=len(self.connections) + 1, peer=peer, opened_at=time.monotonic())
                self.connections.append(rec)
                self._socks[rec.id] = sock
                self.cond.notify_all()
            threading.Thread(target=self._serve, args=(sock, rec), daemon=True).start()

    def _mark_closed(self, rec: ConnRecord, reason: str, req: RequestRecord | None = None) -> None:
        with self.cond:
            if rec.closed_at is None:
                rec.closed_at = time.monotonic()
                rec.close_reason = reason
            if req is not None and req.aborted_at is None:
                req.aborted_at = time.monotonic()
            self._socks.pop(rec.id, None)
            self.cond.notify_all()

    def _serve(self, sock: socket.socket, rec: ConnRecord) -> None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:  # closed by close() during teardown
            self._mark_closed(rec, "stub closed")
            return
        reader = _Reader(sock)
        req: RequestRecord | None = None
        try:
            while True:
                req = None
                req = self._read_request(reader, sock, rec)
                keep = self._respond(sock, reader, rec, req)
                if not keep:
                    try:
                        sock.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    self._mark_closed(rec, "server closed")
                    sock.close()
                    return
        except _PeerGone as e:
            self._mark_closed(rec, f"peer gone: {e}", req)
        except (BrokenPipeError, ConnectionResetError, OSError) as e:
            self._mark_closed(rec, f"peer gone: {e}", req)
        finally:
            try:
                sock.close()
            except OSError:
                pass

    def _read_request(self, reader: _Reader, sock: socket.socket, rec: ConnRecord) -> RequestRecord:
        line = reader.readline()
        while line in (b"\r\n", b"\n"):  # tolerate stray CRLF between requests
            line = reader.readline()
        parts = line.decode("latin-1").rstrip("\r\n").split(" ")
        if len(parts) != 3:
            raise _PeerGone(f"bad request line {line!r}")
        method, target, version = parts
        headers = []
        while True:
            h = reader.readline()
            if h in (b"\r\n", b"\n"):
                break
            name, _, value = h.decode("latin-1").rstrip("\r\n").partition(":")
            headers.append((name, value.strip(" \t")))
        req = RequestRecord(conn_id=rec.id, method=method, target=target, version=version,
                            headers=headers, received_at=time.monotonic())
        path = urllib.parse.urlsplit(target).path
        segments = path.split("/")
        for i, seg in enumerate(segments):
            if seg in ENDPOINTS:
                req.endpoint = seg
                req.base = "/".join(segments[:i])
                break
        with self.cond:
            rec.requests += 1
            self.requests.append(req)
            self.cond.notify_all()

        if req.endpoint == "hold":
            return req  # body handling is irrelevant: the peer is expected to go away

        if (req.header("Expect") or "").lower() == "100-continue":
            sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")

        digest = hashlib.sha256()
        length = 0

        def sink(data: bytes) -> None:
            nonlocal length
            digest.update(data)
            length += len(data)

        te = ",".join(req.header_all("Transfer-Encoding")).lower()
        if "chunked" in te:
            while True:
                size_line = reader.readline()
                size = int(size_line.split(b";")[0].strip(), 16)
                if size == 0:
                    while reader.readline() not in (b"\r\n", b"\n"):
                        pass
                    break
                reader.read_into(size, sink)
                reader.readline()
        else:
            cl = req.header("Content-Length")
            if cl:
                reader.read_into(int(cl), sink)
        with self.cond:
            req.body_length = length
            req.body_sha256 = digest.hexdigest()
            req.body_complete = True
            self.cond.notify_all()
        return req

    # ----- responses ------------------------------------------------------------------

    @staticmethod
    def _head(status: int, reason: str, headers: list) -> bytes:
        lines = [f"HTTP/1.1 {status} {reason}"] + [f"{k}: {v}" for k, v in headers]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _respond(self, sock: socket.socket, reader: _Reader, rec: ConnRecord, req: RequestRecord) -> bool:
        q = dict(urllib.parse.parse_qsl(req.query, keep_blank_values=True))
        wants_close = any(t.strip().lower() == "close"
                          for v in req.header_all("Connection") for t in v.split(","))
        head_only = req.method == "HEAD"
        conn_hdr = [("Connection", "close")] if wants_close else []
        ep = req.endpoint

        def send_body(status: int, reason: str, body: bytes, ctype: str = "application/json",
                      extra: list | None = None) -> None:
            hdrs = [("Content-Type", ctype), ("Content-Length", str(len(body)))] + (extra or []) + conn_hdr
            sock.sendall(self._head(status, reason, hdrs) + (b"" if head_only else body))

        def chunked_stream(ctype: str, pieces, interval: float) -> None:
            sock.sendall(self._head(200, "OK", [("Content-Type", ctype), ("Cache-Control", "no-cache"),
                                                ("Transfer-Encoding", "chunked")] + conn_hdr))
            if head_only:
                return
            first = True
            for piece in pieces:
                if not first:
                    time.sleep(interval)
                first = False
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            sock.sendall(b"0\r\n\r\n")

        if ep == "slow":
            time.sleep(float(q.get("delay", "2")))
            ep = "echo"

        if ep == "echo":
            body = json.dumps(self.describe(req)).encode()
            send_body(200, "OK", body, extra=[("X-Upstream", self.name)])
        elif ep == "stream":
            n, interval = int(q.get("n", "5")), float(q.get("interval", "0.3"))
            chunked_stream("text/plain", (f"chunk {i}\n".encode() for i in range(n)), interval)
        elif ep == "sse":
            n, interval = int(q.get("n", "5")), float(q.get("interval", "0.3"))
            chunked_stream("text/event-stream",
                           (f"id: {i}\nevent: tick\ndata: tick {i}\n\n".encode() for i in range(n)), interval)
        elif ep == "drip":
            interval, limit = float(q.get("interval", "0.1")), float(q.get("max", "120"))
            sock.sendall(self._head(200, "OK", [("Content-Type", "text/plain"),
                                                ("Transfer-Encoding", "chunked")]))
            deadline = time.monotonic() + limit
            i = 0
            while time.monotonic() < deadline:
                try:
                    piece = f"drip {i}\n".encode()
                    sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
                except OSError as e:
                    self._mark_closed(rec, f"send failed: {e}", req)
                    raise _PeerGone("send failed")
                i += 1
                time.sleep(interval)
            sock.sendall(b"0\r\n\r\n")
        elif ep in ("big", "big-chunked"):
            n = int(q.get("bytes", "1048576"))
            chunked = ep == "big-chunked"
            hdrs = [("Content-Type", "application/octet-stream"), ("X-Body-Sha256", pattern_sha256(n))]
            hdrs += [("Transfer-Encoding", "chunked")] if chunked else [("Content-Length", str(n))]
            sock.sendall(self._head(200, "OK", hdrs + conn_hdr))
            if not head_only:
                try:
                    for block in pattern_bytes(n):
                        sock.sendall(b"%x\r\n%s\r\n" % (len(block), block) if chunked else block)
                    if chunked:
                        sock.sendall(b"0\r\n\r\n")
                except OSError as e:
                    self._mark_closed(rec, f"send failed: {e}", req)
                    raise _PeerGone("send failed")
        elif ep == "reset":
            after = int(q.get("after", "1000"))
            total = int(q.get("total", str(after * 10)))
            chunked = q.get("chunked") == "1"
            hdrs = [("Content-Type", "application/octet-stream")]
            hdrs += [("Transfer-Encoding", "chunked")] if chunked else [("Content-Length", str(total))]
            data = b"".join(pattern_bytes(after))
            sock.sendall(self._head(200, "OK", hdrs) + (b"%x\r\n%s\r\n" % (len(data), data) if chunked else data))
            time.sleep(float(q.get("pause", "0.5")))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self._mark_closed(rec, "reset by upstream")
            sock.close()
            raise _PeerGone("reset sent")
        elif ep == "status":
            segs = req.path.split("/")
            idx = segs.index("status")
            code = int(segs[idx + 1]) if len(segs) > idx + 1 and segs[idx + 1].isdigit() else 200
            reason = {204: "No Content", 304: "Not Modified", 404: "Not Found", 500: "Internal Server Error",
                      401: "Unauthorized"}.get(code, "Status")
            if code in (204, 304) or 100 <= code < 200:
                extra = [("ETag", '"v1"')] if code == 304 else []
                if "content_length" in q:
                    extra.append(("Content-Length", q["content_length"]))
                sock.sendall(self._head(code, reason, extra + [("X-Upstream", self.name)] + conn_hdr))
            else:
                send_body(code, reason, json.dumps({"status": code}).encode())
        elif ep == "redirect":
            location = q.get("to") or f"{self.url}{req.base}/echo/after?x=1"
            if "pad" in q:  # a long foreign Location, for large response heads
                location = "https://other.example/" + "x" * int(q["pad"])
            secure = "; Secure" if q.get("secure") == "1" else ""
            extra = [
                ("Location", location),
                ("Content-Location", f"{self.url}{req.base}/echo/content"),
                ("Set-Cookie", f"sid=cookie-from-upstream; Domain=127.0.0.1; Path={req.base}/; HttpOnly{secure}"),
                ("Set-Cookie", f"pref=dark; Domain=127.0.0.1; Path={req.base}/echo{secure}"),
            ]
            send_body(302, "Found", b"", ctype="text/plain", extra=extra)
        elif ep == "hop":
            extra = [("Connection", "X-Hop-Resp"), ("X-Hop-Resp", "secret-hop"),
                     ("Keep-Alive", "timeout=5, max=100"), ("X-Keep", "yes")]
            send_body(200, "OK", b"{}", extra=extra)
        elif ep == "hold":
            # Never answer; wait for the peer to go away (EOF or reset) and record when.
            deadline = time.monotonic() + 120
            sock.settimeout(0.2)
            while time.monotonic() < deadline and not self._closing:
                try:
                    data = sock.recv(65536)
                except socket.timeout:
                    continue
                except OSError as e:
                    self._mark_closed(rec, f"peer gone: {e}", req)
                    raise _PeerGone("hold: peer gone")
                if not data:
                    self._mark_closed(rec, "peer gone: eof", req)
                    raise _PeerGone("hold: eof")
            raise _PeerGone("hold: gave up")
        elif ep == "eof-body":
            n = int(q.get("bytes", "100000"))
            sock.sendall(self._head(200, "OK", [("Content-Type", "application/octet-stream"),
                                                ("X-Body-Sha256", pattern_sha256(n))]))
            if not head_only:
                for block in pattern_bytes(n):
                    sock.sendall(block)
            return False
        elif ep == "close-after":
            body = json.dumps(self.describe(req)).encode()
            send_body(200, "OK", body)
            time.sleep(0.1)
            return False
        elif ep == "trailers":
            sock.sendall(self._head(200, "OK", [("Content-Type", "text/plain"), ("Trailer", "X-Checksum"),
                                                ("Transfer-Encoding", "chunked")] + conn_hdr))
            if not head_only:
                sock.sendall(b"5\r\nhello\r\n6\r\n world\r\n0\r\nX-Checksum: abc\r\n\r\n")
        elif ep == "close":
            body = json.dumps(self.describe(req)).encode()
            sock.sendall(self._head(200, "OK", [("Content-Type", "application/json"),
                                                ("Content-Length", str(len(body))),
                                                ("Connection", "close")]) + body)
            return False
        return not wants_close

    def describe(self, req: RequestRecord) -> dict:
        return {
            "upstream": self.name,
            "method": req.method,
            "target": req.target,
            "path": req.path,
            "query": req.query,
            "version": req.version,
            "headers": [[k, v] for k, v in req.headers],
            "body_length": req.body_length,
            "body_sha256": req.body_sha256,
            "connection": req.conn_id,
        }


if __name__ == "__main__":  # manual use: python3 stub_upstream.py
    s = StubUpstream("manual")
    print(f"listening on {s.url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        s.close()
