"""WebSockets through a forward listener, with the real binary: `wss://api.test/…` with
websockets' own proxy support (a CONNECT that Latchkey intercepts with a leaf of its local
CA; the handshake and the stream go inside the tunnel) and with a CONNECT made by hand and
its socket handed to the client; `ws://api.test/…` (a CONNECT to port 80 with plain HTTP
inside); the route's credential on the handshake, never the proxy's secret; SIGTERM's close
frames inside the TLS tunnel; a refused token renewed on a handshake inside the tunnel;
a child of `latchkey exec` that finds the proxy and the trust in its environment. The
upstream is a plain WebSocket server on 127.0.0.1 behind the route for api.test, a name
that does not resolve, so only Latchkey can reach it."""

from __future__ import annotations

import base64
import os
import signal
import socket
import ssl
import sys
import textwrap

import pytest
from websockets.exceptions import ConnectionClosed

from exec_support import run_exec
from forward_support import HOST, PROXY_SECRET, local_ca, proxy_url
from support import TOKEN, bearer, json_lines, wait_until
from test_oauth import password_identity
from test_websocket_renewal import checked_by
from websocket_support import MAX_SIZE, AsyncioClient, make_ws_server, ws_server  # noqa: F401 (fixtures)


def forward_ws_config(server) -> dict:
    route = {"name": "api", "host": HOST, "path": "/", "upstream": server.url, "inject": [bearer()]}
    listener = {"name": "fwd", "mode": "forward", "inbound": {"proxy_auth": {"value": PROXY_SECRET}}}
    return {"listeners": [listener], "credentials": {"api": {"value": TOKEN}}, "routes": [route],
            "logging": {"format": "json"}}


def trusting_local_ca(latchkey) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(local_ca(latchkey)))


def via_proxy(p, latchkey, url: str, **kw):
    """websockets' client with `proxy=`: it sends the CONNECT itself (for ws:// too). The
    asyncio one (`AsyncioClient` says why not the sync one over TLS)."""
    if url.startswith("wss:"):
        kw.setdefault("ssl", trusting_local_ca(latchkey))
    return AsyncioClient(url, proxy=proxy_url(p), max_size=MAX_SIZE, compression=None, ping_interval=None,
                         open_timeout=15, **kw)


def exchange(ws, label: str) -> None:
    data = os.urandom(1 << 20)
    ws.send(data)
    assert ws.recv(timeout=20) == data
    for n in range(300):
        ws.send(f"{label} {n}")
        assert ws.recv(timeout=10) == f"{label} {n}"


def upgrade_lines(p) -> list[dict]:
    return [line for line in json_lines(p.log()) if line.get("status") == 101]


def connect_statuses(p):
    """The statuses of the CONNECT lines, once there is one: a tunnel's line is written when
    it ends, which may be after the client has seen the end."""
    def statuses():
        connects = [line for line in json_lines(p.log()) if line.get("method") == "CONNECT"]
        return [line.get("status") for line in connects] or None
    return wait_until(statuses)


def test_wss_through_the_proxy_is_intercepted_and_gets_the_credential(latchkey, ws_server):
    p = latchkey.serve(forward_ws_config(ws_server))
    with via_proxy(p, latchkey, f"wss://{HOST}/live?room=7",
                   additional_headers={"Authorization": "Bearer the-clients-own"}) as ws:
        exchange(ws, "wss")
        ws.close(4001, "done with wss")
    session = ws_server.wait_session()
    assert session.path == "/live?room=7"
    assert [v for k, v in session.headers if k.lower() == "authorization"] == [f"Bearer {TOKEN}"]
    assert not any(k.lower() == "proxy-authorization" for k, _ in session.headers)
    assert session.wait_ended() and session.close_code == 4001
    assert wait_until(lambda: upgrade_lines(p)), p.log_tail()
    [line] = upgrade_lines(p)
    assert line["outcome"] == "upgrade_closed" and line["route"] == "api"
    assert line["bytes_in"] > 1 << 20 and line["bytes_out"] > 1 << 20
    assert connect_statuses(p) == [200], p.log_tail()


def test_wss_over_a_connect_made_by_hand(latchkey, ws_server):
    p = latchkey.serve(forward_ws_config(ws_server))
    sock = socket.create_connection(p.address, timeout=10)
    auth = base64.b64encode(f"latchkey:{PROXY_SECRET}".encode()).decode()
    sock.sendall(f"CONNECT {HOST}:443 HTTP/1.1\r\nHost: {HOST}:443\r\nProxy-Authorization: Basic {auth}\r\n\r\n".encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(4096)
        assert chunk, f"the proxy closed after {answer!r}"
        answer += chunk
    assert answer.startswith(b"HTTP/1.1 200"), answer
    with AsyncioClient(f"wss://{HOST}/by-hand", sock=sock, ssl=trusting_local_ca(latchkey), server_hostname=HOST,
                       max_size=MAX_SIZE, compression=None, ping_interval=None, open_timeout=15) as ws:
        exchange(ws, "by hand")
    session = ws_server.wait_session()
    assert session.header("Authorization") == f"Bearer {TOKEN}"
    assert session.wait_ended() and session.close_code == 1000


def test_ws_through_the_proxy_is_plain_http_inside_a_connect_to_port_80(latchkey, ws_server):
    p = latchkey.serve(forward_ws_config(ws_server))
    with via_proxy(p, latchkey, f"ws://{HOST}/plain-inside",
                   additional_headers={"Authorization": "Bearer the-clients-own"}) as ws:
        exchange(ws, "ws")
    session = ws_server.wait_session()
    assert session.path == "/plain-inside"
    assert [v for k, v in session.headers if k.lower() == "authorization"] == [f"Bearer {TOKEN}"]
    assert session.wait_ended() and session.close_code == 1000
    assert connect_statuses(p) == [200], p.log_tail()


def test_a_host_without_a_route_gets_no_websocket(latchkey, ws_server):
    p = latchkey.serve(forward_ws_config(ws_server))
    with pytest.raises(Exception) as refused:
        via_proxy(p, latchkey, "wss://other.test/live")
    assert "403" in str(refused.value), repr(refused.value)
    assert ws_server.handshakes == []


def test_sigterm_sends_1001_inside_the_tls_tunnel(latchkey, ws_server):
    p = latchkey.serve(forward_ws_config(ws_server))
    with via_proxy(p, latchkey, f"wss://{HOST}/held") as ws:
        ws.send("before the signal")
        assert ws.recv(timeout=10) == "before the signal"
        p.send_signal(signal.SIGTERM)
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=15)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001, closed.value
    session = ws_server.wait_session()
    assert session.wait_ended() and session.close_code == 1001
    assert p.wait_exit(15) == 0, p.log_tail()
    assert upgrade_lines(p)[0]["outcome"] == "upgrade_shutdown"


def test_an_expired_token_is_renewed_on_a_handshake_inside_the_tunnel(latchkey, make_idp, make_ws_server):
    idp = make_idp(access_token_seconds=3600)
    server = make_ws_server(check=checked_by(idp))
    cfg = forward_ws_config(server)
    cfg["routes"][0]["inject"] = [{"header": "Authorization", "value": "Bearer {access_token}", "identity": "idp"}]
    cfg["credentials"] = {}
    cfg["identities"] = {"idp": password_identity(idp)}
    p = latchkey.serve(cfg)
    with via_proxy(p, latchkey, f"wss://{HOST}/first") as ws:
        ws.send("first")
        assert ws.recv(timeout=10) == "first"
    idp.reset_counters()
    idp.expire_access_tokens()
    with via_proxy(p, latchkey, f"wss://{HOST}/after-expiry") as ws:
        ws.send("renewed")
        assert ws.recv(timeout=10) == "renewed"
    assert idp.token_requests("refresh_token") == 1 and idp.token_requests() == 1
    assert [h.status for h in server.upgrade_handshakes()] == [101, 401, 101]


def test_upgrade_idle_timeout_inside_the_tunnel(latchkey, ws_server):
    cfg = forward_ws_config(ws_server)
    cfg["limits"] = {"upgrade_idle_timeout": "1s"}
    p = latchkey.serve(cfg)
    with via_proxy(p, latchkey, f"wss://{HOST}/silent") as ws:
        ws.send("once")
        assert ws.recv(timeout=10) == "once"
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=10)
    assert wait_until(lambda: upgrade_lines(p)), p.log_tail()
    assert upgrade_lines(p)[0]["outcome"] == "upgrade_idle"
    assert upgrade_lines(p)[0].get("host") in (None, HOST)


def test_a_child_of_exec_opens_wss_with_the_environments_proxy_and_trust(latchkey, ws_server):
    """websockets reads HTTPS_PROXY (proxy=True, its default) and Python's ssl the bundle in
    SSL_CERT_FILE: a child of `latchkey exec` needs no setting of its own. The asyncio
    client, as `AsyncioClient` says why."""
    child = [sys.executable, "-c", textwrap.dedent(f"""
        import asyncio
        from websockets.asyncio.client import connect

        async def main():
            async with connect("wss://{HOST}/from-exec", open_timeout=20) as ws:
                await ws.send("from a child of exec")
                print(await asyncio.wait_for(ws.recv(), 20))
        asyncio.run(main())
    """)]
    cfg = forward_ws_config(ws_server)
    cfg["listeners"][0].pop("inbound")  # exec sets its own proxy password
    done = run_exec(latchkey, child, cfg=cfg)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "from a child of exec"
    session = ws_server.wait_session()
    assert session.path == "/from-exec"
    assert session.header("Authorization") == f"Bearer {TOKEN}"
