"""Process lifecycle: start on an ephemeral port, Unix-socket and several listeners,
graceful shutdown on SIGTERM/SIGINT with in-flight requests finishing, SIGPIPE."""

import os
import signal
import socket
import time

import pytest

from httpraw import Conn
from support import TOKEN, Background, config, free_port, wait_until


def test_listen_port_zero_logs_bound_address(latchkey, upstream):
    p = latchkey.quick(upstream.url, listen="127.0.0.1:0", wait=False)
    line = p.wait_log(r"listening", timeout=30)
    assert line, f"no `listening` log line:\n{p.log()}"
    addrs = [a for a in p.listening_addresses_from_log() if not a.endswith(":0")]
    assert addrs, f"`listening` line without address=HOST:PORT: {line}"
    host, _, port = addrs[0].rpartition(":")
    p.addresses["main"] = (host, int(port))
    assert wait_until(lambda: p.alive() and _connects(p.address), 10)
    r = p.get("/echo")
    assert r.status == 200, r
    assert [v for k, v in r.json()["headers"] if k.lower() == "authorization"] == [f"Bearer {TOKEN}"]


def _connects(addr) -> bool:
    try:
        socket.create_connection(addr, timeout=1).close()
        return True
    except OSError:
        return False


def test_unix_socket_listener(latchkey, upstream, tmp_path):
    sock_path = str(tmp_path / "lk.sock")
    p = latchkey.serve(config(upstream.url, listeners=[{"name": "main", "listen": f"unix:{sock_path}"}]))
    with Conn(sock_path) as c:
        for i in range(3):
            c.request("GET", f"/echo?i={i}", host="localhost")
            r = c.read_response()
            assert r.status == 200, r
            seen = r.json()
            assert [v for k, v in seen["headers"] if k.lower() == "authorization"] == [f"Bearer {TOKEN}"]
    assert p.stop() == 0
    assert not os.path.exists(sock_path), "the Unix socket file should be removed at shutdown"


def test_unix_socket_replaces_stale_file(latchkey, upstream, tmp_path):
    sock_path = tmp_path / "stale.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock_path))
    s.close()  # a socket file left behind by a crashed process
    p = latchkey.serve(config(upstream.url, listeners=[{"name": "main", "listen": f"unix:{sock_path}"}]))
    with Conn(str(sock_path)) as c:
        c.request("GET", "/echo", host="localhost")
        assert c.read_response().status == 200


def test_tcp_and_unix_listeners_together(latchkey, upstream, tmp_path):
    sock_path = str(tmp_path / "both.sock")
    port = free_port()
    p = latchkey.serve(config(upstream.url, listeners=[
        {"name": "tcp", "listen": f"127.0.0.1:{port}"}, {"name": "unix", "listen": f"unix:{sock_path}"}]))
    assert p.get("/echo", listener="tcp").status == 200
    assert p.get("/echo", listener="unix", host="localhost").status == 200


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_idle_exits_zero(proxy, upstream, sig):
    assert proxy.get("/echo").status == 200
    t0 = time.monotonic()
    assert proxy.stop(sig) == 0, proxy.log_tail()
    assert time.monotonic() - t0 < 10


def test_sigterm_lets_in_flight_request_finish(proxy, upstream):
    c = proxy.conn(timeout=30)
    c.request("GET", "/slow?delay=2", host=proxy.host_header)
    assert upstream.wait_for_request(endpoint="slow", timeout=10)
    proxy.send_signal(signal.SIGTERM)
    r = c.read_response(timeout=30)
    assert r.status == 200, r
    assert r.json()["path"] == "/slow"
    assert proxy.wait_exit(20) == 0, proxy.log_tail()
    c.close()


def test_sigterm_lets_streaming_response_finish(proxy, upstream):
    c = proxy.conn(timeout=30)
    c.request("GET", "/stream?n=5&interval=0.4", host=proxy.host_header)
    head = c.read_head()
    assert head.status == 200
    proxy.send_signal(signal.SIGTERM)
    r = c.read_body(head, timeout=30)
    assert r.complete, f"the stream was cut at shutdown after {len(r.body)} bytes"
    body = r.body
    assert bytes(body).count(b"chunk ") == 5
    assert proxy.wait_exit(20) == 0, proxy.log_tail()
    c.close()


def test_sigterm_stops_accepting(proxy, upstream):
    c = proxy.conn(timeout=30)
    c.request("GET", "/slow?delay=3", host=proxy.host_header)
    assert upstream.wait_for_request(endpoint="slow", timeout=10)
    proxy.send_signal(signal.SIGTERM)

    def refused():
        try:
            s = socket.create_connection(proxy.address, timeout=1)
        except OSError:
            return True
        s.close()
        return False

    assert wait_until(refused, 2.5), "still accepting new connections after SIGTERM"
    assert c.read_response(timeout=30).status == 200
    assert proxy.wait_exit(20) == 0
    c.close()


def test_sigterm_closes_idle_keepalive_connections(proxy, upstream):
    c = proxy.conn(timeout=30)
    c.request("GET", "/echo", host=proxy.host_header)
    assert c.read_response().status == 200
    t0 = time.monotonic()
    proxy.send_signal(signal.SIGTERM)
    assert proxy.wait_exit(15) == 0, "an idle keep-alive client kept the proxy from exiting"
    assert time.monotonic() - t0 < 10
    c.close()


def test_grace_period_bounds_shutdown(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, server={"grace_period": "1s"}))
    c = p.conn(timeout=30)
    c.request("GET", "/hold", host=p.host_header)
    assert upstream.wait_for_request(endpoint="hold", timeout=10)
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    rc = p.wait_exit(15)
    elapsed = time.monotonic() - t0
    assert rc is not None, "did not exit after the grace period"
    assert elapsed < 8, f"exit took {elapsed:.1f}s with a 1s grace period"
    assert rc == 0, f"exit status {rc} after the grace period"
    c.close()


def test_sigpipe_does_not_kill(proxy, upstream):
    """Clients that vanish while a large response is being written (RST) must not kill it."""
    for _ in range(5):
        c = proxy.conn()
        c.request("GET", "/big?bytes=20000000", host=proxy.host_header)
        c.read_head()
        c.sock.recv(1000)
        c.reset()
    for _ in range(5):
        c = proxy.conn()
        c.request("GET", "/stream?n=5&interval=0.1", host=proxy.host_header)
        c.close()
    time.sleep(0.5)
    assert proxy.alive(), f"latchkey died: {proxy.proc.returncode}\n{proxy.log_tail()}"
    assert proxy.get("/echo").status == 200


def test_two_instances_same_port_second_fails(latchkey, upstream):
    port = free_port()
    first = latchkey.quick(upstream.url, listen=f"127.0.0.1:{port}")
    second = latchkey.quick(upstream.url, listen=f"127.0.0.1:{port}", wait=False)
    rc = second.wait_exit(20)
    assert rc is not None and rc != 0, "a second instance on a busy port should fail, not share it"
    assert "address" in second.log().lower() or "in use" in second.log().lower(), second.log()
    assert first.get("/echo").status == 200
