"""Latchkey's pool of upstream connections (its own HTTP/1.1 on connections libcurl opened),
against an upstream that decides everything by connection and request number
(`scripted_upstream.py`), so that each test meets exactly one path:

- a pooled connection the upstream closes while it idles is dropped, and the next request
  goes on a new one;
- a request that meets the upstream's close (a FIN, or a reset) on a reused connection
  before any answer goes again, once, on a new connection, its body whole;
- no resend once the answer began, once more was written than is kept (64 KiB), for a
  request on a new connection, or for the resent request itself: those get 502.

One loop (`--loops 1`), so that every request finds the one pool. A negative ("no other
connection was made for it") is checked with a later request, which must be the first on
the next connection: a resend would have taken that place, since it is made before the
client hears anything.
"""

from __future__ import annotations

import os

import pytest

from test_metrics import scrape
from scripted_upstream import ANSWER_THEN_FIN, BEGIN_THEN_CLOSE, CLOSE, RESET, ScriptedUpstream

KiB = 1024


@pytest.fixture
def make_scripted():
    started = []

    def make(script: dict) -> ScriptedUpstream:
        upstream = ScriptedUpstream(script)
        started.append(upstream)
        return upstream

    yield make
    for upstream in started:
        upstream.close()


def one_loop(latchkey, upstream):
    return latchkey.quick(upstream.url, extra=["--loops", "1"])


def post(p, target: str, body: bytes):
    return p.request("POST", target, body=body, headers=[("Content-Type", "application/octet-stream")])


def assert_bad_gateway(response) -> None:
    assert response.status == 502, response
    assert response.json()["error"] == "upstream_reset", response


@pytest.mark.parametrize("close", [CLOSE, RESET])
def test_a_request_meeting_the_close_of_a_reused_connection_goes_again_on_a_new_one(latchkey, make_scripted, close):
    upstream = make_scripted({(0, 1): close})
    p = one_loop(latchkey, upstream)
    assert p.get("/first").status == 200
    body = os.urandom(10 * KiB)
    r = post(p, "/second", body)
    assert r.status == 200, r
    assert r.json() == {"connection": 1, "request": 0, "body_length": len(body)}
    first, second = upstream.connections
    assert first.targets == ["GET /first", "POST /second"]
    assert second.targets == ["POST /second"]
    assert first.requests[1].body == body and second.requests[0].body == body
    # Two connections opened, one reused, one resend: what the metrics say too.
    _, samples = scrape(p)
    counted = {name.split("{")[0]: value for name, value in samples.items() if name.startswith("latchkey_upstream_")}
    assert counted["latchkey_upstream_connections_opened_total"] == 2
    assert counted["latchkey_upstream_connection_reuses_total"] == 1
    assert counted["latchkey_upstream_resends_total"] == 1


def test_a_pooled_connection_the_upstream_closes_while_idle_is_dropped(latchkey, make_scripted):
    """The upstream half-closes after its answer, so that it sees Latchkey close its end in
    turn: the close is known before the next request, which goes on a new connection."""
    upstream = make_scripted({(0, 0): ANSWER_THEN_FIN})
    p = one_loop(latchkey, upstream)
    assert p.get("/first").status == 200
    assert upstream.connections[0].proxy_closed.wait(10), "Latchkey kept the connection the upstream closed"
    r = p.get("/second")
    assert r.status == 200, r
    assert r.json()["connection"] == 1
    assert [c.targets for c in upstream.connections] == [["GET /first"], ["GET /second"]]


def test_no_resend_once_the_answer_began(latchkey, make_scripted):
    upstream = make_scripted({(0, 1): BEGIN_THEN_CLOSE})
    p = one_loop(latchkey, upstream)
    assert p.get("/first").status == 200
    assert_bad_gateway(p.get("/second"))
    assert p.get("/third").status == 200
    assert [c.targets for c in upstream.connections] == [["GET /first", "GET /second"], ["GET /third"]]


def test_no_resend_of_a_body_larger_than_what_is_kept(latchkey, make_scripted):
    """Past 64 KiB written, the bytes are no longer held: the request cannot go again."""
    upstream = make_scripted({(0, 1): CLOSE})
    p = one_loop(latchkey, upstream)
    assert p.get("/first").status == 200
    body = os.urandom(96 * KiB)
    assert_bad_gateway(post(p, "/second", body))
    assert p.get("/third").status == 200
    assert [c.targets for c in upstream.connections] == [["GET /first", "POST /second"], ["GET /third"]]
    assert upstream.connections[0].requests[1].body == body, "the body was written whole before the close"


def test_no_resend_of_a_request_on_a_new_connection(latchkey, make_scripted):
    upstream = make_scripted({(0, 0): CLOSE})
    p = one_loop(latchkey, upstream)
    assert_bad_gateway(p.get("/first"))
    assert p.get("/second").status == 200
    assert [c.targets for c in upstream.connections] == [["GET /first"], ["GET /second"]]


def test_a_resent_request_that_fails_again_is_not_sent_a_third_time(latchkey, make_scripted):
    upstream = make_scripted({(0, 1): CLOSE, (1, 0): CLOSE})
    p = one_loop(latchkey, upstream)
    assert p.get("/first").status == 200
    assert_bad_gateway(post(p, "/second", b"once more"))
    assert p.get("/third").status == 200
    assert [c.targets for c in upstream.connections] == [["GET /first", "POST /second"], ["POST /second"], ["GET /third"]]
