"""Certificates for the TLS tests, made with the `openssl` CLI in the test's directory (ECDSA
P-256 keys, as Latchkey's own local CA makes them), and the clients' side of a TLS
connection: Python contexts that trust a CA, `openssl s_client`, raw sockets for broken
handshakes.

    certs = Certs(tmp_path / "pki")
    ca = certs.ca("ca")
    server = certs.leaf(ca, "server", names=("127.0.0.1", "localhost"))
    listener = tls_listener(server)            # {"name": "main", "tls": {...}}
"""

from __future__ import annotations

import http.client
import ipaddress
import os
import secrets
import socket
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Pair:
    """A certificate file (PEM: the certificate, then its chain) and its private key."""
    cert: Path
    key: Path
    serial: str = ""  # upper-case hex without leading zeros, as Python's getpeercert() has it
    subject: str = ""

    def key_body(self) -> list[str]:
        """The base64 lines of the key's PEM, to grep logs for."""
        return [line for line in self.key.read_text().splitlines() if line and not line.startswith("-----")]


def openssl(*args: str, cwd: Path | None = None) -> None:
    done = subprocess.run(["openssl", *args], capture_output=True, text=True, cwd=cwd, timeout=30)
    assert done.returncode == 0, f"openssl {' '.join(args)}:\n{done.stderr}"


class Certs:
    """Makes CAs and the certificates they sign, each file in `directory`."""

    def __init__(self, directory: Path):
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)

    def key(self, name: str) -> Path:
        path = self.dir / f"{name}.key"
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(path))
        path.chmod(0o600)  # Latchkey refuses a key that group or others may read
        return path

    def ca(self, name: str, common_name: str | None = None) -> Pair:
        key = self.key(name)
        cert = self.dir / f"{name}.pem"
        subject = f"/O=Latchkey tests/CN={common_name or name + ' CA'}"
        ext = self._extensions(name, ["basicConstraints = critical,CA:TRUE,pathlen:0",
                                      "keyUsage = critical,keyCertSign,cRLSign",
                                      "subjectKeyIdentifier = hash"])
        openssl("req", "-x509", "-new", "-key", str(key), "-subj", subject, "-days", "90", "-sha256",
                "-config", str(ext), "-extensions", "ext", "-out", str(cert))
        return Pair(cert, key, subject=subject)

    def leaf(self, ca: Pair, name: str, names=("127.0.0.1", "localhost"), client: bool = False,
             dates: tuple[str, str] | None = None, key: Path | None = None, chain: bool = True) -> Pair:
        """A certificate for `names` (IP literals become IP SANs) signed by `ca`; a client
        certificate (clientAuth, subject CN=name) when `client`. `dates` ("YYYYMMDDHHMMSSZ",
        "YYYYMMDDHHMMSSZ") gives an explicit validity window (e.g. one that has ended);
        `key` reuses a key; `chain` appends the CA to the certificate file."""
        key = key or self.key(name)
        csr = self.dir / f"{name}.csr"
        cert = self.dir / f"{name}.pem"
        common = name if client else names[0]
        openssl("req", "-new", "-key", str(key), "-subj", f"/CN={common}", "-out", str(csr),
                "-config", str(self._extensions(name + "-req", [])))
        sans = ",".join(("IP:" if _is_ip(n) else "DNS:") + n for n in names)
        lines = ["basicConstraints = CA:FALSE", "keyUsage = critical,digitalSignature",
                 f"extendedKeyUsage = {'clientAuth' if client else 'serverAuth'}",
                 "subjectKeyIdentifier = hash", "authorityKeyIdentifier = keyid"]
        if not client:
            lines.append(f"subjectAltName = {sans}")
        ext = self._extensions(name, lines)
        serial = secrets.randbits(63) | (1 << 62)
        if dates is None:
            openssl("x509", "-req", "-in", str(csr), "-CA", str(ca.cert), "-CAkey", str(ca.key),
                    "-set_serial", str(serial), "-days", "30", "-sha256", "-extfile", str(ext),
                    "-extensions", "ext", "-out", str(cert))
        else:
            self._sign_with_dates(ca, csr, cert, ext, serial, dates)
        if chain:
            cert.write_text(cert.read_text() + ca.cert.read_text())
        return Pair(cert, key, serial=f"{serial:X}", subject=f"CN={common}")

    def _sign_with_dates(self, ca: Pair, csr: Path, cert: Path, ext: Path, serial: int, dates) -> None:
        """`openssl x509` has no start and end dates (only -days from now); `openssl ca` has."""
        db = self.dir / f"{cert.stem}-ca-db"
        db.mkdir()
        (db / "index.txt").write_text("")
        (db / "serial").write_text(f"{serial:X}\n" if len(f"{serial:X}") % 2 == 0 else f"0{serial:X}\n")
        conf = db / "ca.cnf"
        conf.write_text(f"[ca]\ndefault_ca = d\n[d]\ndatabase = {db}/index.txt\nnew_certs_dir = {db}\n"
                        f"serial = {db}/serial\ndefault_md = sha256\npolicy = p\nunique_subject = no\n"
                        "[p]\ncommonName = supplied\n")
        openssl("ca", "-batch", "-notext", "-config", str(conf), "-cert", str(ca.cert), "-keyfile", str(ca.key),
                "-in", str(csr), "-startdate", dates[0], "-enddate", dates[1], "-extfile", str(ext),
                "-extensions", "ext", "-out", str(cert))

    def _extensions(self, name: str, lines: list[str]) -> Path:
        path = self.dir / f"{name}.cnf"
        path.write_text("[req]\ndistinguished_name = dn\n[dn]\n[ext]\n" + "".join(line + "\n" for line in lines))
        return path


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def tls_listener(pair: Pair | None = None, name: str = "main", local_ca: bool = False, **tls) -> dict:
    """A listener with `tls` from a certificate pair (or `local_ca: true`); more `tls` keys
    (handshake_timeout) as keyword arguments. No `listen`: the launcher gives it a port."""
    settings = {"local_ca": True} if local_ca else {"cert_file": str(pair.cert), "key_file": str(pair.key)}
    settings.update(tls)
    return {"name": name, "tls": settings}


def client_context(ca: Path, cert: Pair | None = None) -> ssl.SSLContext:
    """What a careful client does: verify the server against `ca` and check its name."""
    context = ssl.create_default_context(cafile=str(ca))
    if cert is not None:
        context.load_cert_chain(str(cert.cert), str(cert.key))
    return context


def https(port: int, ca: Path, timeout: float = 10.0) -> http.client.HTTPSConnection:
    return http.client.HTTPSConnection("127.0.0.1", port, context=client_context(ca), timeout=timeout)


def get(conn: http.client.HTTPSConnection, target: str) -> tuple[int, bytes]:
    conn.request("GET", target)
    answer = conn.getresponse()
    return answer.status, answer.read()


def peer_serial(conn: http.client.HTTPSConnection) -> str:
    return conn.sock.getpeercert()["serialNumber"].lstrip("0")


def s_client(port: int, *args: str, request: bytes | None = None, timeout: float = 15.0) -> subprocess.CompletedProcess:
    """`openssl s_client` to the port; with `request` it sends that and waits for the server
    to close (-ign_eof), so that TLS 1.3 session tickets, which come after the handshake,
    are read; without, it only shakes hands."""
    argv = ["openssl", "s_client", "-connect", f"127.0.0.1:{port}", *args]
    if request is not None:
        argv.append("-ign_eof")
    return subprocess.run(argv, input=request or b"", capture_output=True, timeout=timeout)


def output(done: subprocess.CompletedProcess) -> str:
    return (done.stdout + done.stderr).decode(errors="replace")


# The start of a ClientHello: a TLS handshake record header announcing 512 bytes, then the
# handshake header and the first bytes of the hello. A client that stops here has sent
# "half a ClientHello".
HALF_CLIENT_HELLO = bytes([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03]) + os.urandom(16)


def raw(port: int, timeout: float = 10.0) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (a reset counts as closed); raises
    socket.timeout if it neither answers nor closes in the socket's timeout."""
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


def nss_home(home: Path, ca: Path) -> Path:
    """A HOME whose NSS database (`.pki/nssdb`, where Chromium on Linux looks) trusts `ca` to
    identify web sites, made with certutil (Debian's libnss3-tools) as a person would."""
    db = home / ".pki" / "nssdb"
    db.mkdir(parents=True, exist_ok=True)
    for args in (["-N", "--empty-password"], ["-A", "-t", "C,,", "-n", "latchkey", "-i", str(ca)]):
        done = subprocess.run(["certutil", "-d", f"sql:{db}", *args], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, f"certutil {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return home


class HTTPSTestServer:
    """A threaded HTTPS server on 127.0.0.1 with a CA of its own (`ca`), whose certificate
    names `localhost` and 127.0.0.1: an upstream a route reaches with `ca_file`. Subclasses
    give the handler class and set what it reads on `self.server` before `start()`."""

    def __init__(self, certs: Certs, handler, ca_name: str):
        from http.server import ThreadingHTTPServer

        self.ca = certs.ca(ca_name)
        pair = certs.leaf(self.ca, ca_name.removesuffix("-ca"), names=("localhost", "127.0.0.1"))
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(pair.cert), str(pair.key))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.server.seen = []
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]

    def start(self) -> None:
        import threading

        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"https://localhost:{self.port}"

    @property
    def seen(self) -> list[dict]:
        return self.server.seen

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
