"""SIGHUP reloads `serve --config FILE` through the real binary: new requests get the new
routes, upstreams and secrets while a request in flight finishes with the ones it started
with; identities whose configuration is unchanged keep their tokens (the IdP counts no
new token request) while a changed one gets a new identity; a file with problems is
refused with `latchkey check`'s own lines and the running configuration goes on; a change
that needs a restart refuses the whole reload; the secret-file watcher and `latchkey use`
follow the reloaded configuration; the quick start has nothing to reload."""

import copy
import json
import signal

import yaml

from support import TOKEN, TOKEN2, bearer, config, wait_until
from test_config import BAD
from test_metrics import requests_total, scrape
from test_oauth import password_identity
from test_schemes import authorization, kii_config

JSON_LOG = ["--log-format", "json"]


def serve(latchkey, cfg: dict):
    """A serve whose log is JSON lines, so that the reload's fields read back exactly."""
    return latchkey.serve(cfg, extra_args=JSON_LOG)


def reload(proxy, cfg) -> dict:
    return json.loads(proxy.reload(cfg))


def reloads_counted(proxy) -> tuple:
    _, samples = scrape(proxy)
    return (samples.get('latchkey_config_reloads_total{result="success"}'),
            samples.get('latchkey_config_reloads_total{result="failure"}'))


def identity_route(idp, name: str, identity: str) -> dict:
    return {"name": name, "path": f"/{name}", "upstream": idp.url + "/api",
            "inject": [{"header": "Authorization", "value": "Bearer {access_token}", "identity": identity}]}


def test_new_requests_go_to_the_new_upstream_with_the_new_secret(latchkey, make_upstream):
    a, b = make_upstream("a"), make_upstream("b")
    proxy = serve(latchkey, config(a.url))
    before = proxy.get("/echo").json()
    assert before["upstream"] == "a" and authorization(proxy.get("/echo")) == [f"Bearer {TOKEN}"]

    line = reload(proxy, config(b.url, credentials={"api": {"value": TOKEN2}}))
    assert line["level"] == "info" and line["message"] == "configuration reloaded", line
    assert line["routes"] == 1 and line["routes_changed"] == ["api"], line
    assert line["routes_added"] == line["routes_removed"] == [], line
    after = proxy.get("/echo")
    assert after.json()["upstream"] == "b", after
    assert authorization(after) == [f"Bearer {TOKEN2}"]
    assert reloads_counted(proxy) == (1, 0)
    # Neither secret reached the log.
    assert TOKEN not in proxy.log() and TOKEN2 not in proxy.log()


def test_a_request_in_flight_finishes_with_the_route_it_started_with(latchkey, make_upstream):
    a, b = make_upstream("a"), make_upstream("b")
    proxy = serve(latchkey, config(a.url))
    slow = proxy.conn()
    slow.request("GET", "/slow?delay=3", host=proxy.host_header)
    assert a.wait_for_request(endpoint="slow", timeout=10)

    # The reloaded configuration has another route first: the one in flight keeps its own,
    # and is counted on it.
    other = {"name": "other", "path": "/other", "upstream": b.url}
    line = reload(proxy, config(b.url, routes=[other, {"name": "api", "path": "/", "upstream": b.url}], credentials={}))
    assert line["message"] == "configuration reloaded", line
    assert proxy.get("/echo").json()["upstream"] == "b"

    finished = slow.read_response(timeout=15)
    assert finished.status == 200, finished
    assert finished.json()["upstream"] == "a"
    assert authorization(finished) == [f"Bearer {TOKEN}"]
    slow.close()
    _, samples = scrape(proxy)
    assert samples[requests_total("api", "2xx")] == 2, samples
    assert samples[requests_total("other", "2xx")] == 0, samples


def obtained(proxy) -> dict:
    """When each identity's token was obtained, as `/.latchkey/identities` says."""
    return {i["name"]: i.get("obtained_at") for i in proxy.get("/.latchkey/identities").json()["identities"]}


def test_a_listeners_checks_and_the_limits_reach_new_requests(latchkey, upstream):
    proxy = serve(latchkey, config(upstream.url))
    host = f"myproxy.test:{proxy.port}"
    assert proxy.get("/echo", host=host).status == 421
    assert proxy.request("POST", "/echo", body=b"x" * 5000).status == 200

    line = reload(proxy, config(upstream.url, listeners=[{"name": "main", "allowed_hosts": ["myproxy.test"]}],
                                limits={"max_body_bytes": "1KiB"}))
    assert line["message"] == "configuration reloaded" and line["routes_changed"] == [], line
    assert proxy.get("/echo", host=host).status == 200
    assert proxy.request("POST", "/echo", body=b"x" * 500).status == 200
    assert proxy.request("POST", "/echo", body=b"x" * 5000).status == 413


def test_an_unchanged_identity_keeps_its_token_and_a_changed_one_starts_anew(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3600)
    # Each checks a token restored from the store before its first use.
    checked = {"check_on_start": "introspection", "introspection_url": idp.url + "/o/introspect/"}
    identities = {"alice": password_identity(idp, **checked), "bob": password_identity(idp, **checked),
                  "service": {"grant": "static", "token": {"value": "lk-itest-pasted-token"}}}
    cfg = config(routes=[identity_route(idp, name, name) for name in identities], credentials={}, identities=identities)
    proxy = serve(latchkey, copy.deepcopy(cfg))
    alice = proxy.get("/alice/echo").json()["token"]
    bob = proxy.get("/bob/echo").json()["token"]
    assert proxy.get("/service/echo").status == 401  # the IdP does not know the pasted token
    assert idp.token_requests("password") == 2 and idp.token_requests() == 2
    before = obtained(proxy)

    # Ended at the IdP: an identity that starts again finds out when it checks the token it
    # restores; one that goes on holds it until an upstream refuses it.
    idp.expire_access_tokens()
    cfg["identities"]["bob"] = password_identity(idp, refresh_ahead="30s", **checked)
    cfg["identities"]["service"] = {"grant": "client_credentials", "token_url": idp.token_url, "client_id": idp.service_client.id,
                                    "client_secret": {"value": idp.service_client.secret}}
    line = reload(proxy, cfg)
    assert line["identities_kept"] == ["alice"], line
    assert line["identities_new"] == ["bob", "service"], line
    assert line["identities_removed"] == [] and line["routes_changed"] == [], line

    # Bob restored his token, was told it ended, and renewed it before any request of his.
    assert wait_until(lambda: idp.token_requests("refresh_token") == 1, timeout=10), proxy.log_tail()
    assert proxy.wait_log(r'"message":"auth state changed".*"event":"refreshed","identity":"bob"'), proxy.log_tail()
    assert idp.token_requests() == 3, idp.counters()
    assert obtained(proxy)["alice"] == before["alice"]
    renewed = proxy.get("/bob/echo")
    assert renewed.status == 200 and renewed.json()["token"] != bob, renewed
    service = proxy.get("/service/echo")
    assert service.status == 200 and service.json()["client_id"] == idp.service_client.id, service
    assert idp.token_requests("client_credentials") == 1 and idp.token_requests("password") == 2, idp.counters()
    # Alice's token is the one she had: the IdP refuses it now, and she renews it then.
    assert proxy.get("/alice/echo").json()["token"] != alice
    assert idp.token_requests("refresh_token") == 2, idp.counters()

    # A removed identity's series leave the metrics; /.latchkey/identities follows.
    del cfg["identities"]["bob"]
    cfg["routes"] = [r for r in cfg["routes"] if r["name"] != "bob"]
    line = reload(proxy, cfg)
    assert line["identities_removed"] == ["bob"] and line["routes_removed"] == ["bob"], line
    text, _ = scrape(proxy)
    assert 'identity="bob"' not in text and 'route="bob"' not in text and 'identity="alice"' in text
    assert sorted(obtained(proxy)) == ["alice", "service"]
    assert proxy.get("/bob/echo").status == 404


def test_the_first_identity_a_reload_brings_opens_the_token_store(latchkey, make_idp, upstream):
    idp = make_idp(access_token_seconds=3600)
    proxy = serve(latchkey, config(upstream.url))
    store = latchkey.workdir / "state" / "latchkey"
    assert not store.exists()  # nothing to keep, nothing opened

    cfg = config(upstream.url, identities={"alice": password_identity(idp)})
    cfg["routes"].append(identity_route(idp, "alice", "alice"))
    line = reload(proxy, cfg)
    assert line["identities_new"] == ["alice"] and line["routes_added"] == ["alice"], line
    assert proxy.get("/alice/echo").status == 200
    assert (store / "alice.json").exists()
    assert idp.token_requests("password") == 1


def test_a_file_with_problems_is_refused_and_the_running_configuration_goes_on(latchkey, make_upstream):
    a, b = make_upstream("a"), make_upstream("b")
    proxy = serve(latchkey, config(a.url))
    good = proxy.config_path.read_text()

    line = reload(proxy, BAD)
    checked = latchkey.run(["check", "--config", str(proxy.config_path)])
    assert checked.returncode == 1
    assert line["level"] == "error" and line["message"] == "configuration not reloaded", line
    assert line["problems"] == checked.stderr.splitlines(), line
    assert len(line["problems"]) >= 4
    assert proxy.get("/echo").json()["upstream"] == "a"

    proxy.config_path.write_text(good)
    line = reload(proxy, config(b.url))
    assert line["message"] == "configuration reloaded", line
    assert proxy.get("/echo").json()["upstream"] == "b"
    assert reloads_counted(proxy) == (1, 1)


def test_a_change_that_needs_a_restart_refuses_the_whole_reload(latchkey, make_upstream):
    a, b = make_upstream("a"), make_upstream("b")
    proxy = serve(latchkey, config(a.url, server={"loops": 1}))
    listening = yaml.safe_load(proxy.config_path.read_text())["listeners"][0]["listen"]
    moved = config(b.url, server={"loops": 2}, listeners=[{"name": "main", "listen": "127.0.0.1:1"}])
    line = reload(proxy, moved)
    assert line["level"] == "error" and line["message"] == "configuration not reloaded", line
    path = proxy.config_path
    assert line["problems"] == [
        f"{path}: server.loops: changes only with a restart (running: 1)",
        f"{path}: listeners[0].listen: changes only with a restart (running: {listening})",
    ], line
    # Nothing of it applied: not even the route's new upstream.
    assert proxy.get("/echo").json()["upstream"] == "a"
    assert reloads_counted(proxy) == (0, 1)


def test_a_burst_of_sighups_ends_with_the_last_file_and_sigterm_still_stops(latchkey, make_upstream):
    a, b = make_upstream("a"), make_upstream("b")
    proxy = serve(latchkey, config(a.url))
    proxy.config_path.write_text(proxy.config_path.read_text().replace(a.url, b.url))
    for _ in range(5):
        proxy.send_signal(signal.SIGHUP)
    assert wait_until(lambda: proxy.reload_outcomes(), timeout=10), proxy.log_tail()
    assert wait_until(lambda: proxy.get("/echo").json()["upstream"] == "b", timeout=10)
    # Signals of one kind coalesce while one is pending: one to five reloads, each whole.
    outcomes = [json.loads(line) for line in proxy.reload_outcomes()]
    assert 1 <= len(outcomes) <= 5 and all(o["message"] == "configuration reloaded" for o in outcomes), outcomes
    proxy.send_signal(signal.SIGHUP)
    proxy.send_signal(signal.SIGTERM)
    assert proxy.wait_exit(20) == 0, proxy.log_tail()


def test_the_secret_file_watcher_follows_the_reloaded_files(latchkey, upstream, tmp_path):
    old, new = tmp_path / "old-secret", tmp_path / "new-secret"
    for path, value in ((old, "lk-itest-old-file-secret"), (new, "lk-itest-new-file-secret")):
        path.write_text(value)
        path.chmod(0o600)
    proxy = serve(latchkey, config(upstream.url, credentials={"old": {"file": str(old)}}, route={"inject": [bearer("old")]}))
    assert authorization(proxy.get("/echo")) == ["Bearer lk-itest-old-file-secret"]

    reload(proxy, config(upstream.url, credentials={"api": {"file": str(new)}}))
    assert authorization(proxy.get("/echo")) == ["Bearer lk-itest-new-file-secret"]
    # The old file first: by the time the new file's change is in use, a watcher that still
    # read the old one would have logged it.
    old.write_text("lk-itest-stale-file-secret")
    new.write_text("lk-itest-rotated-file-secret")
    assert wait_until(lambda: authorization(proxy.get("/echo")) == ["Bearer lk-itest-rotated-file-secret"], timeout=10)
    reread = [json.loads(line)["credential"] for line in proxy.log_lines() if "credential reloaded from its file" in line]
    assert reread == ["api"], reread


def test_latchkey_use_follows_a_route_a_reload_gave_a_choice(latchkey, upstream, tmp_path):
    cfg = kii_config(tmp_path, upstream)
    single = copy.deepcopy(cfg)
    del single["routes"][0]["selectable_identities"]
    proxy = serve(latchkey, single)
    assert authorization(proxy.get("/kii/me")) == ["Bearer token-of-alice"]

    reload(proxy, copy.deepcopy(cfg))
    switched = latchkey.run(["use", "kii", "kii-bob", "--config", str(proxy.config_path)])
    assert switched.returncode == 0, switched.stderr
    assert wait_until(lambda: authorization(proxy.get("/kii/me")) == ["Bearer token-of-bob"], timeout=5), proxy.log_tail()


def test_the_quick_start_has_nothing_to_reload(latchkey, upstream):
    proxy = latchkey.quick(upstream.url)
    proxy.send_signal(signal.SIGHUP)
    assert proxy.wait_log(r"nothing to reload"), proxy.log_tail()
    assert proxy.alive() and proxy.get("/echo").status == 200
