"""The proxy's own session cookie on a listener with `inbound.session`: `latchkey
login-link ROUTE` prints a one-time URL signed with the session key; opening it sets
`latchkey_session`, which every request must then present. Forged, expired and missing
cookies are refused; a rotated key keeps old sessions until they expire."""

import base64
import os
import re
import urllib.parse

from support import config, free_port, wait_until


def key_file(tmp_path, name: str, mode: int = 0o600):
    path = tmp_path / name
    path.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
    path.chmod(mode)
    return path


def session_config(upstream, port: int, key, previous=(), **session) -> dict:
    inbound = {"session": {"key_file": str(key), "previous_key_files": [str(p) for p in previous], **session}}
    return config(upstream.url, listeners=[{"name": "lan", "listen": f"127.0.0.1:{port}", "inbound": inbound}])


def login_link(latchkey, cfg: dict, route: str = "api") -> str:
    done = latchkey.run(["login-link", route, "--config", str(latchkey.write_config(cfg))])
    assert done.returncode == 0, done.stderr
    link = done.stdout.strip()
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\.latchkey/login\?token=[A-Za-z0-9._-]+", link), link
    return link


def open_link(proxy, link: str):
    split = urllib.parse.urlsplit(link)
    return proxy.get(f"{split.path}?{split.query}")


def session_cookie(response) -> str:
    value = response.header("Set-Cookie")
    assert value and value.startswith("latchkey_session="), response
    return value.split(";")[0]


def with_cookie(cookie: str) -> list:
    return [("Cookie", cookie)]


def test_a_login_link_gives_a_session_once(latchkey, upstream, tmp_path):
    cfg = session_config(upstream, free_port(), key_file(tmp_path, "session.key"))
    proxy = latchkey.serve(cfg)
    missing = proxy.get("/v1/me")
    assert missing.status == 401 and "latchkey login-link" in missing.json()["message"], missing
    assert proxy.get("/.latchkey/health").status == 200  # probes need no session

    link = login_link(latchkey, cfg)
    r = open_link(proxy, link)
    assert r.status == 303 and r.header("Location") == "/", r
    attributes = [a.strip() for a in r.header("Set-Cookie").split(";")[1:]]
    assert attributes == ["Max-Age=43200", "Path=/", "HttpOnly", "SameSite=Lax"]  # no Secure: plain HTTP
    assert r.header("Referrer-Policy") == "no-referrer"
    cookie = session_cookie(r)

    r = proxy.get("/v1/me", headers=with_cookie("theme=dark; " + cookie))
    assert r.status == 200, r
    forwarded = [v for k, v in r.json()["headers"] if k.lower() == "cookie"]
    assert forwarded == ["theme=dark"]  # the proxy's own cookie stays with the proxy

    again = open_link(proxy, link)
    assert again.status == 401 and b"used already" in again.body, again
    assert again.header("Content-Type").startswith("text/html")
    token = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["token"][0]
    assert token not in proxy.log()


def test_forged_expired_and_missing_sessions_are_refused(latchkey, upstream, tmp_path):
    cfg = session_config(upstream, free_port(), key_file(tmp_path, "session.key"), lifetime="2s", link_lifetime="1s")
    proxy = latchkey.serve(cfg)
    cookie = session_cookie(open_link(proxy, login_link(latchkey, cfg)))
    assert proxy.get("/x", headers=with_cookie(cookie)).status == 200

    name, value = cookie.split("=", 1)
    payload, mac = value.rsplit(".", 1)
    kind, ident, expiry = payload.split(".")
    forged = [
        f"{name}={kind}.{ident}.{int(expiry) + 3600}.{mac}",            # a later expiry, same MAC
        f"{name}={payload}.{mac[:-2]}{'AA' if not mac.endswith('AA') else 'BB'}",  # another MAC
        f"{name}={payload}",                                            # no MAC
        f"{name}=",
    ]
    for bad in forged:
        assert proxy.get("/x", headers=with_cookie(bad)).status == 401, bad
    # A session signed with another key (another proxy's) is not one.
    other = session_config(upstream, free_port(), key_file(tmp_path, "other.key"))
    stranger = latchkey.serve(other)
    assert stranger.get("/x", headers=with_cookie(cookie)).status == 401

    # Expired: the session after its lifetime, a link after its own.
    assert wait_until(lambda: proxy.get("/x", headers=with_cookie(cookie)).status == 401, timeout=8)
    link = login_link(latchkey, cfg)
    assert wait_until(lambda: b"expired" in open_link(proxy, link).body, timeout=8)


def test_a_rotated_key_keeps_the_sessions_it_signed_until_they_expire(latchkey, upstream, tmp_path):
    port = free_port()
    old_key, new_key = key_file(tmp_path, "session.key.1"), key_file(tmp_path, "session.key")
    before = session_config(upstream, port, old_key, lifetime="4s")
    proxy = latchkey.serve(before)
    old_session = session_cookie(open_link(proxy, login_link(latchkey, before)))
    proxy.stop()

    rotated = session_config(upstream, port, new_key, previous=[old_key], lifetime="1h")
    proxy = latchkey.serve(rotated)
    assert proxy.get("/x", headers=with_cookie(old_session)).status == 200
    new_session = session_cookie(open_link(proxy, login_link(latchkey, rotated)))
    assert proxy.get("/x", headers=with_cookie(new_session)).status == 200
    # The old session ends at its own expiry, the new one goes on.
    assert wait_until(lambda: proxy.get("/x", headers=with_cookie(old_session)).status == 401, timeout=10)
    assert proxy.get("/x", headers=with_cookie(new_session)).status == 200
    proxy.stop()

    # Once the old key is dropped from the configuration, nothing it signed is accepted.
    dropped = session_config(upstream, port, new_key)
    proxy = latchkey.serve(dropped)
    assert proxy.get("/x", headers=with_cookie(new_session)).status == 200
    assert proxy.get("/x", headers=with_cookie(old_session)).status == 401


def test_the_session_key_must_be_private(latchkey, upstream, tmp_path):
    cfg = session_config(upstream, free_port(), key_file(tmp_path, "session.key", mode=0o644))
    path = latchkey.write_config(cfg)
    served = latchkey.run(["serve", "--config", str(path)], timeout=30)
    assert served.returncode != 0 and "accessible by others" in served.stderr and "chmod 600" in served.stderr, served.stderr
    link = latchkey.run(["login-link", "api", "--config", str(path)])
    assert link.returncode == 1 and "accessible by others" in link.stderr, link.stderr


def test_login_link_says_what_is_missing(latchkey, upstream, tmp_path):
    key = key_file(tmp_path, "session.key")
    cfg = session_config(upstream, free_port(), key)
    cfg["listeners"].append({"name": "local", "listen": f"127.0.0.1:{free_port()}"})
    cfg["routes"].append({"name": "local-only", "path": "/local", "upstream": upstream.url, "listeners": ["local"]})
    path = str(latchkey.write_config(cfg))
    assert "no route nope" in latchkey.run(["login-link", "nope", "--config", path]).stderr
    assert "no listener with inbound.session" in latchkey.run(["login-link", "local-only", "--config", path]).stderr
    cfg["listeners"][0]["listen"] = f"0.0.0.0:{free_port()}"
    path = str(latchkey.write_config(cfg))
    assert "--host" in latchkey.run(["login-link", "api", "--config", path]).stderr
    done = latchkey.run(["login-link", "api", "--config", path, "--host", "laptop.local:9000"])
    assert done.returncode == 0 and done.stdout.startswith("http://laptop.local:9000/.latchkey/login?token="), done
    bad = latchkey.run(["login-link", "api", "--config", path, "--host", "evil.example/x?"])
    assert bad.returncode != 0 and "--host must be a host name" in bad.stderr and bad.stdout == ""
