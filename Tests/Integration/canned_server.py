"""A loopback server for tests that need a peer answering in a precise, hand-written way:
it reads each request head and hands it to `respond(head, conn)`, which writes the bytes."""

from loopback_server import LoopbackServer


class CannedServer(LoopbackServer):
    def __init__(self, respond):
        self.respond = respond
        super().__init__()

    def serve(self, conn):
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            self.respond(data.split(b"\r\n\r\n", 1)[0], conn)
