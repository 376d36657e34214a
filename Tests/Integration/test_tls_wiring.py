"""The wiring of TLS listeners, through the real binary and curl: a listener with its own
certificate files and one with a certificate of the local CA, each reached with
`curl --cacert`; on TLS the proxy's session cookie and an upstream's cookie are Secure and
the upstream hears X-Forwarded-Proto https; the access log's `tls` and `client_subject`;
the handshake metric. (test_tls.py covers the protocol itself.)"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
from pathlib import Path

from support import TOKEN, config, json_lines, wait_until


def openssl(*args: str) -> None:
    done = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


def make_pki(directory: Path) -> dict[str, Path]:
    """A CA, a server certificate it signs for 127.0.0.1 and localhost, and a client's."""
    directory.mkdir()
    files = {name: directory / name for name in ("ca.pem", "ca.key", "server.pem", "server.key", "client.pem", "client.key")}
    p256 = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2"]
    openssl("req", "-x509", *p256, "-keyout", str(files["ca.key"]), "-out", str(files["ca.pem"]), "-subj", "/CN=wiring CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    for name, subject, extension in [("server", "/CN=localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1"),
                                     ("client", "/O=Example Org/CN=svc", "extendedKeyUsage=clientAuth")]:
        openssl("req", "-x509", *p256, "-keyout", str(files[f"{name}.key"]), "-out", str(files[f"{name}.pem"]),
                "-subj", subject, "-CA", str(files["ca.pem"]), "-CAkey", str(files["ca.key"]),
                "-addext", extension, "-addext", "basicConstraints=critical,CA:FALSE")
    for path in files.values():
        path.chmod(0o600)
    return files


def curl(proxy, path: str, cacert: Path, *extra: str) -> tuple[int, dict, str]:
    """Status, headers (lower-case names, last value) and body of `curl --cacert` over TLS."""
    host, port = proxy.connect_address()
    done = subprocess.run(["curl", "-sS", "-i", "--cacert", str(cacert), *extra, f"https://{host}:{port}{path}"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    head, _, body = done.stdout.replace("\r\n", "\n").partition("\n\n")
    lines = head.split("\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    return int(lines[0].split()[1]), headers, body


def tls_config(upstream, tls: dict, inbound: dict | None = None, **top) -> dict:
    listener = {"name": "secure", "tls": tls}
    if inbound:
        listener["inbound"] = inbound
    return config(upstream.url, listeners=[listener], logging={"format": "json"}, **top)


def handshakes(proxy, cacert: Path, outcome: str) -> float:
    _, _, body = curl(proxy, "/.latchkey/metrics", cacert)
    sample = re.search(rf'^latchkey_tls_handshakes_total\{{listener="secure",outcome="{outcome}"\}} (\S+)$', body, re.M)
    assert sample, body
    return float(sample.group(1))


def test_certificate_files(latchkey, upstream, tmp_path):
    pki = make_pki(tmp_path / "pki")
    route = {"cookies": {"drop_secure_on_loopback": True}}
    p = latchkey.serve(tls_config(upstream, {"cert_file": str(pki["server.pem"]), "key_file": str(pki["server.key"])}, route=route))

    status, _, body = curl(p, "/echo/wiring-marker", pki["ca.pem"])
    assert status == 200
    echoed = dict((name.lower(), value) for name, value in json.loads(body)["headers"])
    assert echoed["authorization"] == f"Bearer {TOKEN}"
    assert echoed["x-forwarded-proto"] == "https"

    # An upstream's Secure cookie stays Secure for a client on TLS, loopback or not.
    status, headers, _ = curl(p, "/redirect?secure=1", pki["ca.pem"])
    assert status == 302 and all("Secure" in cookie for cookie in headers["set-cookie"]), headers

    assert wait_until(lambda: any("wiring-marker" in line for line in p.log_lines()))
    record = next(r for r in json_lines(p.log()) if "wiring-marker" in r.get("path", ""))
    assert record["tls"] in ("TLSv1.3", "TLSv1.2") and "client_subject" not in record, record
    assert handshakes(p, pki["ca.pem"], "new") >= 3


def test_local_ca_and_the_secure_session_cookie(latchkey, upstream, tmp_path):
    key = tmp_path / "session.key"
    key.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
    key.chmod(0o600)
    cfg = tls_config(upstream, {"local_ca": True}, inbound={"session": {"key_file": str(key)}})
    p = latchkey.serve(cfg)
    cacert = latchkey.workdir / "state" / "latchkey" / "ca" / "ca.pem"
    assert cacert.exists()

    host, port = p.connect_address()
    cfg["listeners"][0]["listen"] = f"{host}:{port}"
    link = latchkey.run(["login-link", "api", "--config", str(latchkey.write_config(cfg))])
    assert link.returncode == 0, link.stderr
    assert link.stdout.startswith(f"https://{host}:{port}/.latchkey/login?token="), link.stdout
    status, headers, _ = curl(p, link.stdout.strip().split(f":{port}", 1)[1], cacert)
    assert status == 303, headers
    attributes = [a.strip() for a in headers["set-cookie"][0].split(";")[1:]]
    assert attributes == ["Max-Age=43200", "Path=/", "HttpOnly", "SameSite=Lax", "Secure"]


def test_client_certificate_subject_in_the_access_log(latchkey, upstream, tmp_path):
    pki = make_pki(tmp_path / "pki")
    p = latchkey.serve(tls_config(upstream, {"cert_file": str(pki["server.pem"]), "key_file": str(pki["server.key"])},
                                  inbound={"client_ca_file": str(pki["ca.pem"])}))
    status, _, _ = curl(p, "/echo/mtls-marker", pki["ca.pem"], "--cert", str(pki["client.pem"]), "--key", str(pki["client.key"]))
    assert status == 200
    assert wait_until(lambda: any("mtls-marker" in line for line in p.log_lines()))
    record = next(r for r in json_lines(p.log()) if "mtls-marker" in r.get("path", ""))
    assert record["client_subject"] == "CN=svc,O=Example Org", record

    # Without a certificate the handshake fails: counted, and logged once.
    host, port = p.connect_address()
    for _ in range(2):
        refused = subprocess.run(["curl", "-sS", "--cacert", str(pki["ca.pem"]), f"https://{host}:{port}/"],
                                 capture_output=True, text=True, timeout=30)
        assert refused.returncode != 0
    # (The launcher's connect-and-close probe at start is a failure of its own, `closed`.)
    def refusals():
        return [r for r in json_lines(p.log()) if r.get("message") == "tls handshake failed" and r.get("reason") == "no_client_certificate"]
    assert wait_until(refusals)
    assert len(refusals()) == 1 and refusals()[0]["listener"] == "secure" and refusals()[0]["peer"] == "127.0.0.1", refusals()


def test_a_reload_puts_another_certificate_in_place(latchkey, upstream, tmp_path):
    pki = make_pki(tmp_path / "pki")
    cfg = tls_config(upstream, {"cert_file": str(pki["server.pem"]), "key_file": str(pki["server.key"])})
    p = latchkey.serve(cfg)
    assert curl(p, "/echo/before", pki["ca.pem"])[0] == 200

    cfg["listeners"][0]["tls"] = {"local_ca": True}
    assert "configuration reloaded" in p.reload(cfg)
    local_ca = latchkey.workdir / "state" / "latchkey" / "ca" / "ca.pem"
    assert curl(p, "/echo/after", local_ca)[0] == 200
    host, port = p.connect_address()
    stale = subprocess.run(["curl", "-sS", "--cacert", str(pki["ca.pem"]), f"https://{host}:{port}/"],
                           capture_output=True, text=True, timeout=30)
    assert stale.returncode == 60, stale.stderr  # CURLE_PEER_FAILED_VERIFICATION

    # A handshake timeout is the listener's own: a restart changes it, a reload does not.
    cfg["listeners"][0]["tls"]["handshake_timeout"] = "3s"
    assert "configuration not reloaded" in p.reload(cfg)
