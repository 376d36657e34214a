"""The loops' pools of kept-alive upstream connections through the real binary: reuse and
its counters, `limits.upstream_idle_connections` (0 keeps none), the total across
upstreams closing the oldest idle connection, the idle timeout, a reload that lowers the
limits, and `latchkey_upstream_idle_connections`. One loop, so that every request meets
the same pool."""

from support import bearer, config, wait_until
from test_metrics import scrape

ONE_LOOP = {"loops": 1}


def samples_of(p, route: str = "api") -> dict:
    _, samples = scrape(p)
    return {
        "opened": samples[f'latchkey_upstream_connections_opened_total{{route="{route}"}}'],
        "reuses": samples[f'latchkey_upstream_connection_reuses_total{{route="{route}"}}'],
        "resends": samples[f'latchkey_upstream_resends_total{{route="{route}"}}'],
        "idle": samples["latchkey_upstream_idle_connections"],
    }


def closed_by_latchkey(upstream) -> list:
    with upstream.cond:
        return [c for c in upstream.connections if c.closed_at is not None]


def test_one_kept_alive_connection_carries_sequential_requests(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, server=ONE_LOOP))
    for i in range(5):
        assert p.get(f"/echo/{i}").status == 200
    assert upstream.accepted == 1
    assert samples_of(p) == {"opened": 1, "reuses": 4, "resends": 0, "idle": 1}


def test_zero_idle_connections_opens_one_per_request(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, server=ONE_LOOP, limits={"upstream_idle_connections": 0}))
    for i in range(3):
        assert p.get(f"/echo/{i}").status == 200
    assert upstream.accepted == 3
    # Each is closed once its exchange ends; none waits in the pool.
    assert upstream.wait_until(lambda: all(c.closed_at is not None for c in upstream.connections))
    assert samples_of(p) == {"opened": 3, "reuses": 0, "resends": 0, "idle": 0}


def test_over_the_total_the_oldest_idle_connection_is_closed(latchkey, make_upstream):
    ups = {name: make_upstream(name) for name in ("a", "b", "c")}
    routes = [{"name": name, "path": f"/{name}", "upstream": up.url, "inject": [bearer()]} for name, up in ups.items()]
    p = latchkey.serve(config(routes=routes, server=ONE_LOOP, limits={"upstream_idle_connections_total": 2}))
    for name in ("a", "b", "c"):
        assert p.get(f"/{name}/echo").status == 200
    # c's parking passed the total of 2: a's connection, the oldest, went.
    assert ups["a"].wait_until(lambda: ups["a"].connections[0].closed_at is not None)
    assert not closed_by_latchkey(ups["b"]) and not closed_by_latchkey(ups["c"])
    assert samples_of(p, "a")["idle"] == 2
    assert p.get("/a/echo").status == 200
    assert ups["a"].accepted == 2
    # Parking a's new connection closed b's, now the oldest.
    assert ups["b"].wait_until(lambda: ups["b"].connections[0].closed_at is not None)
    assert p.get("/c/echo").status == 200
    assert ups["c"].accepted == 1, "c's connection was kept and reused"


def test_an_idle_connection_is_closed_after_the_idle_timeout(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, server=ONE_LOOP, limits={"upstream_idle_timeout": "300ms"}))
    assert p.get("/echo").status == 200
    assert upstream.wait_until(lambda: upstream.connections[0].closed_at is not None, timeout=5)
    assert wait_until(lambda: samples_of(p)["idle"] == 0)
    assert p.get("/echo").status == 200
    assert upstream.accepted == 2


def test_a_reload_that_lowers_the_limits_closes_what_is_over_them(latchkey, make_upstream):
    ups = {name: make_upstream(name) for name in ("a", "b")}
    routes = [{"name": name, "path": f"/{name}", "upstream": up.url, "inject": [bearer()]} for name, up in ups.items()]
    cfg = config(routes=routes, server=ONE_LOOP)
    p = latchkey.serve(cfg)
    for name in ("a", "b"):
        assert p.get(f"/{name}/echo").status == 200
    assert samples_of(p, "a")["idle"] == 2
    cfg["limits"] = {"upstream_idle_connections": 0}
    assert "configuration reloaded" in p.reload(cfg)
    # The limits reach the loop with the next event on it: the scrape is one.
    assert wait_until(lambda: samples_of(p, "a")["idle"] == 0)
    for up in ups.values():
        assert up.wait_until(lambda up=up: up.connections[0].closed_at is not None)
    assert p.get("/a/echo").status == 200
    assert ups["a"].accepted == 2


def test_libcurls_transfers_are_counted_the_same(latchkey, upstream):
    """`engine: libcurl`: the counts come from libcurl (CURLINFO_NUM_CONNECTS); its own
    connection cache keeps the connection, not Latchkey's pool."""
    p = latchkey.serve(config(route={"upstream": {"url": upstream.url, "engine": "libcurl"}}, server=ONE_LOOP))
    for i in range(3):
        assert p.get(f"/echo/{i}").status == 200
    assert upstream.accepted == 1
    assert samples_of(p) == {"opened": 1, "reuses": 2, "resends": 0, "idle": 0}
