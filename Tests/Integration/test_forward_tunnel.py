"""Raw tunnels of a forward listener (`tunnel:` hosts) through the real binary: bytes pass
byte for byte both ways, a few MiB of them, and a half-close travels through with the
other direction still open; no credential is added; a host neither a route nor the list
names is refused naming it; loopback and cloud-metadata destinations are refused even when
listed; a plain http:// request to a tunnel host is forwarded untouched but for the
proxy's own Proxy-Authorization.

The destinations listen on this machine's non-loopback address (tunnel_support), because
a forward listener refuses loopback ones."""

from __future__ import annotations

import base64
import json
import os
import socket
import threading

import pytest

from forward_support import PROXY_SECRET, ApiServer, forward_config
from stub_upstream import StubUpstream
from support import TOKEN
from tls_support import Certs
from tunnel_support import AFTER_EOF, EchoServer, machine_address

PROXY_AUTHORIZATION = "Basic " + base64.b64encode(f"latchkey:{PROXY_SECRET}".encode()).decode()


@pytest.fixture
def api(tmp_path):
    server = ApiServer(Certs(tmp_path / "pki"))
    yield server
    server.close()


@pytest.fixture
def address():
    return machine_address()


@pytest.fixture
def echo(address):
    server = EchoServer(address)
    yield server
    server.close()


def read_head(sock: socket.socket) -> tuple[bytes, bytes]:
    """The proxy's answer head, read a byte at a time so that nothing after it is taken;
    then its body when it says how long."""
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        byte = sock.recv(1)
        if not byte:
            break
        head += byte
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
    body = b""
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        if not chunk:
            break
        body += chunk
    return head, body


def connect(p, target: str) -> tuple[socket.socket, bytes, bytes]:
    sock = socket.create_connection(p.address, timeout=20)
    sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\nProxy-Authorization: {PROXY_AUTHORIZATION}\r\n\r\n".encode())
    head, body = read_head(sock)
    return sock, head, body


def read_to_end(sock: socket.socket) -> bytes:
    data = bytearray()
    while chunk := sock.recv(262144):
        data += chunk
    return bytes(data)


def test_a_tunnel_host_gets_the_bytes_unchanged_both_ways(latchkey, api, address, echo):
    p = latchkey.serve(forward_config(api, listener={"tunnel": [address]}))
    sock, head, _ = connect(p, echo.authority)
    assert head.startswith(b"HTTP/1.1 200"), head
    # Small pieces first (what an HTTP request head would be), every byte value, then MiBs.
    payload = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + bytes(range(256)) * 4 + os.urandom(4 * 1024 * 1024 + 7)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(read_to_end(sock)), daemon=True)
    reader.start()
    for start in range(0, len(payload), 100_000):
        sock.sendall(payload[start:start + 100_000])
    sock.shutdown(socket.SHUT_WR)  # half-close: the answer still comes back
    reader.join(60)
    sock.close()
    assert received, "the tunnel did not end after the half-close"
    back = received[0]
    assert back[:len(payload)] == payload, f"{len(back)} bytes back for {len(payload)} sent"
    # The server saw the FIN (it sends AFTER_EOF only then) and the way back stayed open.
    assert back[len(payload):] == AFTER_EOF
    # What reached the destination is exactly what was sent: no head, no credential.
    assert bytes(echo.received[0]) == payload
    assert TOKEN.encode() not in bytes(echo.received[0])


def test_a_half_closed_tunnel_still_delivers_what_comes_after(latchkey, api, address, echo):
    p = latchkey.serve(forward_config(api, listener={"tunnel": [address]}))
    sock, head, _ = connect(p, echo.authority)
    assert head.startswith(b"HTTP/1.1 200"), head
    sock.sendall(b"last words")
    sock.shutdown(socket.SHUT_WR)
    assert read_to_end(sock) == b"last words" + AFTER_EOF
    sock.close()


def test_an_unlisted_host_is_refused_naming_it(latchkey, api, address, echo):
    p = latchkey.serve(forward_config(api, listener={"tunnel": [address]}))
    for target, host in (("example.org:443", "example.org"), ("unlisted.test:22", "unlisted.test")):
        sock, head, body = connect(p, target)
        sock.close()
        assert head.startswith(b"HTTP/1.1 403"), head
        document = json.loads(body)
        assert document["error"] == "host_not_allowed" and document["host"] == host
    assert echo.connections == 0


@pytest.mark.parametrize("listed", ["127.0.0.1", "169.254.169.254", "localhost"])
def test_loopback_and_metadata_destinations_are_refused_even_when_listed(latchkey, api, listed):
    loopback = EchoServer("127.0.0.1")
    try:
        p = latchkey.serve(forward_config(api, listener={"tunnel": [listed]}))
        target = f"{listed}:{loopback.port}" if listed != "169.254.169.254" else f"{listed}:80"
        sock, head, body = connect(p, target)
        sock.close()
        assert head.startswith(b"HTTP/1.1 403"), head + body
        assert json.loads(body)["host"] == listed
        assert loopback.connections == 0
    finally:
        loopback.close()


def test_plain_http_to_a_tunnel_host_is_forwarded_untouched(latchkey, api, address):
    destination = StubUpstream("tunnel-host", host=address)
    try:
        p = latchkey.serve(forward_config(api, listener={"tunnel": [address]}))
        sock = socket.create_connection(p.address, timeout=20)
        sock.sendall((f"GET http://{destination.address}/plain/path?q=1 HTTP/1.1\r\n"
                      f"Host: {destination.address}\r\n"
                      f"Proxy-Authorization: {PROXY_AUTHORIZATION}\r\n"
                      "Authorization: Basic the-clients-own\r\n"
                      "X-Client: kept\r\n"
                      "Connection: close\r\n\r\n").encode())
        answer = read_to_end(sock)
        sock.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), answer[:2000]
        seen = destination.wait_for_request(path_contains="/plain/path")
        assert seen is not None
        assert seen.target == "/plain/path?q=1"
        assert seen.header("Authorization") == "Basic the-clients-own"  # the client's own, not a route's
        assert seen.header("X-Client") == "kept"
        assert seen.header("Proxy-Authorization") is None
        assert seen.header("Host") == destination.address
        assert TOKEN not in json.dumps(seen.headers)
        # Nothing added: the client's own fields, less the proxy's and the hop-by-hop ones.
        assert sorted(name.lower() for name, _ in seen.headers) == ["authorization", "host", "x-client"], seen.headers
    finally:
        destination.close()
