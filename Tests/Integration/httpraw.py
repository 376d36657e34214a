"""A small raw-socket HTTP/1.1 client for the integration tests.

It sends exactly the bytes a test gives it and parses responses strictly enough to tell
a complete response from one cut short (Content-Length short, chunked body without its
terminating zero chunk), which libraries such as requests or curl would hide or retry.
"""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass, field


class ConnectionClosed(Exception):
    """The peer closed the connection before a complete response head arrived."""


class HeaderLookup:
    """Case-insensitive lookups over `self.headers`, a wire-order list of (name, value)."""

    def header(self, name: str):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def header_all(self, name: str) -> list:
        return [v for k, v in self.headers if k.lower() == name.lower()]


@dataclass
class Response(HeaderLookup):
    version: str
    status: int
    reason: str
    headers: list  # [(name, value)] in wire order, duplicates kept
    body: bytes = b""
    # False when the body was cut short: fewer bytes than Content-Length, or a chunked
    # body whose terminating zero-size chunk never came.
    complete: bool = True
    # Set when the body length was delimited by the connection closing.
    close_delimited: bool = False
    # When each piece of the body arrived (monotonic seconds), for streaming tests.
    arrivals: list = field(default_factory=list)
    head_at: float = 0.0

    def has_header(self, name: str) -> bool:
        return any(k.lower() == name.lower() for k, _ in self.headers)

    def json(self):
        return json.loads(self.body.decode("utf-8"))

    def __repr__(self) -> str:  # short, for assertion messages
        return (f"<Response {self.status} {self.reason} headers={self.headers} "
                f"body={self.body[:300]!r}{'...' if len(self.body) > 300 else ''} complete={self.complete}>")


class Conn:
    """One client connection (TCP or Unix socket)."""

    def __init__(self, address, timeout: float = 15.0):
        if isinstance(address, str):
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            self.sock.connect(address)
        else:
            self.sock = socket.create_connection(address, timeout=timeout)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.timeout = timeout
        self.buf = bytearray()
        self.eof = False

    # ----- sending ----------------------------------------------------------------

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def request(self, method: str, target: str, headers=None, body: bytes | None = None,
                host: str | None = None) -> None:
        """Sends one request. headers: list of (name, value); Host is added first unless given
        in headers or host is "" (no Host). Content-Length is added for a body unless present."""
        headers = list(headers or [])
        names = {k.lower() for k, _ in headers}
        lines = [f"{method} {target} HTTP/1.1"]
        if "host" not in names and host != "":
            lines.append(f"Host: {host}")
        if body is not None and "content-length" not in names and "transfer-encoding" not in names:
            headers.append(("Content-Length", str(len(body))))
        lines += [f"{k}: {v}" for k, v in headers]
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b""))

    # ----- receiving --------------------------------------------------------------

    def _fill(self, deadline: float) -> bool:
        """Reads more bytes; False on EOF or reset."""
        if self.eof:
            return False
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out waiting for the proxy")
        self.sock.settimeout(left)
        try:
            data = self.sock.recv(1 << 20)
        except socket.timeout:
            raise TimeoutError("timed out waiting for the proxy")
        except (ConnectionResetError, BrokenPipeError):
            self.eof = True
            return False
        if not data:
            self.eof = True
            return False
        self.buf += data
        return True

    def _readline(self, deadline: float) -> bytes:
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[: i + 2]
                return line
            if not self._fill(deadline):
                raise ConnectionClosed(f"closed mid-line, got {bytes(self.buf)!r}")

    def read_head(self, timeout: float | None = None) -> Response:
        deadline = time.monotonic() + (timeout or self.timeout)
        while b"\r\n\r\n" not in self.buf:
            if not self._fill(deadline):
                raise ConnectionClosed(f"connection closed before a response head; got {bytes(self.buf)!r}")
        end = self.buf.index(b"\r\n\r\n")
        head = bytes(self.buf[:end]).decode("latin-1")
        del self.buf[: end + 4]
        status_line, *header_lines = head.split("\r\n")
        version, status, *reason = status_line.split(" ", 2)
        headers = []
        for line in header_lines:
            name, _, value = line.partition(":")
            headers.append((name, value.strip(" \t")))
        return Response(version=version, status=int(status), reason=reason[0] if reason else "",
                        headers=headers, head_at=time.monotonic())

    def read_response(self, method: str = "GET", timeout: float | None = None,
                      skip_interim: bool = True) -> Response:
        """Reads one response; interim 1xx responses are skipped unless skip_interim is False."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            resp = self.read_head(max(0.01, deadline - time.monotonic()))
            if 100 <= resp.status < 200 and resp.status != 101:
                if skip_interim:
                    continue
                return resp
            break
        return self.read_body(resp, method=method, timeout=max(0.01, deadline - time.monotonic()))

    def read_body(self, resp: Response, method: str = "GET", timeout: float | None = None) -> Response:
        """Reads the body that belongs to a head from read_head; sets body and complete."""
        deadline = time.monotonic() + (timeout or self.timeout)
        if method == "HEAD" or resp.status in (204, 304) or 100 <= resp.status < 200:
            return resp
        te = ",".join(resp.header_all("Transfer-Encoding")).lower()
        body = bytearray()
        if "chunked" in te:
            resp.complete = self._read_chunked(body, resp, deadline)
        elif resp.has_header("Content-Length"):
            n = int(resp.header("Content-Length"))
            while len(body) < n:
                if not self.buf and not self._fill(deadline):
                    break
                take = min(n - len(body), len(self.buf))
                body += self.buf[:take]
                del self.buf[:take]
                resp.arrivals.append((time.monotonic(), take))
            resp.complete = len(body) == n
        else:
            resp.close_delimited = True
            while True:
                if self.buf:
                    resp.arrivals.append((time.monotonic(), len(self.buf)))
                    body += self.buf
                    self.buf.clear()
                if not self._fill(deadline):
                    break
        resp.body = bytes(body)
        return resp

    def _read_chunked(self, body: bytearray, resp: Response, deadline: float) -> bool:
        try:
            while True:
                size_line = self._readline(deadline)
                size = int(size_line.split(b";")[0].strip(), 16)
                if size == 0:
                    while self._readline(deadline) != b"":  # trailers
                        pass
                    return True
                got = 0
                while got < size:
                    if not self.buf and not self._fill(deadline):
                        return False
                    take = min(size - got, len(self.buf))
                    body += self.buf[:take]
                    del self.buf[:take]
                    got += take
                    resp.arrivals.append((time.monotonic(), take))
                if self._readline(deadline) != b"":
                    raise AssertionError("chunk not followed by CRLF")
        except ConnectionClosed:
            return False

    def closed_by_peer(self, timeout: float = 10.0) -> bool:
        """True if the peer closes (EOF or reset) within timeout; unread bytes are kept in buf."""
        deadline = time.monotonic() + timeout
        try:
            while self._fill(deadline):
                pass
            return True
        except TimeoutError:
            return False
        except OSError:
            return True

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def reset(self) -> None:
        """Closes with RST (SO_LINGER 0)."""
        import struct
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def status_of(data: bytes) -> int | None:
    """The status code in the first line of raw response bytes, or None."""
    line = data.split(b"\r\n", 1)[0].decode("latin-1", "replace")
    parts = line.split(" ")
    if len(parts) >= 2 and parts[0].startswith("HTTP/") and parts[1].isdigit():
        return int(parts[1])
    return None
