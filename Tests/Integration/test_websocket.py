"""WebSocket passthrough on a reverse route, with real peers on both sides (the `websockets`
package as client and server, websocket_support.py): messages up to 8 MiB, thousands of
round trips, pings both ways, fragmented messages, close codes both ways, the route's
credential on the handshake instead of the client's, subprotocol and extension negotiation,
a refused handshake relayed as a response, and a TLS listener."""

from __future__ import annotations

import asyncio
import os
import random
import ssl
import string

import pytest
from websockets.asyncio.client import connect as async_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from support import TOKEN, config, json_lines, wait_until
from tls_support import Certs, tls_listener
from websocket_support import MAX_SIZE, AsyncioClient, client, make_ws_server, ws_server, ws_url  # noqa: F401 (fixtures)

MiB = 1024 * 1024


def random_text(n: int) -> str:
    """n characters, some of them two or three bytes in UTF-8."""
    alphabet = string.ascii_letters + string.digits + " éü€"
    rng = random.Random(n)
    return "".join(rng.choice(alphabet) for _ in range(n))


def test_messages_up_to_8_mib_come_back_whole(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url))
    with client(p, "/echo") as ws:
        for size in (0, 1, 125, 126, 65535, 65536, MiB, 8 * MiB):
            data = os.urandom(size)
            ws.send(data)
            assert ws.recv(timeout=60) == data, f"binary message of {size} bytes"
        for size in (0, 125, 70000, 8 * MiB // 2):
            text = random_text(size)
            ws.send(text)
            assert ws.recv(timeout=60) == text, f"text message of {size} characters"
        assert len(random_text(8 * MiB // 2).encode()) > 4 * MiB
        big = "x" * (8 * MiB)
        ws.send(big)
        assert ws.recv(timeout=60) == big
    session = ws_server.wait_session()
    assert [len(m) for m in session.messages[:8]] == [0, 1, 125, 126, 65535, 65536, MiB, 8 * MiB]


def test_five_thousand_round_trips_in_order(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url))
    with client(p, "/echo") as ws:
        for n in range(5000):
            message = f"round trip {n}" if n % 2 else f"round trip {n}".encode()
            ws.send(message)
            assert ws.recv(timeout=10) == message
    session = ws_server.wait_session()
    assert len(session.messages) == 5000
    assert session.wait_ended() and session.close_code == 1000


def test_pings_both_ways(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url))
    with client(p, "/echo") as ws:
        # The client pings; the server's pong comes back through Latchkey.
        for n in range(3):
            pong = ws.ping(f"client ping {n}".encode())
            assert pong.wait(10), f"no pong for the client's ping {n}"
        # The server pings; the client's pong reaches it (websockets answers pings itself).
        ws.send("!cmd ping from-server")
        assert ws.recv(timeout=10) == "pong from-server"
        ws.send("after the pings")
        assert ws.recv(timeout=10) == "after the pings"
    assert ws_server.wait_session().pongs == [b"from-server"]


async def _fragmented_round_trip(url: str, fragments: list):
    async def pieces():
        for piece in fragments:
            yield piece
            await asyncio.sleep(0.01)

    async with async_connect(url, compression=None, ping_interval=None) as ws:
        await ws.send(pieces())
        received = [piece async for piece in ws.recv_streaming()]
        await ws.send("whole")
        assert await ws.recv() == "whole"
        return received


def test_fragmented_messages_keep_their_fragments_both_ways(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url))
    text = ["first fragment, ", "second — ü, ", "third"]
    binary = [os.urandom(10), os.urandom(70000), os.urandom(3)]
    # websockets ends a message sent from an iterator with an empty final frame, and so
    # does the server's echo: the fragments that carry bytes come back as they were sent.
    echoed = asyncio.run(_fragmented_round_trip(ws_url(p, "/text"), text))
    assert [piece for piece in echoed if piece] == text and len(echoed) > len(text)
    echoed = asyncio.run(_fragmented_round_trip(ws_url(p, "/binary"), binary))
    assert [piece for piece in echoed if piece] == binary
    for index, (fragments, empty) in enumerate(((text, ""), (binary, b""))):
        session = ws_server.wait_session(index)
        assert session.fragments[0] == fragments + [empty]
        assert session.messages == [empty.join(fragments), "whole"]


def test_close_codes_both_ways(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url))
    # The client closes with 4001: the server sees 4001 and the reason.
    with client(p, "/client-closes") as ws:
        ws.send("hello")
        assert ws.recv(timeout=10) == "hello"
        ws.close(4001, "client says bye")
    assert ws.close_code == 4001
    first = ws_server.wait_session(0)
    assert first.wait_ended()
    assert (first.close_code, first.close_reason) == (4001, "client says bye")

    # The server closes with 4002: the client sees 4002 and the reason.
    with client(p, "/server-closes") as ws:
        ws.send("!cmd close 4002 server says bye")
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=10)
    assert closed.value.rcvd is not None, "the client got no close frame"
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (4002, "server says bye")
    second = ws_server.wait_session(1)
    assert second.wait_ended() and second.close_sent == 4002


def test_the_upstream_sees_the_routes_credential_not_the_clients(latchkey, ws_server):
    p = latchkey.serve(config(ws_server.url))
    with client(p, "/chat?room=1", additional_headers={"Authorization": "Bearer the-clients-own",
                                                       "X-Client-Marker": "kept"}) as ws:
        ws.send("hi")
        assert ws.recv(timeout=10) == "hi"
        sent_key = ws.request.headers["Sec-WebSocket-Key"]
    session = ws_server.wait_session()
    assert session.path == "/chat?room=1"
    assert [v for k, v in session.headers if k.lower() == "authorization"] == [f"Bearer {TOKEN}"]
    assert session.header("X-Client-Marker") == "kept"
    # Sec-WebSocket-* pass through: the key is the client's (and the client accepted the
    # server's Sec-WebSocket-Accept, computed from it).
    assert session.header("Sec-WebSocket-Key") == sent_key
    assert session.header("Sec-WebSocket-Version") == "13"
    assert "the-clients-own" not in p.log()
    assert TOKEN not in p.log()


def test_subprotocol_and_extension_negotiation_pass_through(latchkey, make_ws_server):
    server = make_ws_server(subprotocols=["chat.v1", "superchat"], compression="deflate")
    p = latchkey.serve(config(server.url))
    with client(p, "/negotiate", subprotocols=["chat.v2", "chat.v1"], compression="deflate") as ws:
        assert ws.subprotocol == "chat.v1"
        assert ws.response.headers["Sec-WebSocket-Protocol"] == "chat.v1"
        assert "permessage-deflate" in ws.response.headers.get("Sec-WebSocket-Extensions", "")
        text = "compressible " * 10000
        ws.send(text)
        assert ws.recv(timeout=10) == text
    session = server.wait_session()
    assert session.subprotocol == "chat.v1"
    assert session.header("Sec-WebSocket-Protocol") == "chat.v2, chat.v1"
    assert "permessage-deflate" in session.header("Sec-WebSocket-Extensions")


def test_a_refused_handshake_is_relayed_as_a_response(latchkey, make_ws_server):
    server = make_ws_server(check=lambda seen: (403, "not on this path\n") if "forbidden" in seen.path else
                            (500, "broken\n") if "broken" in seen.path else None)
    p = latchkey.serve(config(server.url, logging={"format": "json"}))
    for path, status, body in (("/forbidden", 403, b"not on this path\n"), ("/broken", 500, b"broken\n")):
        with pytest.raises(InvalidStatus) as refused:
            client(p, path)
        assert refused.value.response.status_code == status
        assert refused.value.response.body == body
    # The upstream was asked once each: a 403 is no reason to renew the token.
    assert [h.status for h in server.upgrade_handshakes()] == [403, 500]
    # The access log's line comes once the exchange has ended, after the client has the answer.
    def statuses():
        logged = [line.get("status") for line in json_lines(p.log()) if line.get("path") in ("/forbidden", "/broken")]
        return logged if len(logged) == 2 else None
    assert wait_until(statuses) == [403, 500], p.log_tail()
    # And the route still switches for a path the server accepts.
    with client(p, "/fine") as ws:
        ws.send("fine")
        assert ws.recv(timeout=10) == "fine"


def test_wss_through_a_tls_listener(latchkey, ws_server, tmp_path):
    certs = Certs(tmp_path / "pki")
    ca = certs.ca("ca")
    p = latchkey.serve(config(ws_server.url, listeners=[tls_listener(certs.leaf(ca, "server"))]))
    context = ssl.create_default_context(cafile=str(ca.cert))
    # The asyncio client: `AsyncioClient` says why not the sync one over TLS.
    with AsyncioClient(ws_url(p, "/tls", scheme="wss"), ssl=context, ping_interval=None, max_size=MAX_SIZE, compression=None,
                       open_timeout=15) as ws:
        data = os.urandom(3 * MiB)
        ws.send(data)
        assert ws.recv(timeout=30) == data
        for n in range(200):
            ws.send(f"tls {n}")
            assert ws.recv(timeout=10) == f"tls {n}"
    session = ws_server.wait_session()
    assert session.header("Authorization") == f"Bearer {TOKEN}"
    assert session.wait_ended() and session.close_code == 1000

