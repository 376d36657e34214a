"""A loopback server for tests that need a peer answering in a precise, hand-written way:
it reads each request head and hands it to `respond(head, conn)`, which writes the bytes."""

import socket
import threading


class CannedServer:
    def __init__(self, respond):
        self.respond = respond
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn):
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            self.respond(data.split(b"\r\n\r\n", 1)[0], conn)

    def close(self):
        self.sock.close()
