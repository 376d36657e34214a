"""The accept loop of the tests' hand-written loopback servers: a listening socket on an
ephemeral port, and each accepted connection served on a thread of its own."""

import socket
import threading


class LoopbackServer:
    """Subclasses set their own state first, then call `__init__`, which starts accepting;
    they implement `serve(conn, *accepted(conn))`."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=64)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._accept, daemon=True).start()

    def accepted(self, conn: socket.socket) -> tuple:
        """Called on the accept thread, in the order of the connections: what `serve` gets
        besides the connection."""
        return ()

    def serve(self, conn: socket.socket, *args) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.sock.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn, *self.accepted(conn)), daemon=True).start()
