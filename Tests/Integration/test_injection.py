"""Credential injection: headers with templates, query parameters, cookies, where secrets
come from, and what happens to the client's own Authorization header."""

import os
import re
import time
import urllib.parse

from support import TOKEN, TOKEN2, bearer, config, wait_until


def echo(proxy, target="/echo", **kw):
    r = proxy.get(target, **kw)
    assert r.status == 200, r
    return r.json()


def headers_named(seen: dict, name: str) -> list:
    return [v for k, v in seen["headers"] if k.lower() == name.lower()]


def test_quick_start_injects_bearer(proxy, upstream):
    seen = echo(proxy)
    assert headers_named(seen, "Authorization") == [f"Bearer {TOKEN}"]


def test_quick_start_repeated_header_flags(latchkey, upstream):
    p = latchkey.quick(upstream.url, headers=[f"Authorization: Bearer {TOKEN}", "X-Api-Key: k-123"])
    seen = echo(p)
    assert headers_named(seen, "Authorization") == [f"Bearer {TOKEN}"]
    assert headers_named(seen, "X-Api-Key") == ["k-123"]


def test_quick_start_bearer_token_file(latchkey, upstream, tmp_path):
    f = tmp_path / "token"
    f.write_text(TOKEN + "\n")  # a trailing newline, as editors and `echo` leave it
    p = latchkey.quick(upstream.url, headers=[], extra=["--bearer-token-file", str(f)])
    seen = echo(p)
    assert headers_named(seen, "Authorization") == [f"Bearer {TOKEN}"]


def test_client_authorization_replaced_by_injected(proxy, upstream):
    seen = echo(proxy, headers=[("Authorization", "Bearer client-own-token")])
    assert headers_named(seen, "Authorization") == [f"Bearer {TOKEN}"]


def test_client_authorization_dropped_case_insensitively(proxy, upstream):
    seen = echo(proxy, headers=[("authorization", "Basic Y2xpZW50OnB3"), ("AUTHORIZATION", "Bearer x")])
    assert headers_named(seen, "Authorization") == [f"Bearer {TOKEN}"]


def test_header_templates(latchkey, upstream):
    cfg = config(upstream.url, route={"inject": [
        bearer(template="OAuth2 {token}"),
        bearer(header="X-Api-Key", template="{token}"),
        {"header": "X-Wrapped", "value": "pre-{token}-post", "credential": "api"},
    ]})
    p = latchkey.serve(cfg)
    seen = echo(p)
    assert headers_named(seen, "Authorization") == [f"OAuth2 {TOKEN}"]
    assert headers_named(seen, "X-Api-Key") == [TOKEN]
    assert headers_named(seen, "X-Wrapped") == [f"pre-{TOKEN}-post"]


def test_injected_header_replaces_client_copy(latchkey, upstream):
    cfg = config(upstream.url, route={"inject": [bearer(header="X-Api-Key", template="{token}")]})
    p = latchkey.serve(cfg)
    seen = echo(p, headers=[("X-Api-Key", "client-guess")])
    assert headers_named(seen, "X-Api-Key") == [TOKEN]


def test_pass_client_authorization(latchkey, upstream):
    cfg = config(upstream.url, route={"inject": [bearer(header="X-Api-Key", template="{token}")],
                                      "pass_client_authorization": True})
    p = latchkey.serve(cfg)
    seen = echo(p, headers=[("Authorization", "Bearer client-own-token")])
    assert headers_named(seen, "Authorization") == ["Bearer client-own-token"]
    assert headers_named(seen, "X-Api-Key") == [TOKEN]


def test_route_without_injection_forwards_client_authorization(latchkey, upstream):
    cfg = config(upstream.url, route={"inject": []})
    p = latchkey.serve(cfg)
    seen = echo(p, headers=[("Authorization", "Bearer client-own-token")])
    assert headers_named(seen, "Authorization") == ["Bearer client-own-token"]


def test_query_injection(latchkey, upstream):
    cfg = config(upstream.url, route={"inject": [{"query": "api_key", "credential": "api"}]})
    p = latchkey.serve(cfg)
    seen = echo(p, target="/echo/items?q=a%20b&page=2")
    pairs = urllib.parse.parse_qsl(seen["query"], keep_blank_values=True)
    assert ("api_key", TOKEN) in pairs
    assert ("q", "a b") in pairs and ("page", "2") in pairs
    assert seen["path"] == "/echo/items"


def test_query_injection_without_client_query(latchkey, upstream):
    cfg = config(upstream.url, route={"inject": [{"query": "api_key", "credential": "api"}]})
    p = latchkey.serve(cfg)
    seen = echo(p, target="/echo")
    assert urllib.parse.parse_qsl(seen["query"]) == [("api_key", TOKEN)]


def test_query_injection_overrides_client_value(latchkey, upstream):
    cfg = config(upstream.url, route={"inject": [{"query": "api_key", "credential": "api"}]})
    p = latchkey.serve(cfg)
    seen = echo(p, target="/echo?api_key=client-guess&x=1")
    values = [v for k, v in urllib.parse.parse_qsl(seen["query"]) if k == "api_key"]
    assert values == [TOKEN]


def _as_a_lenient_upstream_reads(pairs_text: str, separators: str) -> dict:
    """Names decoded as PHP, Rails, qs or a servlet might: separators `&` and `;` (or `;` and
    `,` for cookies), percent-decoding, `[...]` suffixes, whitespace, `.` as `_`, any case."""
    out = {}
    for part in re.split(f"[{separators}]", pairs_text):
        name, _, value = part.partition("=")
        name = urllib.parse.unquote_plus(urllib.parse.unquote_plus(name)).split("[")[0].strip()
        if name:
            out.setdefault(name.replace(".", "_").replace(" ", "_").lower(), []).append(value)
    return out


def test_client_parameters_an_upstream_may_read_as_the_injected_one_are_removed(latchkey, upstream):
    cfg = config(upstream.url, route={"inject": [{"query": "api_key", "credential": "api"}]})
    p = latchkey.serve(cfg)
    target = "/echo?api%5Fkey=forged1&a=1;api_key=forged2&api_key[]=forged3&+api_key=forged4&API.KEY=forged5&b=2"
    seen = echo(p, target=target)
    read = _as_a_lenient_upstream_reads(seen["query"], "&;")
    assert read["api_key"] == [TOKEN], seen["query"]
    assert read["a"] == ["1"] and read["b"] == ["2"], seen["query"]


def test_client_cookies_an_upstream_may_read_as_the_injected_one_are_removed(latchkey, upstream):
    cfg = config(upstream.url, route={"inject": [{"cookie": "sess", "credential": "api"}]})
    p = latchkey.serve(cfg)
    seen = echo(p, headers=[("Cookie", "sess =forged1; theme=dark; sess[]=forged2, x=1"), ("Cookie", "%73ess=forged3")])
    cookies = headers_named(seen, "Cookie")
    assert len(cookies) == 1, cookies
    read = _as_a_lenient_upstream_reads(cookies[0], ";,")
    assert read["sess"] == [TOKEN], cookies
    assert read["theme"] == ["dark"] and read["x"] == ["1"], cookies


def test_two_query_credentials_tmdb_style(latchkey, upstream):
    cfg = config(upstream.url,
                 credentials={"api": {"value": TOKEN}, "session": {"value": TOKEN2}},
                 route={"inject": [{"query": "api_key", "credential": "api"},
                                   {"query": "session_id", "credential": "session"}]})
    p = latchkey.serve(cfg)
    pairs = urllib.parse.parse_qsl(echo(p, target="/echo/account")["query"])
    assert ("api_key", TOKEN) in pairs and ("session_id", TOKEN2) in pairs


def _cookies(seen: dict) -> dict:
    out = {}
    for value in headers_named(seen, "Cookie"):
        for part in value.split(";"):
            k, _, v = part.strip().partition("=")
            if k:
                out.setdefault(k, []).append(v)
    return out


def test_cookie_injection(latchkey, upstream):
    cfg = config(upstream.url, route={"inject": [{"cookie": "session", "credential": "api"}]})
    p = latchkey.serve(cfg)
    assert _cookies(echo(p)) == {"session": [TOKEN]}


def test_cookie_injection_keeps_client_cookies(latchkey, upstream):
    cfg = config(upstream.url, route={"inject": [{"cookie": "session", "credential": "api"}]})
    p = latchkey.serve(cfg)
    cookies = _cookies(echo(p, headers=[("Cookie", "theme=dark; session=client-guess")]))
    assert cookies.get("theme") == ["dark"]
    assert cookies.get("session") == [TOKEN]


def test_credential_from_env(latchkey, upstream):
    cfg = config(upstream.url, credentials={"api": {"env": "LK_ITEST_TOKEN"}})
    p = latchkey.serve(cfg, env={"LK_ITEST_TOKEN": TOKEN})
    assert headers_named(echo(p), "Authorization") == [f"Bearer {TOKEN}"]


def test_credential_from_file_and_rotation(latchkey, upstream, tmp_path):
    secret_dir = tmp_path / "secrets"
    secret_dir.mkdir()
    f = secret_dir / "token"
    f.write_text(TOKEN + "\n")
    cfg = config(upstream.url, credentials={"api": {"file": str(f)}})
    p = latchkey.serve(cfg)
    assert headers_named(echo(p), "Authorization") == [f"Bearer {TOKEN}"]
    # Rotate the way Kubernetes does: write a new file, rename it over the old one.
    tmp = secret_dir / ".token.new"
    tmp.write_text(TOKEN2 + "\n")
    os.replace(tmp, f)
    rotated = wait_until(lambda: headers_named(echo(p), "Authorization") == [f"Bearer {TOKEN2}"],
                         timeout=15, interval=0.25)
    assert rotated, "the rotated token file was not picked up within 15 s"


def test_credential_file_rewritten_in_place(latchkey, upstream, tmp_path):
    f = tmp_path / "token"
    f.write_text(TOKEN)
    p = latchkey.serve(config(upstream.url, credentials={"api": {"file": str(f)}}))
    assert headers_named(echo(p), "Authorization") == [f"Bearer {TOKEN}"]
    time.sleep(1.1)  # a new mtime second, for implementations that compare mtimes
    f.write_text(TOKEN2)
    assert wait_until(lambda: headers_named(echo(p), "Authorization") == [f"Bearer {TOKEN2}"],
                      timeout=15, interval=0.25), "the rewritten token file was not picked up"
