"""A raw-socket HTTP/1.1 upstream whose every move a test writes down in advance: what it
does with a request depends only on the number of the connection it came on (in the order
accepted, from 0) and its number on that connection (from 0), never on timing. It reads each
request whole (head and Content-Length body) before it acts, so a close it makes is a clean
FIN that the proxy meets after writing everything, not a reset.

    upstream = ScriptedUpstream({(0, 1): CLOSE})   # the 2nd request on the 1st connection
    ...
    upstream.connections[0].requests               # what came on it, in order

The moves (anything not in the script is ANSWER):
  ANSWER            200 with Content-Length and no `Connection: close` (the connection is
                    kept), its JSON body naming the connection, the request and the body's
                    length; then the next request on the connection is read
  ANSWER_THEN_FIN   ANSWER, then shutdown(SHUT_WR): the connection idles half-closed, and
                    the upstream reads on until the proxy closes its end (`proxy_closed`)
  CLOSE             closes without answering
  RESET             closes without answering, with a reset (SO_LINGER 0), as when the
                    request crossed the upstream's close
  BEGIN_THEN_CLOSE  sends the start of a response head, then closes
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from dataclasses import dataclass, field

from loopback_server import LoopbackServer

ANSWER = "answer"
ANSWER_THEN_FIN = "answer-then-fin"
CLOSE = "close"
RESET = "reset"
BEGIN_THEN_CLOSE = "begin-then-close"

BEGUN_HEAD = b"HTTP/1.1 200 OK\r\nContent-"


@dataclass
class Request:
    method: str
    target: str
    headers: list  # [(name, value)] in wire order
    body: bytes


@dataclass
class Connection:
    number: int
    requests: list[Request] = field(default_factory=list)
    # Set when the proxy closed its end between requests (the upstream read its FIN).
    proxy_closed: threading.Event = field(default_factory=threading.Event)

    @property
    def targets(self) -> list[str]:
        return [f"{r.method} {r.target}" for r in self.requests]


class ScriptedUpstream(LoopbackServer):
    def __init__(self, script: dict[tuple[int, int], str] | None = None):
        self.script = script or {}
        self.connections: list[Connection] = []
        super().__init__()

    def accepted(self, conn: socket.socket) -> tuple:
        record = Connection(len(self.connections))
        self.connections.append(record)
        return (record,)

    def serve(self, conn: socket.socket, record: Connection) -> None:
        with conn:
            pending = b""
            while True:
                request, pending = _read_request(conn, pending)
                if request is None:
                    record.proxy_closed.set()
                    return
                number = len(record.requests)
                record.requests.append(request)
                move = self.script.get((record.number, number), ANSWER)
                if move == CLOSE:
                    return
                if move == RESET:
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return
                if move == BEGIN_THEN_CLOSE:
                    conn.sendall(BEGUN_HEAD)
                    return
                body = json.dumps({"connection": record.number, "request": number, "body_length": len(request.body)}).encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
                if move == ANSWER_THEN_FIN:
                    conn.shutdown(socket.SHUT_WR)


def _read_request(conn: socket.socket, pending: bytes) -> tuple[Request | None, bytes]:
    """The next request whole, and the bytes read past it; None at the peer's close."""
    while b"\r\n\r\n" not in pending:
        chunk = conn.recv(65536)
        if not chunk:
            return None, b""
        pending += chunk
    head, _, rest = pending.partition(b"\r\n\r\n")
    request_line, *lines = head.decode("latin-1").split("\r\n")
    method, target, _ = request_line.split(" ", 2)
    headers = [(name, value.strip()) for name, _, value in (line.partition(":") for line in lines)]
    length = next((int(v) for k, v in headers if k.lower() == "content-length"), 0)
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None, b""
        rest += chunk
    return Request(method, target, headers, rest[:length]), rest[length:]
