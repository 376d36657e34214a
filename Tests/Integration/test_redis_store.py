"""The Redis token store through the real binary: two and three `latchkey serve` processes
share one identity on the rotating IdP (django-oauth-toolkit, idp_support.py) through a
real redis-server started here, under concurrent load across expiries: one token request
per expiry and never an invalid_grant, thanks to the refresh lock in Redis. Redis restarted
in the middle: the replicas keep serving, report not ready, and the token obtained while
Redis was away reaches it afterwards. `latchkey logout` reaches every replica through the
mark in Redis, and `latchkey login` ends it."""

from __future__ import annotations

import copy
import json
import shutil
import signal
import subprocess
import time

import pytest

from replicas import ACCESS_TOKEN_SECONDS, Load, assert_one_token_request_per_expiry, shared_identity_config
from support import STOP_TIMEOUT, free_port, wait_until
from test_login import login_config_file
from test_token_store import KEY

PREFIX = "itest:"


class RedisServer:
    """A redis-server on a free loopback port, its data in the test's directory (saved when
    it stops, as a real deployment keeps it), stopped at the end of the test."""

    def __init__(self, workdir, password: str | None = None):
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.port = free_port()
        self.password = password
        self.log_path = workdir / "redis.log"
        self.args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(workdir),
                     "--logfile", str(self.log_path)] + (["--requirepass", password] if password else [])
        self.proc: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, start_new_session=True)
        if not wait_until(lambda: self.cli("PING") == "PONG", timeout=10):
            raise AssertionError(f"redis-server did not start:\n{self.log_path.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=STOP_TIMEOUT)

    def cli(self, *command: str) -> str | None:
        env = {"REDISCLI_AUTH": self.password} if self.password else {}
        r = subprocess.run(["redis-cli", "-p", str(self.port), "--raw", *command], capture_output=True, text=True,
                           timeout=10, env=env)
        return r.stdout.rstrip("\n") if r.returncode == 0 and not r.stdout.startswith("Could not connect") else None

    def stored_access_token(self, identity: str = "idp") -> str | None:
        value = self.cli("GET", f"{PREFIX}token:{identity}")
        return json.loads(value)["token"]["access_token"] if value else None


@pytest.fixture
def redis(tmp_path):
    server = RedisServer(tmp_path)
    yield server
    server.stop()


def redis_store(redis, **extra) -> dict:
    return {"type": "redis", "url": redis.url, "key_prefix": PREFIX, **extra}


def ready(proxy) -> int:
    return proxy.get("/.latchkey/ready").status


@pytest.mark.parametrize("replicas", [2, 3])
def test_replicas_refresh_a_shared_identity_once_per_expiry(latchkey, make_idp, redis, replicas):
    idp = make_idp(access_token_seconds=ACCESS_TOKEN_SECONDS)
    proxies = [latchkey.serve(shared_identity_config(idp, redis_store(redis))) for _ in range(replicas)]
    first = proxies[0].get("/warm-up")
    assert first.status == 200, first
    # The others take the first one's token from Redis instead of asking the IdP.
    for proxy in proxies[1:]:
        r = proxy.get("/warm-up")
        assert r.status == 200 and r.json()["token"] == first.json()["token"], r
    assert idp.token_requests() == 1
    assert all(ready(proxy) == 200 for proxy in proxies)

    before = idp.token_requests()
    load = Load(proxies, seconds=3.5 * ACCESS_TOKEN_SECONDS)
    load.assert_all_served()
    assert_one_token_request_per_expiry(idp, load, before)
    assert len(load.tokens) >= 3
    logs = "".join(proxy.log() for proxy in proxies)
    assert "a newer token was in the token store" in logs or "taken from the token store" in logs
    assert redis.stored_access_token() in load.tokens


def test_values_in_redis_are_sealed_and_the_password_comes_from_a_secret(latchkey, make_idp, tmp_path):
    server = RedisServer(tmp_path, password="lk-itest-redis-pass-77a1")
    try:
        idp = make_idp(access_token_seconds=3600)
        cfg = shared_identity_config(idp, {"type": "redis", "url": server.url, "key_prefix": PREFIX,
                                            "password": {"env": "LK_REDIS_PASSWORD"}})
        proxy = latchkey.serve(cfg, env={"LATCHKEY_STORE_KEY": KEY, "LK_REDIS_PASSWORD": server.password})
        r = proxy.get("/x")
        assert r.status == 200, r
        value = server.cli("GET", f"{PREFIX}token:idp")
        assert set(json.loads(value)) == {"format", "cipher", "nonce", "ciphertext", "tag"}
        assert r.json()["token"] not in value
        assert server.password not in proxy.log() and KEY not in proxy.log()
        assert proxy.wait_log(r"token store available")
    finally:
        server.stop()


def test_redis_restarted_in_the_middle(latchkey, make_idp, redis):
    idp = make_idp(access_token_seconds=ACCESS_TOKEN_SECONDS)
    serving, idle = (latchkey.serve(shared_identity_config(idp, redis_store(redis))) for _ in range(2))
    assert serving.get("/warm-up").status == 200
    assert idle.get("/warm-up").status == 200
    assert idp.token_requests() == 1 and ready(serving) == 200

    redis.stop()
    # Both notice within a watcher pass or two, and say so; health is unchanged.
    assert wait_until(lambda: ready(serving) == 503 and ready(idle) == 503, timeout=10), serving.log_tail()
    r = serving.get("/.latchkey/ready")
    assert r.json() == {"status": "not_ready", "reason": "token_store_unavailable",
                        "message": "the token store cannot be reached; the tokens held in memory are still used"}
    assert serving.get("/.latchkey/health").status == 200
    assert serving.wait_log(r"token store unavailable")
    metrics = serving.get("/.latchkey/metrics").body.decode()
    assert "latchkey_token_store_available 0" in metrics

    # One replica goes on serving across an expiry: the token it obtains meanwhile is kept.
    outage = Load([serving], seconds=1.5 * ACCESS_TOKEN_SECONDS, threads=2)
    outage.assert_all_served()
    obtained_meanwhile = idp.token_requests("refresh_token")
    assert obtained_meanwhile >= 1
    assert serving.wait_log(r"the token of identity idp stays in this process's memory and is written when Redis is back")

    redis.start()
    assert wait_until(lambda: ready(serving) == 200 and ready(idle) == 200, timeout=20), serving.log_tail()
    assert serving.wait_log(r"wrote the token of identity idp that was saved while Redis was away", timeout=10)
    latest = serving.get("/latest").json()["token"]
    assert redis.stored_access_token() == latest
    assert "latchkey_token_store_available 1" in serving.get("/.latchkey/metrics").body.decode()

    # The idle replica's token expired meanwhile: it takes the newer one from Redis, and both
    # go on across expiries with one token request each.
    before = idp.token_requests()
    load = Load([serving, idle], seconds=2.5 * ACCESS_TOKEN_SECONDS)
    load.assert_all_served()
    assert latest in load.tokens
    assert_one_token_request_per_expiry(idp, load, before)
    assert idp.token_errors() == 0


def test_a_logout_reaches_every_replica_and_a_login_ends_it(latchkey, make_idp, redis):
    idp = make_idp(access_token_seconds=3600)
    cfg = shared_identity_config(idp, redis_store(redis))
    path = login_config_file(latchkey, cfg)
    replicas = [latchkey.serve(copy.deepcopy(cfg)) for _ in range(2)]
    assert all(proxy.get("/warm-up").status == 200 for proxy in replicas)
    assert idp.token_requests() == 1

    out = latchkey.run(["logout", "idp", "--config", path], timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(redis.cli("GET", f"{PREFIX}token:idp")) == {"format": "latchkey-token-v1", "logged_out": True}
    # Every replica takes the mark up from Redis and answers login_required, without a
    # password grant of its own behind the user's back.
    for proxy in replicas:
        assert proxy.wait_log(r"event=logged_out", timeout=10), proxy.log_tail()
        r = proxy.get("/after")
        assert r.status == 401 and r.json()["error"] == "login_required", r
    assert idp.token_requests() == 1

    login = latchkey.run(["login", "idp", "--config", path], timeout=60)
    assert login.returncode == 0, login.stderr
    for proxy in replicas:
        assert wait_until(lambda proxy=proxy: proxy.get("/back").status == 200, timeout=10), proxy.log_tail()
    assert idp.token_requests() == 2
