"""A real headless Chromium through a `tls: {local_ca: true}` listener: the CA that
`latchkey ca path` names, trusted in the browser's NSS database as the README tells people
to, makes the page load over HTTPS, and the handoff's session cookie keeps its `Secure`
flag there (on plain HTTP the proxy drops it, test_handoff.py)."""

import pytest

from browser import Browser
from support import TOKEN, config
from tls_support import nss_home, tls_listener


def handoff_over_tls(app) -> dict:
    """test_handoff.py's route to the Basecamp-style app, on a local_ca listener."""
    route = {"name": "web", "path": "/", "upstream": app.url,
             "inject": [{"header": "Authorization", "value": "Bearer {access_token}", "identity": "bc"}],
             "handoff": {"url": "/session/from_token"}}
    return config(routes=[route], credentials={}, listeners=[tls_listener(local_ca=True)],
                  identities={"bc": {"grant": "static", "token": {"value": TOKEN}}})


def ca_path(latchkey, proxy) -> str:
    done = latchkey.run(["ca", "path", "--config", str(proxy.config_path)])
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def browsers(tmp_path):
    """Starts Chromiums with a HOME of their own: browsers(home) -> Browser."""
    started = []

    def start(home):
        chromium = Browser(tmp_path / f"chromium-{len(started)}", home=home)
        started.append(chromium)
        return chromium

    yield start
    for chromium in started:
        chromium.close()


def test_chromium_trusting_the_local_ca_gets_the_page_and_a_secure_session_cookie(latchkey, make_basecamp, browsers,
                                                                                    tmp_path):
    app = make_basecamp(lambda token: "alice" if token == TOKEN else None)
    proxy = latchkey.serve(handoff_over_tls(app))
    url = f"https://127.0.0.1:{proxy.port}/projects"

    browser = browsers(nss_home(tmp_path / "home", ca_path(latchkey, proxy)))
    page = browser.open(url)
    assert "Projects of alice" in page.html, page.html
    assert page.url == url
    assert app.counters()["handoff"] == 1
    page = browser.open(f"https://127.0.0.1:{proxy.port}/projects/2")
    assert "/projects/2" in page.html and app.counters()["handoff"] == 1, page.html
    cookies = {c["name"]: c for c in browser.cookies()}
    session = cookies["session"]
    assert session["secure"] and session["httpOnly"] and session["domain"] == "127.0.0.1", session
    assert "latchkey_handoff" not in cookies
    assert browser.evaluate("location.protocol") == "https:"

    # The same browser without the CA in its database refuses the proxy's certificate.
    stranger = browsers(tmp_path / "empty-home")
    with pytest.raises(AssertionError, match="ERR_CERT_AUTHORITY_INVALID"):
        stranger.open(url)
