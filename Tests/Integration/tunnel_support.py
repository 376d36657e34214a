"""Destinations for the forward proxy's raw tunnels (`tunnel:` hosts). A forward listener
refuses loopback, link-local and cloud-metadata destinations unless a route names them, so
these servers listen on an address of this machine that is none of those.

    address = machine_address()          # e.g. 192.0.2.2; fails the test if there is none
    echo = EchoServer(address)           # echoes bytes until the client's FIN, then says so
    ...
    echo.close()
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time

import pytest

# Sent by EchoServer once the client has shut down its writing side, after everything it
# sent was echoed: a client that reads this after its own FIN saw the half-close travel
# through the tunnel and the other direction stay open.
AFTER_EOF = b"<after-eof>"


def machine_address() -> str:
    """This machine's own non-loopback IPv4 address: the source address the kernel would use
    towards the outside (a UDP connect sends nothing). Fails the test if there is none."""
    for probe in ("192.0.2.1", "198.51.100.1", "10.255.255.255", "8.8.8.8"):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sock.connect((probe, 9))
            address = sock.getsockname()[0]
        except OSError:
            continue
        finally:
            sock.close()
        ip = ipaddress.ip_address(address)
        if not (ip.is_loopback or ip.is_link_local or ip.is_unspecified):
            return address
    pytest.fail("this machine has no non-loopback IPv4 address: the tunnel tests need one, because a forward "
                "listener refuses loopback and link-local destinations", pytrace=False)


class EchoServer:
    """A TCP echo server: each connection gets back every byte it sends, in order; when the
    client shuts down its writing side, the server waits a moment, sends AFTER_EOF and
    closes. It records what each connection sent (`received`, one bytes per connection)."""

    def __init__(self, host: str):
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((host, 0))
        self.listener.listen(16)
        self.host = host
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.received: list[bytearray] = []
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def authority(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def connections(self) -> int:
        with self.lock:
            return len(self.received)

    def _accept(self) -> None:
        while not self.closed:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                record = bytearray()
                self.received.append(record)
            threading.Thread(target=self._serve, args=(sock, record), daemon=True).start()

    def _serve(self, sock: socket.socket, record: bytearray) -> None:
        with sock:
            try:
                while True:
                    data = sock.recv(262144)
                    if not data:
                        break
                    with self.lock:
                        record += data
                    sock.sendall(data)
                time.sleep(0.2)
                sock.sendall(AFTER_EOF)
                sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def close(self) -> None:
        self.closed = True
        self.listener.close()
