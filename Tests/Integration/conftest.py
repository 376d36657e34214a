"""Fixtures for the integration tests: the latchkey binary, stub upstreams, and latchkey
processes on ephemeral loopback ports.

Environment:
  LATCHKEY_BIN            the binary to test (default: .build/debug/latchkey, built if missing)
  LATCHKEY_ITEST_PORT0    1: the binary binds 127.0.0.1:0 and logs `listening address=...`;
                          0: pick a free port in Python; auto (default): try 0, fall back
  LATCHKEY_ITEST_BUILD=0  never build; fail if the binary is missing
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from browser import Browser
from emulations.basecamp import BasecampEmulation
from idp_support import (auth0, idp, idp_template, make_auth0, make_idp, make_podio, make_tmdb, podio,  # noqa: F401 (fixtures)
                         tmdb)
from stub_upstream import StubUpstream
from support import REPO, Launcher

# A SIGTERM (e.g. from `timeout` in Scripts/test.sh) exits through atexit, which stops any
# latchkey still running (support._kill_leftovers).
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


@pytest.fixture(scope="session")
def latchkey_bin() -> Path:
    explicit = os.environ.get("LATCHKEY_BIN")
    if explicit:
        path = Path(explicit)
        if not path.is_absolute():
            path = REPO / path
        if not path.exists():
            pytest.fail(f"LATCHKEY_BIN={explicit} does not exist")
        return path
    path = REPO / ".build" / "debug" / "latchkey"
    if not path.exists():
        if os.environ.get("LATCHKEY_ITEST_BUILD") == "0":
            pytest.fail(f"{path} is missing; run `swift build` (or Scripts/test.sh) first")
        result = subprocess.run(["swift", "build", "--product", "latchkey"], cwd=REPO,
                                capture_output=True, text=True, timeout=1800)
        if result.returncode != 0 or not path.exists():
            pytest.fail(f"`swift build` failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return path


@pytest.fixture
def upstream():
    """A stub upstream on an ephemeral loopback port."""
    stub = StubUpstream("upstream")
    yield stub
    stub.close()


@pytest.fixture
def make_upstream():
    """Factory for more stub upstreams: make_upstream("name")."""
    stubs = []

    def make(name: str = "upstream") -> StubUpstream:
        s = StubUpstream(name)
        stubs.append(s)
        return s

    yield make
    for s in stubs:
        s.close()


@pytest.fixture
def latchkey(latchkey_bin, tmp_path):
    """Starts latchkey processes (`.serve(cfg)`, `.quick(url)`, `.run(args)`); at the end of
    the test each one still running gets SIGTERM and must exit 0."""
    launcher = Launcher(latchkey_bin, tmp_path)
    yield launcher
    problems = launcher.stop_all()
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)


@pytest.fixture
def proxy(latchkey, upstream):
    """The common case: the quick start in front of `upstream`, injecting the bearer TOKEN."""
    return latchkey.quick(upstream.url)


@pytest.fixture
def browser(tmp_path):
    """A headless Chromium with a fresh profile (browser.py)."""
    chromium = Browser(tmp_path / "chromium")
    yield chromium
    chromium.close()


@pytest.fixture
def make_basecamp():
    """Starts Basecamp-style web apps: make_basecamp(check_token) -> BasecampEmulation
    (emulations/basecamp.py); check_token(token) returns the token's user or None."""
    started = []

    def make(check_token) -> BasecampEmulation:
        app = BasecampEmulation(check_token)
        started.append(app)
        return app

    yield make
    for app in started:
        app.close()
