"""TLS listeners (`tls: {cert_file, key_file}`) through the real binary, with certificates the
`openssl` CLI makes (ECDSA P-256) and the clients people use: curl, Python's ssl/urllib,
`openssl s_client` (versions, ALPN, resumption). Certificate files replaced while a
kept-alive connection is open; mTLS (`inbound.client_ca_file`); handshakes that stall, stop
half-way or are not TLS at all; the handshake metric and the failure log (once per client,
no key material); and `latchkey check` on broken certificate files."""

import json
import re
import socket
import ssl
import subprocess
import time
import urllib.request

import pytest

from support import TOKEN, config, wait_until
from tls_support import (HALF_CLIENT_HELLO, Certs, Pair, get, https, output, peer_serial, raw, read_until_closed, s_client,
                         tls_listener)



def request(port: int) -> bytes:
    """What s_client sends once the handshake is done."""
    return f"GET /echo/s-client HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()


@pytest.fixture
def certs(tmp_path):
    return Certs(tmp_path / "pki")


@pytest.fixture
def ca(certs):
    return certs.ca("ca")


@pytest.fixture
def server_cert(certs, ca):
    return certs.leaf(ca, "server")


def serve_tls(latchkey, upstream, listener: dict, **top):
    proxy = latchkey.serve(config(upstream.url, listeners=[listener], **top))
    return proxy, proxy.port


def handshakes(port: int, ca, outcome: str, listener: str = "main") -> float:
    """latchkey_tls_handshakes_total{listener, outcome} from /.latchkey/metrics, over TLS."""
    conn = https(port, ca.cert)
    status, body = get(conn, "/.latchkey/metrics")
    conn.close()
    assert status == 200, body
    found = re.search(rf'^latchkey_tls_handshakes_total\{{listener="{listener}",outcome="{outcome}"\}} (\S+)$',
                      body.decode(), re.M)
    return float(found.group(1)) if found else 0.0


def failure_lines(proxy, reason: str) -> list[str]:
    return [line for line in proxy.log_lines() if "tls handshake failed" in line and reason in line]


# ----- clients ---------------------------------------------------------------------------------

def test_curl_with_cacert_gets_the_upstream_with_the_credential(latchkey, upstream, ca, server_cert):
    _, port = serve_tls(latchkey, upstream, tls_listener(server_cert))
    done = subprocess.run(["curl", "-sS", "--cacert", str(ca.cert), "-w", "\n%{http_code} %{http_version}",
                           f"https://127.0.0.1:{port}/echo/curl"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    body, status = done.stdout.rsplit("\n", 1)
    assert status == "200 1.1", done.stdout  # ALPN: HTTP/1.1, although curl offers h2 first
    echoed = json.loads(body)
    assert echoed["path"] == "/echo/curl"
    assert ["Authorization", f"Bearer {TOKEN}"] in echoed["headers"]
    # Without the CA, curl refuses the proxy's certificate.
    untrusted = subprocess.run(["curl", "-sS", f"https://127.0.0.1:{port}/echo/curl"], capture_output=True,
                               text=True, timeout=30)
    assert untrusted.returncode == 60, untrusted  # CURLE_PEER_FAILED_VERIFICATION


def test_python_urllib_with_a_context_trusting_the_ca(latchkey, upstream, ca, server_cert):
    _, port = serve_tls(latchkey, upstream, tls_listener(server_cert))
    context = ssl.create_default_context(cafile=str(ca.cert))
    with urllib.request.urlopen(f"https://127.0.0.1:{port}/echo/urllib?x=1", context=context, timeout=10) as answer:
        assert answer.status == 200
        assert json.load(answer)["query"] == "x=1"
    # The name is checked: the certificate is for 127.0.0.1 and localhost, not for another name.
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        with pytest.raises(ssl.SSLCertVerificationError):
            context.wrap_socket(sock, server_hostname="example.com")


def test_openssl_s_client_versions_and_alpn(latchkey, upstream, ca, server_cert):
    _, port = serve_tls(latchkey, upstream, tls_listener(server_cert))
    verify = ("-CAfile", str(ca.cert), "-verify_return_error")

    # TLS 1.1 is refused by the server (the client is allowed it at security level 0).
    old = s_client(port, *verify, "-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0")
    assert old.returncode != 0 and "protocol version" in output(old), output(old)
    for version in ("1_2", "1_3"):
        done = s_client(port, *verify, f"-tls{version}", request=request(port))
        text = output(done)
        assert done.returncode == 0 and f"Protocol  : TLSv{version.replace('_', '.')}" in text, text
        assert "Verify return code: 0 (ok)" in text and "HTTP/1.1 200" in text, text

    alpn = s_client(port, *verify, "-alpn", "http/1.1", request=request(port))
    assert "ALPN protocol: http/1.1" in output(alpn) and "HTTP/1.1 200" in output(alpn), output(alpn)
    both = s_client(port, *verify, "-alpn", "h2,http/1.1", request=request(port))
    assert "ALPN protocol: http/1.1" in output(both), output(both)
    h2 = s_client(port, *verify, "-alpn", "h2")
    assert h2.returncode != 0 and "no application protocol" in output(h2), output(h2)

    assert handshakes(port, ca, "protocol_version") == 1


@pytest.mark.parametrize("version", ["1_2", "1_3"])
def test_sessions_resume(latchkey, upstream, ca, server_cert, tmp_path, version):
    _, port = serve_tls(latchkey, upstream, tls_listener(server_cert))
    session = tmp_path / f"session-{version}.pem"
    args = ("-CAfile", str(ca.cert), f"-tls{version}")
    first = s_client(port, *args, "-sess_out", str(session), request=request(port))
    assert "New, TLSv1." in output(first) and session.exists(), output(first)
    again = s_client(port, *args, "-sess_in", str(session), request=request(port))
    assert f"Reused, TLSv{version.replace('_', '.')}" in output(again), output(again)
    assert "HTTP/1.1 200" in output(again)
    assert handshakes(port, ca, "resumed") == 1


# ----- certificate files replaced while running --------------------------------------------------

def test_a_replaced_certificate_serves_new_connections_and_the_open_one_goes_on(latchkey, upstream, certs, ca,
                                                                                   server_cert):
    proxy, port = serve_tls(latchkey, upstream, tls_listener(server_cert))
    kept = https(port, ca.cert)
    assert get(kept, "/echo/before")[0] == 200
    sock = kept.sock
    assert peer_serial(kept) == server_cert.serial

    # A renewal as certbot does it: a new key and certificate, each file replaced whole.
    renewed = certs.leaf(ca, "renewed")
    for new, old in ((renewed.key, server_cert.key), (renewed.cert, server_cert.cert)):
        staged = old.with_suffix(".new")
        staged.write_bytes(new.read_bytes())
        staged.chmod(0o600)
        staged.replace(old)

    def serial_of_a_new_connection():
        conn = https(port, ca.cert)
        try:
            status, _ = get(conn, "/echo/new")
            return status == 200 and peer_serial(conn) == renewed.serial
        finally:
            conn.close()

    assert wait_until(serial_of_a_new_connection, timeout=15), proxy.log_tail()
    # The connection opened before goes on with the certificate it was made with.
    assert get(kept, "/echo/after")[0] == 200
    assert kept.sock is sock and peer_serial(kept) == server_cert.serial
    kept.close()
    assert proxy.alive()


def test_one_replacement_is_logged_once(latchkey, upstream, certs, ca, server_cert):
    """A file changed within the timestamps' granularity once counted as changed on every pass
    of the watcher: one replacement rebuilt the context and was logged 2-3 times."""
    proxy, port = serve_tls(latchkey, upstream, tls_listener(server_cert))
    renewed = certs.leaf(ca, "renewed", key=server_cert.key)
    staged = server_cert.cert.with_suffix(".new")
    staged.write_bytes(renewed.cert.read_bytes())
    staged.replace(server_cert.cert)
    replaced = lambda: [line for line in proxy.log_lines() if "tls certificate replaced" in line]
    assert wait_until(replaced, timeout=10), proxy.log_tail()
    # Given the watcher's passes (1 s) time to look at the file again, once it is no longer new.
    assert not wait_until(lambda: len(replaced()) > 1, timeout=4), "\n".join(replaced())


# ----- mTLS ---------------------------------------------------------------------------------------

def test_mtls_accepts_a_client_certificate_of_the_ca_and_refuses_others(latchkey, upstream, certs, ca, server_cert):
    clients_ca = certs.ca("clients-ca", "Clients CA")
    stranger_ca = certs.ca("stranger-ca", "Stranger CA")
    alice = certs.leaf(clients_ca, "alice-client", client=True)
    mallory = certs.leaf(stranger_ca, "mallory-client", client=True)
    listener = tls_listener(server_cert)
    listener["inbound"] = {"client_ca_file": str(clients_ca.cert)}
    proxy, port = serve_tls(latchkey, upstream, listener)
    url = f"https://127.0.0.1:{port}/echo/mtls-marker"

    def curl(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["curl", "-sS", "--cacert", str(ca.cert), "-o", "/dev/null", "-w", "%{http_code}",
                               *args, url], capture_output=True, text=True, timeout=30)

    accepted = curl("--cert", str(alice.cert), "--key", str(alice.key))
    assert accepted.returncode == 0 and accepted.stdout == "200", accepted
    line = proxy.wait_log("mtls-marker")
    assert line and "CN=alice-client" in line, proxy.log_tail()

    for refused in (curl(), curl("--cert", str(mallory.cert), "--key", str(mallory.key))):
        assert refused.returncode != 0 and refused.stdout in ("", "000"), refused
    for version in ("-tls1_2", "-tls1_3"):  # the refusal comes at once in 1.2, after the client's Finished in 1.3
        refused = s_client(port, "-CAfile", str(ca.cert), version, request=request(port))
        assert "HTTP/1.1 200" not in output(refused), output(refused)
    assert len([line for line in proxy.log_lines() if "mtls-marker" in line]) == 1
    for reason in ("no_client_certificate", "client_certificate_rejected"):
        assert proxy.wait_log(rf"tls handshake failed.*{reason}", timeout=5), proxy.log_tail()


def test_a_session_from_another_listener_does_not_pass_the_mtls_listener(latchkey, upstream, certs, ca, server_cert, tmp_path):
    """Every listener shares the process's ticket keys, and a resumed session skips the
    client certificate's check: a ticket from the open listener must not resume on the
    mTLS one."""
    clients_ca = certs.ca("clients-ca", "Clients CA")
    mesh = tls_listener(server_cert, name="mesh")
    mesh["inbound"] = {"client_ca_file": str(clients_ca.cert)}
    proxy = latchkey.serve(config(upstream.url, listeners=[tls_listener(server_cert, name="main"), mesh]))
    open_port, mesh_port = proxy.connect_address("main")[1], proxy.connect_address("mesh")[1]
    for version in ("-tls1_2", "-tls1_3"):
        session = tmp_path / f"open{version}.pem"
        first = s_client(open_port, "-CAfile", str(ca.cert), version, "-sess_out", str(session), request=request(open_port))
        assert "HTTP/1.1 200" in output(first) and session.exists(), output(first)
        again = s_client(mesh_port, "-CAfile", str(ca.cert), version, "-sess_in", str(session), request=request(mesh_port))
        assert "Reused" not in output(again) and "HTTP/1.1 200" not in output(again), output(again)


# ----- handshakes that stall, stop or are not TLS ----------------------------------------------------

@pytest.mark.parametrize("sent", [b"", HALF_CLIENT_HELLO], ids=["nothing", "half-a-client-hello"])
def test_a_stalled_handshake_is_closed_after_the_handshake_timeout(latchkey, upstream, ca, server_cert, sent):
    proxy, port = serve_tls(latchkey, upstream, tls_listener(server_cert, handshake_timeout="1s"))
    with raw(port, timeout=10) as sock:
        start = time.monotonic()
        sock.sendall(sent)
        assert read_until_closed(sock) == b""
        elapsed = time.monotonic() - start
    assert 0.8 <= elapsed < 5, elapsed
    assert wait_until(lambda: handshakes(port, ca, "timeout") == 1, timeout=5)
    assert proxy.alive()


def test_plain_http_on_a_tls_port_gets_a_plain_400(latchkey, upstream, ca, server_cert):
    proxy, port = serve_tls(latchkey, upstream, tls_listener(server_cert))
    with raw(port, timeout=10) as sock:
        sock.sendall(b"GET /echo/plain HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = read_until_closed(sock)  # a hang fails here: socket.timeout
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 "), answer
    assert re.search(rb"(?im)^connection: close$", head), answer
    error = json.loads(body)
    assert error["error"] == "plain_http_to_tls_port" and "https://" in error["message"], error
    assert not upstream.find_requests("/echo/plain")
    assert handshakes(port, ca, "plain_http") == 1


def test_truncated_client_hellos_do_not_disturb_other_clients(latchkey, upstream, ca, server_cert):
    proxy, port = serve_tls(latchkey, upstream, tls_listener(server_cert))
    kept = https(port, ca.cert)
    assert get(kept, "/echo/0")[0] == 200
    closed_before = handshakes(port, ca, "closed")  # the launcher's connection probes count too
    for i in range(20):
        with raw(port) as sock:
            sock.sendall(HALF_CLIENT_HELLO)
            if i % 2:  # half of them reset the connection instead of closing it
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        assert get(kept, f"/echo/{i + 1}")[0] == 200
    fresh = https(port, ca.cert)
    assert get(fresh, "/echo/fresh")[0] == 200
    fresh.close()
    kept.close()
    assert wait_until(lambda: handshakes(port, ca, "closed") == closed_before + 20, timeout=5), proxy.log_tail()
    assert proxy.alive()


# ----- metrics and the failure log ------------------------------------------------------------------

def test_handshakes_are_counted_and_a_failure_is_logged_once_per_client(latchkey, upstream, ca, server_cert):
    proxy, port = serve_tls(latchkey, upstream, tls_listener(server_cert))
    for _ in range(3):
        conn = https(port, ca.cert)
        assert get(conn, "/echo/counted")[0] == 200
        conn.close()
    # curl without the CA refuses the certificate with an alert: three failures, one log line.
    for _ in range(3):
        refused = subprocess.run(["curl", "-sS", f"https://127.0.0.1:{port}/echo/refused"], capture_output=True,
                                 timeout=30)
        assert refused.returncode == 60
    assert wait_until(lambda: handshakes(port, ca, "certificate_refused") == 3, timeout=5)
    # 3 for the requests and one per metrics scrape before this one, all new.
    assert handshakes(port, ca, "new") >= 4
    lines = failure_lines(proxy, "certificate_refused")
    assert len(lines) == 1, "\n".join(lines) or proxy.log_tail()
    assert "127.0.0.1" in lines[0] and "main" in lines[0], lines[0]

    for secret in server_cert.key_body() + ca.key_body():
        assert secret not in proxy.log()


# ----- check ----------------------------------------------------------------------------------------

def check(latchkey, upstream, pair) -> str:
    path = latchkey.write_config(config(upstream.url, listeners=[dict(tls_listener(pair), listen="127.0.0.1:8443")]))
    done = latchkey.run(["check", "--config", str(path)])
    assert done.returncode != 0, f"check accepted it:\n{done.stdout}{done.stderr}"
    return done.stdout + done.stderr


def test_check_names_the_broken_certificate_file(latchkey, upstream, certs, ca, server_cert):
    expired = certs.leaf(ca, "expired", dates=("20200101000000Z", "20200201000000Z"))
    assert str(expired.cert) in (text := check(latchkey, upstream, expired)) and "expired" in text, text

    other = certs.leaf(ca, "other")
    mismatched = Pair(server_cert.cert, other.key)
    text = check(latchkey, upstream, mismatched)
    assert str(other.key) in text or str(server_cert.cert) in text, text
    assert re.search(r"match|belong", text), text

    readable = certs.leaf(ca, "readable")
    readable.key.chmod(0o644)
    text = check(latchkey, upstream, readable)
    assert str(readable.key) in text and re.search(r"group|others|0?644|chmod", text), text

    truncated = certs.leaf(ca, "truncated", chain=False)
    pem = truncated.cert.read_text()
    truncated.cert.write_text(pem[: len(pem) // 2])
    assert str(truncated.cert) in (text := check(latchkey, upstream, truncated)), text
