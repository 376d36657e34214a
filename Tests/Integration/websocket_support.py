"""WebSocket peers for the upgrade tests: a real WebSocket server (the `websockets` package,
asyncio, in a thread of its own) behind a Latchkey route, what it saw, and a few raw-frame
helpers for what a client library would not send.

    server = WsServer()                         # ws://127.0.0.1:PORT, every path echoes
    cfg = config(server.url)                    # a route to it (http://127.0.0.1:PORT)
    p = latchkey.serve(cfg)
    with client(p, "/chat") as ws:              # websockets' sync client, through Latchkey
        ws.send("hi"); assert ws.recv() == "hi"
    session = server.wait_session()             # the upstream's view: handshake, messages, close

The server echoes every message with its type, fragmented as it came. Text messages that
start with `!cmd ` are orders instead:
  `!cmd close CODE REASON`    closes with that code
  `!cmd ping DATA`            pings the client, answers `pong DATA` once the pong is back
  `!cmd flood COUNT SIZE`     sends COUNT binary messages of SIZE bytes, then `flood done`
  `!cmd tick N INTERVAL`      sends `tick 0` … `tick N-1`, INTERVAL seconds apart
  `!cmd sleep S`              reads nothing for S seconds (websockets stops reading the
                              socket once a few messages wait), then answers `slept`
`check(handshake)` refuses a handshake: it returns None to accept, or (status, body) or
(status, body, {field: value}); it runs in a thread of its own. `pages` maps a path to
(content type, body) for plain GETs (the browser's page)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import struct
import threading
import time
from dataclasses import dataclass, field

import pytest
from websockets.asyncio.client import connect as async_connect
from websockets.asyncio.server import serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Response
from websockets.sync.client import connect

from loopback_server import LoopbackServer
from support import wait_until

MAX_SIZE = 16 * 1024 * 1024


@dataclass
class Handshake:
    """A request that reached the server, and the status it was answered with."""
    path: str
    headers: list  # [(name, value)] in wire order
    status: int | None = None

    def header(self, name: str):
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def header_all(self, name: str) -> list:
        return [v for k, v in self.headers if k.lower() == name.lower()]


@dataclass
class Session:
    """One accepted WebSocket: what came in and how it ended."""
    path: str
    headers: list
    subprotocol: str | None
    messages: list = field(default_factory=list)   # str or bytes, in order
    fragments: list = field(default_factory=list)  # per message: the list of its fragments
    pongs: list = field(default_factory=list)      # data of pongs the server got for its pings
    close_code: int | None = None                  # the close frame received (None: no frame)
    close_reason: str | None = None
    close_sent: int | None = None                  # the close frame it sent
    ended: threading.Event = field(default_factory=threading.Event)

    def header(self, name: str):
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def wait_ended(self, timeout: float = 15.0) -> bool:
        return self.ended.wait(timeout)


class WsServer:
    def __init__(self, *, subprotocols=None, check=None, pages: dict | None = None, compression: str | None = None,
                 ssl=None, host: str = "127.0.0.1"):
        """`ssl`: a server SSLContext, for a wss:// upstream (url is then https://localhost)."""
        self.subprotocols = subprotocols
        self.ssl = ssl
        self.compression = compression
        self.check = check
        self.pages = pages or {}
        self.handshakes: list[Handshake] = []
        self.sessions: list[Session] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(host,), daemon=True)
        self._thread.start()
        assert self._ready.wait(10), "the WebSocket server did not start"

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        """The route's upstream: the handshake is an HTTP request."""
        return f"https://localhost:{self._port}" if self.ssl else f"http://127.0.0.1:{self._port}"

    def wait_session(self, index: int = 0, timeout: float = 10.0) -> Session:
        found = wait_until(lambda: len(self.sessions) > index, timeout)
        assert found, f"the WebSocket server has {len(self.sessions)} sessions, not {index + 1}"
        return self.sessions[index]

    def upgrade_handshakes(self) -> list[Handshake]:
        return [h for h in self.handshakes if h.header("Upgrade")]

    def close(self) -> None:
        async def stop():
            self._server.close()
            await self._server.wait_closed()
        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(15)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    # ----- the server's thread ----------------------------------------------------------

    def _run(self, host: str) -> None:
        asyncio.set_event_loop(self._loop)

        async def start():
            self._server = await serve(self._handler, host, 0, process_request=self._process_request,
                                       subprotocols=self.subprotocols, max_size=MAX_SIZE, ping_interval=None,
                                       compression=self.compression, ssl=self.ssl)
            self._port = self._server.sockets[0].getsockname()[1]
        self._loop.run_until_complete(start())
        self._ready.set()
        self._loop.run_forever()

    async def _process_request(self, connection, request):
        seen = Handshake(request.path, list(request.headers.raw_items()))
        self.handshakes.append(seen)
        if not request.headers.get("Upgrade"):
            page = self.pages.get(request.path.split("?")[0])
            seen.status = 200 if page else 404
            ctype, body = page or ("text/plain", b"no such page\n")
            return Response(seen.status, "OK" if page else "Not Found",
                            Headers([("Content-Type", ctype), ("Content-Length", str(len(body))),
                                     ("Connection", "close")]), body)
        if self.check is not None:
            refusal = await asyncio.to_thread(self.check, seen)
            if refusal is not None:
                status, body, *fields = refusal
                seen.status = status
                response = connection.respond(status, body)
                for name, value in (fields[0] if fields else {}).items():
                    response.headers[name] = value
                return response
        seen.status = 101
        return None

    async def _handler(self, ws) -> None:
        session = Session(ws.request.path, list(ws.request.headers.raw_items()), ws.subprotocol)
        self.sessions.append(session)
        try:
            while True:
                fragments = [f async for f in ws.recv_streaming()]
                message = "".join(fragments) if isinstance(fragments[0], str) else b"".join(fragments)
                session.fragments.append(fragments)
                session.messages.append(message)
                if isinstance(message, str) and message.startswith("!cmd "):
                    await self._order(ws, session, message[5:])
                elif len(fragments) > 1:
                    await ws.send(iter(fragments))
                else:
                    await ws.send(message)
        except ConnectionClosed as closed:
            if closed.rcvd is not None:
                session.close_code, session.close_reason = closed.rcvd.code, closed.rcvd.reason
            if closed.sent is not None:
                session.close_sent = closed.sent.code
        finally:
            session.ended.set()

    async def _order(self, ws, session: Session, order: str) -> None:
        verb, _, rest = order.partition(" ")
        if verb == "close":
            code, _, reason = rest.partition(" ")
            await ws.close(int(code), reason)
        elif verb == "ping":
            data = rest.encode()
            waiter = await ws.ping(data)
            await waiter
            session.pongs.append(data)
            await ws.send(f"pong {rest}")
        elif verb == "tick":
            count, interval = rest.split()
            for n in range(int(count)):
                await asyncio.sleep(float(interval))
                await ws.send(f"tick {n}")
        elif verb == "sleep":
            await asyncio.sleep(float(rest))
            await ws.send("slept")
        elif verb == "flood":
            count, size = (int(n) for n in rest.split())
            block = os.urandom(size)
            for _ in range(count):
                await ws.send(block)
            await ws.send("flood done")


class RawUpgradeServer(LoopbackServer):
    """An upstream for a protocol other than WebSocket: it answers any request with `101
    Switching Protocols` to `protocol`, then echoes raw bytes until the peer's FIN. `heads`:
    the request heads it read, as text; `received`: per connection, the bytes after the head."""

    def __init__(self, protocol: str = "foo", greeting: bytes = b""):
        """`greeting`: bytes of the new protocol sent in the same write as the 101."""
        self.protocol = protocol
        self.greeting = greeting
        self.heads: list[str] = []
        self.received: list[bytearray] = []
        super().__init__()

    def serve(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, rest = data.partition(b"\r\n\r\n")
            self.heads.append(head.decode("latin-1"))
            received = bytearray(rest)
            self.received.append(received)
            conn.sendall(f"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: {self.protocol}\r\n"
                         "X-Raw-Upstream: yes\r\n\r\n".encode() + self.greeting)
            if rest:
                conn.sendall(rest)
            while True:
                try:
                    chunk = conn.recv(65536)
                except ConnectionResetError:
                    return
                if not chunk:
                    # Half close in turn; the proxy may have closed both ways already.
                    with contextlib.suppress(OSError):
                        conn.shutdown(socket.SHUT_WR)
                    return
                received.extend(chunk)
                conn.sendall(chunk)


@pytest.fixture
def make_ws_server():
    """Starts WebSocket servers: make_ws_server(**WsServer options); stopped after the test."""
    started = []

    def make(**kw) -> WsServer:
        server = WsServer(**kw)
        started.append(server)
        return server

    yield make
    for server in started:
        server.close()


@pytest.fixture
def ws_server(make_ws_server) -> WsServer:
    """An echoing WebSocket server."""
    return make_ws_server()


# ----- clients ------------------------------------------------------------------------------

def ws_url(p, path: str, scheme: str = "ws") -> str:
    return f"{scheme}://{p.host_header}{path}"


def client(p, path: str, scheme: str = "ws", **kw):
    """websockets' sync client through Latchkey's listener, with no keepalive pings (tests
    that count bytes or wait in silence need none), 16 MiB messages and no compression
    unless asked."""
    kw.setdefault("ping_interval", None)
    kw.setdefault("max_size", MAX_SIZE)
    kw.setdefault("compression", None)
    kw.setdefault("open_timeout", 15)
    return connect(ws_url(p, path, scheme), **kw)


class AsyncioClient:
    """websockets' asyncio client behind the sync client's face (`send`, `recv(timeout=)`,
    `close(code, reason)`, a context manager), for clients that speak TLS to Latchkey.

    The sync client reads in a thread of its own while the caller writes, so it calls
    SSL_read and SSL_write on one TLS session at the same time, which OpenSSL forbids. When
    Latchkey's TLS 1.3 session tickets (sent right after the handshake) are read while the
    caller writes its opening handshake, that request can vanish without an error: Latchkey
    never receives it and closes the silent connection at its head timeout. The asyncio
    client drives its TLS session from its loop's thread only; the loop runs in a thread of
    its own here, and every call waits for it."""

    def __init__(self, url: str, **kw):
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()

        async def opened():
            return await async_connect(url, **kw)
        try:
            self._ws = self._run(opened())
        except BaseException:
            self._stop()
            raise

    def send(self, message) -> None:
        self._run(self._ws.send(message))

    def recv(self, timeout: float | None = None):
        return self._run(asyncio.wait_for(self._ws.recv(), timeout))

    def close(self, code: int = 1000, reason: str = "") -> None:
        self._run(self._ws.close(code, reason))

    def __enter__(self) -> AsyncioClient:
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.close()
        finally:
            self._stop()

    def _run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def _stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


# ----- raw frames (RFC 6455 §5.2) -------------------------------------------------------------

TEXT, BINARY, CLOSE, PING, PONG = 0x1, 0x2, 0x8, 0x9, 0xA


def frame(opcode: int, payload: bytes, *, fin: bool = True, mask: bool = True) -> bytes:
    """One frame; a client's are masked (§5.3)."""
    head = bytes([(0x80 if fin else 0) | opcode])
    bit = 0x80 if mask else 0
    n = len(payload)
    if n < 126:
        head += bytes([bit | n])
    elif n < 65536:
        head += bytes([bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([bit | 127]) + struct.pack("!Q", n)
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def frame_size(payload_length: int, *, masked: bool) -> int:
    """The bytes a frame with this payload takes on the wire."""
    extra = 0 if payload_length < 126 else 2 if payload_length < 65536 else 8
    return 2 + extra + (4 if masked else 0) + payload_length


def close_payload(code: int, reason: str = "") -> bytes:
    return struct.pack("!H", code) + reason.encode()


def parse_frame(buf: bytearray):
    """(opcode, fin, payload) of the frame at the start of buf, taken out of it (unmasked if
    masked); None while buf holds less than a whole frame."""
    if len(buf) < 2:
        return None
    length, offset = buf[1] & 0x7F, 2
    if length == 126:
        if len(buf) < 4:
            return None
        length, offset = struct.unpack("!H", buf[2:4])[0], 4
    elif length == 127:
        if len(buf) < 10:
            return None
        length, offset = struct.unpack("!Q", buf[2:10])[0], 10
    masked = bool(buf[1] & 0x80)
    key_at, offset = offset, offset + (4 if masked else 0)
    if len(buf) < offset + length:
        return None
    opcode, fin = buf[0] & 0x0F, bool(buf[0] & 0x80)
    payload = bytes(buf[offset:offset + length])
    if masked:
        key = buf[key_at:key_at + 4]
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    del buf[:offset + length]
    return opcode, fin, payload


def read_frame(sock: socket.socket, buf: bytearray, timeout: float = 10.0):
    """(opcode, fin, payload) of the next frame, reading sock into buf; None when the
    connection ends first."""
    deadline = time.monotonic() + timeout
    while (found := parse_frame(buf)) is None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no complete frame")
        sock.settimeout(left)
        try:
            data = sock.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            return None
        if not data:
            return None
        buf.extend(data)
    return found


def handshake_headers(key: str = "dGhlIHNhbXBsZSBub25jZQ==", version: str | None = "13", extra=()) -> list:
    """A client's opening handshake fields (RFC 6455 §4.1; the key is the RFC's example)."""
    headers = [("Connection", "Upgrade"), ("Upgrade", "websocket")]
    if key is not None:
        headers.append(("Sec-WebSocket-Key", key))
    if version is not None:
        headers.append(("Sec-WebSocket-Version", version))
    return headers + list(extra)
