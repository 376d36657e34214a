"""`/.latchkey/metrics` through the real binary: requests on two routes and an identity's
auth events as counter values, upstream failures and refusals, the open-connections gauge,
the endpoint behind a listener's shared secret, and no secret anywhere in the text."""

import re

from support import SECRET, TOKEN, bearer, config, free_port, wait_until

_SAMPLE = re.compile(r"^([a-z_]+(?:\{.*\})?) (\S+)$")


def scrape(proxy, **kw) -> tuple[str, dict]:
    """The exposition text and its samples, `name{labels}` → value."""
    r = proxy.get("/.latchkey/metrics", **kw)
    assert r.status == 200, r
    assert r.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8", r
    text = r.body.decode()
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            m = _SAMPLE.match(line)
            assert m, f"not a sample line: {line!r}"
            samples[m.group(1)] = float(m.group(2))
    return text, samples


def requests_total(route: str, status_class: str) -> str:
    return f'latchkey_requests_total{{route="{route}",status_class="{status_class}"}}'


def test_two_routes_and_an_identitys_events_are_counted(latchkey, upstream, make_idp):
    # A long-lived token: the only refresh is the one the test causes.
    idp = make_idp(access_token_seconds=3600)
    identity = {
        "grant": "password", "token_url": idp.token_url, "username": idp.username,
        "password": {"value": idp.password},
        "client_id": idp.password_client.id, "client_secret": {"value": idp.password_client.secret},
    }
    routes = [
        {"name": "static", "path": "/static", "upstream": upstream.url, "inject": [bearer()]},
        {"name": "oauth", "path": "/oauth", "upstream": idp.url + "/api",
         "inject": [{"header": "Authorization", "value": "Bearer {access_token}", "identity": "idp"}]},
    ]
    p = latchkey.serve(config(routes=routes, identities={"idp": identity}))

    for i in range(3):
        assert p.get(f"/static/echo/{i}").status == 200
    assert p.get("/static/status/404").status == 404
    tokens = {p.get("/oauth/echo").json()["token"]}
    idp.expire_access_tokens()
    # The upstream refuses the expired token: one refresh, and the request is replayed.
    replayed = p.get("/oauth/echo")
    assert replayed.status == 200, replayed
    tokens.add(replayed.json()["token"])
    assert len(tokens) == 2

    def counted():
        _, samples = scrape(p)
        return samples if samples.get('latchkey_auth_events_total{identity="idp",event="refreshed"}') == 1 else None

    samples = wait_until(counted)
    assert samples, scrape(p)[0]
    assert samples[requests_total("static", "2xx")] == 3
    assert samples[requests_total("static", "4xx")] == 1
    assert samples[requests_total("oauth", "2xx")] == 2
    assert samples[requests_total("oauth", "5xx")] == 0
    assert samples['latchkey_auth_events_total{identity="idp",event="acquired"}'] == 1
    assert samples['latchkey_auth_events_total{identity="idp",event="failed"}'] == 0
    assert samples['latchkey_auth_events_total{identity="idp",event="login_required"}'] == 0
    assert samples['latchkey_token_renewals_total{route="oauth"}'] == 1
    assert samples['latchkey_token_replays_total{route="oauth"}'] == 1
    assert samples['latchkey_upstream_duration_seconds_count{route="static"}'] == 4
    # The refused attempt was cancelled for the replay: only the replay's time is counted.
    assert samples['latchkey_upstream_duration_seconds_count{route="oauth"}'] == 2
    assert 'latchkey_token_renewals_total{route="static"}' not in samples

    text, _ = scrape(p)
    for secret in (TOKEN, idp.password, idp.password_client.secret, *tokens):
        assert secret not in text, "a secret value is in the metrics"
    # Labels hold configuration names and fixed words only, never a request's path.
    assert "/echo" not in text and "status/404" not in text


def test_upstream_failures_and_refusals_are_counted(latchkey, upstream):
    routes = [
        {"name": "api", "path": "/api", "upstream": upstream.url, "inject": [bearer()]},
        {"name": "down", "path": "/down", "upstream": f"http://127.0.0.1:{free_port()}", "inject": [bearer()]},
    ]
    p = latchkey.serve(config(routes=routes))
    assert p.get("/down/x").status == 502
    assert p.get("/nowhere").status == 404
    assert p.get("/api/x", headers=[("Sec-Fetch-Site", "cross-site")]).status == 403
    _, samples = scrape(p)
    assert samples['latchkey_upstream_failures_total{route="down",kind="connect_failed"}'] == 1
    assert samples['latchkey_upstream_failures_total{route="down",kind="connect_timeout"}'] == 0
    assert samples[requests_total("down", "5xx")] == 1
    assert samples['latchkey_refused_requests_total{reason="no_route"}'] == 1
    assert samples['latchkey_refused_requests_total{reason="cross_site"}'] == 1
    assert samples[requests_total("api", "4xx")] == 1
    assert upstream.accepted == 0


def test_open_connections_gauge(latchkey, upstream):
    p = latchkey.serve(config(upstream.url))
    with p.conn() as held:
        held.request("GET", "/echo", host=p.host_header)
        assert held.read_response().status == 200
        # The held connection and the scrape's own.
        assert wait_until(lambda: scrape(p)[1]['latchkey_open_connections{listener="main"}'] == 2)
    assert wait_until(lambda: scrape(p)[1]['latchkey_open_connections{listener="main"}'] == 1)


def _secret_listener(tmp_path):
    f = tmp_path / "inbound-secret"
    f.write_text(SECRET + "\n")
    return {"name": "main", "inbound": {"shared_secret": {"header": "X-Latchkey-Secret", "file": str(f)}}}


def test_metrics_need_the_listeners_shared_secret(latchkey, upstream, tmp_path):
    """Unlike health, metrics name routes and identities and show traffic: a listener's
    inbound check and Host allow-list apply to them as to any request."""
    p = latchkey.serve(config(upstream.url, listeners=[_secret_listener(tmp_path)]))
    assert p.get("/.latchkey/metrics").status == 401
    assert p.get("/.latchkey/metrics", headers=[("X-Latchkey-Secret", "not-the-secret")]).status == 403
    # A DNS-rebinding page sends its own Host, with the right secret or not.
    rebound = p.get("/.latchkey/metrics", host="evil.example", headers=[("X-Latchkey-Secret", SECRET)])
    assert rebound.status == 421, rebound
    assert p.get("/.latchkey/health").status == 200

    text, samples = scrape(p, headers=[("X-Latchkey-Secret", SECRET)])
    assert samples['latchkey_refused_requests_total{reason="unauthorized"}'] == 1
    assert samples['latchkey_refused_requests_total{reason="forbidden"}'] == 1
    assert samples['latchkey_refused_requests_total{reason="unknown_host"}'] == 1
    assert SECRET not in text and TOKEN not in text
    assert upstream.accepted == 0


def test_a_listener_no_route_serves_answers_metrics_only(latchkey, upstream):
    """The scraper's own listener (README, Metrics): health and metrics, no credential."""
    cfg = config(upstream.url, route={"listeners": ["main"]},
                 listeners=[{"name": "main"}, {"name": "scrape", "listen": f"127.0.0.1:{free_port()}"}])
    p = latchkey.serve(cfg)
    assert p.get("/echo").status == 200
    on_scrape = {"listener": "scrape", "host": "127.0.0.1:%d" % p.addresses["scrape"][1]}
    refused = p.get("/echo", **on_scrape)
    assert refused.status == 404, refused
    _, samples = scrape(p, **on_scrape)
    assert samples[requests_total("api", "2xx")] == 1
    assert samples['latchkey_refused_requests_total{reason="no_route"}'] == 1
    assert upstream.accepted == 1


def test_metrics_answer_get_and_head_only(latchkey, upstream):
    p = latchkey.serve(config(upstream.url))
    head = p.request("HEAD", "/.latchkey/metrics")
    assert head.status == 200 and head.body == b"", head
    assert head.header("Content-Type").startswith("text/plain; version=0.0.4")
    post = p.request("POST", "/.latchkey/metrics", body=b"x")
    assert post.status == 405, post
    assert post.header("Allow") == "GET, HEAD"
    assert post.json()["error"] == "method_not_allowed"
    assert upstream.accepted == 0
