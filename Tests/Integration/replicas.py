"""Several latchkey processes sharing one identity through one token store (files or
Redis), under concurrent load across token expiries: what the refresh lock must give."""

from __future__ import annotations

import threading
import time
from collections import Counter

from support import config
from test_oauth import identity_route, password_identity

# Short tokens, used until they expire (no proactive refresh, no skew): each expiry is met by
# requests on every replica at once, the race the refresh lock is for.
ACCESS_TOKEN_SECONDS = 2


def shared_identity_config(idp, store: dict) -> dict:
    cfg = config(routes=[identity_route(upstream=idp.url + "/api")], credentials={},
                 identities={"idp": password_identity(idp, refresh_ahead="0s", clock_skew="0s")})
    cfg["store"] = store
    return cfg


class Load:
    """Requests from `threads` threads per replica, round and round, for `seconds`: the
    status of each answer and the access token the IdP's API saw."""

    def __init__(self, proxies, seconds: float, threads: int = 3):
        self.statuses: Counter = Counter()
        self.tokens: set[str] = set()
        self.errors: list[str] = []
        self._lock = threading.Lock()
        deadline = time.monotonic() + seconds
        workers = [threading.Thread(target=self._run, args=(proxy, deadline)) for proxy in proxies for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    def _run(self, proxy, deadline: float) -> None:
        n = 0
        while time.monotonic() < deadline:
            n += 1
            try:
                r = proxy.get(f"/load/{n}")
            except Exception as e:  # noqa: BLE001 - recorded, asserted on below
                with self._lock:
                    self.errors.append(repr(e))
                continue
            with self._lock:
                self.statuses[r.status] += 1
                if r.status == 200:
                    self.tokens.add(r.json()["token"])
                else:
                    self.errors.append(f"{r.status} {r.body[:300]!r}")
            time.sleep(0.01)

    def assert_all_served(self) -> None:
        assert not self.errors, self.errors[:5]
        assert set(self.statuses) == {200}, self.statuses


def assert_one_token_request_per_expiry(idp, load: Load, requests_before: int) -> None:
    """No refresh token was ever presented twice (the IdP rotates them and refuses a spent
    one with invalid_grant), and no token was asked for twice: the token requests made
    during the load (which starts with a token in hand) are the tokens it saw after the
    first."""
    assert idp.token_errors() == 0, idp.counters()
    requests = idp.token_requests() - requests_before
    assert requests >= 1, "the load did not cross an expiry"
    assert requests == len(load.tokens) - 1, (requests, len(load.tokens), idp.counters())
