"""Forward-proxy listeners (`mode: forward`) through the real binary: clients that honour a
proxy setting call https://api.test/… — a name that does not resolve, so only the proxy
can reach the upstream — and receive the route's credential; CONNECT is intercepted with
a certificate of the local CA for that name; other hosts are refused naming the host;
Proxy-Authorization is required; `allow:` rules; a client that pins its own CA fails its
handshake with a log line naming the host."""

from __future__ import annotations

import base64
import http.client
import json
import socket
import ssl
import subprocess
import urllib.request

import pytest
import requests

from forward_support import HOST, PROXY_SECRET, ApiServer, forward_config, local_ca, proxy_url
from support import TOKEN, json_lines, wait_until
from tls_support import Certs


@pytest.fixture
def api(tmp_path):
    server = ApiServer(Certs(tmp_path / "pki"))
    yield server
    server.close()


def curl(p, latchkey, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["curl", "-sS", "--proxy", proxy_url(p), "--cacert", str(local_ca(latchkey)), *args],
                          capture_output=True, text=True, timeout=30)


def connect(p, target: str, secret: str | None = PROXY_SECRET) -> tuple[socket.socket, bytes]:
    """A raw CONNECT; returns the socket and the proxy's answer head (and body, if any)."""
    sock = socket.create_connection(p.address, timeout=10)
    auth = f"Proxy-Authorization: Basic {base64.b64encode(f'latchkey:{secret}'.encode()).decode()}\r\n" if secret else ""
    sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n{auth}\r\n".encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(4096)
        if not chunk:
            break
        answer += chunk
    if b"Content-Length" in answer:
        head, _, body = answer.partition(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        while len(body) < length:
            body += sock.recv(4096)
        answer = head + b"\r\n\r\n" + body
    return sock, answer


def test_curl_gets_the_credential_through_an_intercepted_tunnel(latchkey, api):
    p = latchkey.serve(forward_config(api))
    done = curl(p, latchkey, f"https://{HOST}/repos/x?page=2")
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["path"] == "/repos/x?page=2"
    assert seen["headers"]["Authorization"] == f"Bearer {TOKEN}"
    # The proxy's own secret never travels upstream.
    assert not any(name.lower() == "proxy-authorization" for name in seen["headers"])
    lines = [line for line in json_lines(p.log()) if line.get("method") in ("CONNECT", "GET")]
    assert any(line.get("method") == "CONNECT" and line.get("status") == 200 for line in lines), p.log_tail()


def test_python_urllib_and_requests_through_the_proxy(latchkey, api):
    p = latchkey.serve(forward_config(api))
    context = ssl.create_default_context(cafile=str(local_ca(latchkey)))
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"https": proxy_url(p)}),
                                         urllib.request.HTTPSHandler(context=context))
    with opener.open(f"https://{HOST}/urllib", timeout=10) as answer:
        assert json.load(answer)["headers"]["Authorization"] == f"Bearer {TOKEN}"

    session = requests.Session()
    session.trust_env = False
    session.proxies = {"https": proxy_url(p), "http": proxy_url(p)}
    session.verify = str(local_ca(latchkey))
    for n in range(3):
        answer = session.post(f"https://{HOST}/requests/{n}", json={"n": n}, timeout=10)
        assert answer.status_code == 200
        assert answer.json()["headers"]["Authorization"] == f"Bearer {TOKEN}"
        assert json.loads(answer.json()["body"]) == {"n": n}
    # Plain http:// through the proxy is absolute-form: the same route, the same credential.
    answer = session.get(f"http://{HOST}/plain", timeout=10)
    assert answer.status_code == 200 and answer.json()["headers"]["Authorization"] == f"Bearer {TOKEN}"
    assert answer.json()["path"] == "/plain"


def test_requests_inside_a_tunnel_keep_their_connection(latchkey, api):
    p = latchkey.serve(forward_config(api))
    host, port = p.address
    conn = http.client.HTTPSConnection(host, port, context=ssl.create_default_context(cafile=str(local_ca(latchkey))), timeout=10)
    conn.set_tunnel(HOST, 443, headers={"Proxy-Authorization": "Basic " + base64.b64encode(f"x:{PROXY_SECRET}".encode()).decode()})
    for n in range(5):
        conn.request("GET", f"/kept/{n}")
        answer = conn.getresponse()
        assert answer.status == 200 and json.loads(answer.read())["path"] == f"/kept/{n}"
    conn.close()
    connects = [line for line in json_lines(p.log()) if line.get("method") == "CONNECT"]
    assert len(connects) == 1


def test_other_hosts_are_refused_naming_the_host(latchkey, api):
    p = latchkey.serve(forward_config(api))
    sock, answer = connect(p, "example.com:443")
    sock.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 403"), answer
    document = json.loads(body)
    assert document["error"] == "host_not_allowed" and document["host"] == "example.com"

    done = subprocess.run(["curl", "-sS", "--proxy", proxy_url(p), "-o", "/dev/null", "-w", "%{http_code}", "http://example.com/x"],
                          capture_output=True, text=True, timeout=30)
    assert done.stdout == "403"


def test_proxy_authorization_is_required(latchkey, api):
    p = latchkey.serve(forward_config(api))
    for secret in (None, "wrong"):
        sock, answer = connect(p, f"{HOST}:443", secret=secret)
        sock.close()
        assert answer.startswith(b"HTTP/1.1 407"), answer
        assert b'Proxy-Authenticate: Basic realm="latchkey"' in answer
    done = curl(p, latchkey, "-o", "/dev/null", "-w", "%{http_code}", f"http://{HOST}/x")
    assert done.stdout == "200"
    done = subprocess.run(["curl", "-sS", "--proxy", proxy_url(p, "wrong"), "-o", "/dev/null", "-w", "%{http_code}", f"http://{HOST}/x"],
                          capture_output=True, text=True, timeout=30)
    assert done.stdout == "407"
    assert api.seen == [] or all(s["path"] == "/x" for s in api.seen)


def test_allow_rules_limit_what_a_route_forwards(latchkey, api):
    p = latchkey.serve(forward_config(api, route={"allow": [{"method": "GET", "path": "/repos/**"}]}))
    assert curl(p, latchkey, "-o", "/dev/null", "-w", "%{http_code}", f"https://{HOST}/repos/a/b").stdout == "200"
    refused = curl(p, latchkey, "-X", "DELETE", f"https://{HOST}/repos/a/b")
    assert json.loads(refused.stdout)["error"] == "not_allowed"
    assert curl(p, latchkey, "-o", "/dev/null", "-w", "%{http_code}", f"https://{HOST}/admin").stdout == "403"
    assert [s["path"] for s in api.seen] == ["/repos/a/b"]


def test_a_client_that_pins_its_own_ca_fails_and_the_log_names_the_host(latchkey, api):
    p = latchkey.serve(forward_config(api))
    sock, answer = connect(p, f"{HOST}:443")
    assert answer.startswith(b"HTTP/1.1 200"), answer
    pinned = ssl.create_default_context(cafile=str(api.ca.cert))  # trusts the real upstream's CA only
    with pytest.raises(ssl.SSLCertVerificationError):
        pinned.wrap_socket(sock, server_hostname=HOST)
    sock.close()
    line = p.wait_log("intercepted tls handshake failed")
    assert line is not None, p.log_tail()
    record = json.loads(line)
    assert record["level"] == "warning" and record["host"] == HOST and record["reason"] == "certificate_refused", record
    assert "local CA" in record["hint"]


def test_a_silent_relayed_tunnel_is_closed_at_the_tunnel_idle_timeout(latchkey, api):
    from tunnel_support import EchoServer, machine_address
    address = machine_address()
    echo = EchoServer(address)
    try:
        p = latchkey.serve(forward_config(api, listener={"tunnel": [address]}, limits={"tunnel_idle_timeout": "1s"}))
        sock, answer = connect(p, echo.authority)
        assert answer.startswith(b"HTTP/1.1 200"), answer
        sock.sendall(b"ping")
        assert sock.recv(16) == b"ping"
        sock.settimeout(10)
        assert sock.recv(16) == b"", "the proxy closes a tunnel silent both ways"
        sock.close()
        line = wait_until(lambda: next((r for r in json_lines(p.log()) if r.get("method") == "CONNECT"), None))
        assert line["outcome"] == "relay_idle" and line["bytes_in"] == 4 and line["bytes_out"] == 4, line
    finally:
        echo.close()
