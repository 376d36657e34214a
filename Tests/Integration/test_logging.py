"""Logs: one access-log line per request with method, route, status, bytes and times; JSON
lines with --log-format json; and no secret ever written: injected credentials, cookies,
configured secret query parameters, inbound secrets."""

import http.client
import json
import re
import subprocess

import pytest

from support import (SECRET, TOKEN, TOKEN2, _can_connect, bearer, config, field, flatten, free_port, json_lines,
                     latchkey_environment, wait_until)

CLIENT_COOKIE = "lk-client-cookie-value-31f7"
CLIENT_AUTH = "lk-client-own-auth-9e02"
QUERY_SECRET = "lk-query-secret-c48d"


def access_lines(p, marker: str, timeout: float = 5) -> list[str]:
    wait_until(lambda: any(marker in l for l in p.log_lines()), timeout)
    return [l for l in p.log_lines() if marker in l]


def test_access_log_text_line(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, route={"name": "things"}))
    r = p.request("POST", "/echo/access-marker-1", body=b"x" * 123)
    assert r.status == 200
    lines = access_lines(p, "access-marker-1")
    assert len(lines) == 1, f"expected one access line per request:\n{p.log()}"
    line = lines[0]
    assert "POST" in line
    assert "things" in line, f"route name missing: {line}"
    assert re.search(r"\b200\b", line), f"status missing: {line}"
    assert re.search(r"byte|size|_in\b|_out\b", line, re.I), f"bytes missing: {line}"
    assert re.search(r"\b123\b", line), f"request body size (123) missing: {line}"
    assert re.search(r"ms|time|duration|elapsed|latency", line, re.I), f"times missing: {line}"


def test_one_access_line_per_request(latchkey, upstream):
    p = latchkey.serve(config(upstream.url))
    with p.conn() as c:
        for i in range(3):
            c.request("GET", f"/echo/per-request-marker?i={i}", host=p.host_header)
            assert c.read_response().status == 200
    assert wait_until(lambda: len(access_lines(p, "per-request-marker", 0)) == 3, 5), p.log()


def test_access_log_for_proxy_made_errors(latchkey, upstream):
    p = latchkey.serve(config(routes=[{"name": "api", "path": "/api", "upstream": upstream.url}]))
    assert p.get("/not-routed-marker").status == 404
    lines = access_lines(p, "not-routed-marker")
    assert lines and re.search(r"\b404\b", lines[0]), p.log()


def test_access_log_disabled(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, logging={"access_log": False}))
    assert p.get("/echo/quiet-marker").status == 200
    p.stop()
    assert "quiet-marker" not in p.log()


def _assert_all_json(p):
    lines = p.log_lines()
    assert lines, "no log output at all"
    bad = []
    for line in lines:
        try:
            json.loads(line)
        except ValueError:
            bad.append(line)
    assert not bad, "log lines that are not JSON:\n" + "\n".join(bad[:10])


def _json_access_record(p, marker: str) -> dict:
    def find():
        for rec in json_lines(p.log()):
            if any(isinstance(v, str) and marker in v for v in flatten(rec).values()):
                return rec
        return None

    rec = wait_until(find, 5)
    assert rec, f"no JSON record mentions {marker}:\n{p.log()}"
    return rec


def test_json_log_format_flag(latchkey, upstream):
    p = latchkey.quick(upstream.url, extra=["--log-format", "json"])
    assert p.get("/echo/json-marker").status == 200
    rec = _json_access_record(p, "json-marker")
    values = {str(v) for v in flatten(rec).values()}
    assert "GET" in values and "200" in values, rec
    p.stop()
    _assert_all_json(p)


def test_json_log_format_config(latchkey, upstream):
    p = latchkey.serve(config(upstream.url, logging={"format": "json"}))
    assert p.get("/echo/json-config-marker").status == 200
    rec = _json_access_record(p, "json-config-marker")
    assert field(rec, "route") == "api", rec
    assert str(field(rec, "status")) == "200", rec
    assert field(rec, "method") == "GET", rec
    p.get("/nowhere", host="evil.example")  # an error path logs too
    p.stop()
    _assert_all_json(p)


def _noisy_traffic(p, secret_header: bool = False):
    extra = [("X-Latchkey-Secret", SECRET)] if secret_header else []
    p.get(f"/echo/redact?session_id={QUERY_SECRET}&page=1",
          headers=extra + [("Cookie", f"sid={CLIENT_COOKIE}"), ("Authorization", f"Bearer {CLIENT_AUTH}")])
    p.get("/redirect", headers=extra)  # upstream Set-Cookie: sid=cookie-from-upstream
    p.get("/status/500", headers=extra)
    p.get(f"/echo?session_id={QUERY_SECRET}", headers=extra + [("Sec-Fetch-Site", "cross-site")])
    p.get(f"/echo?session_id={QUERY_SECRET}", host="evil.example")


SECRETS = [TOKEN, TOKEN2, CLIENT_COOKIE, CLIENT_AUTH, QUERY_SECRET, SECRET, "cookie-from-upstream"]


def _assert_no_secrets(p):
    log = p.log()
    leaked = [s for s in SECRETS if s in log]
    assert not leaked, f"secrets in the logs: {leaked}\n{p.log_tail(60)}"


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("level", ["info", "trace"])
def test_redaction(latchkey, upstream, tmp_path, fmt, level):
    f = tmp_path / "inbound"
    f.write_text(SECRET)
    cfg = config(
        upstream.url,
        listeners=[{"name": "main", "inbound": {"shared_secret": {"header": "X-Latchkey-Secret", "file": str(f)}}}],
        credentials={"api": {"value": TOKEN}, "session": {"value": TOKEN2}},
        route={"inject": [bearer(), {"query": "api_key", "credential": "api"},
                          {"cookie": "session", "credential": "session"}],
               "secret_query_params": ["session_id"]},
        logging={"format": fmt, "level": level},
    )
    p = latchkey.serve(cfg)
    _noisy_traffic(p, secret_header=True)
    p.get("/echo")  # without the secret
    # The access line for the secret-bearing query still exists, just redacted.
    assert access_lines(p, "/echo/redact"), p.log()
    p.stop()
    _assert_no_secrets(p)


def test_redaction_quick_start(latchkey, upstream):
    p = latchkey.quick(upstream.url, headers=[f"Authorization: Bearer {TOKEN}", f"X-Api-Key: {TOKEN2}"])
    _noisy_traffic(p)
    p.stop()
    log = p.log()
    assert TOKEN not in log and TOKEN2 not in log, p.log_tail()
    assert CLIENT_COOKIE not in log and CLIENT_AUTH not in log


def test_token_not_in_process_arguments_with_token_file(latchkey, upstream, tmp_path):
    f = tmp_path / "token"
    f.write_text(TOKEN)
    p = latchkey.quick(upstream.url, headers=[], extra=["--bearer-token-file", str(f)])
    cmdline = open(f"/proc/{p.proc.pid}/cmdline", "rb").read()
    assert TOKEN.encode() not in cmdline


def test_a_log_output_nobody_reads_does_not_stall_the_proxy(latchkey, latchkey_bin, upstream, tmp_path):
    """With its log a pipe that nobody reads (a stuck log shipper, `latchkey serve | less`),
    the proxy keeps answering: lines that do not fit its buffer are dropped and counted, and
    once the output moves again a line says how many were lost."""
    port = free_port()
    cfg = config(upstream.url, listeners=[{"name": "main", "listen": f"127.0.0.1:{port}"}])
    path = latchkey.write_config(cfg)
    proc = subprocess.Popen([str(latchkey_bin), "serve", "--config", str(path)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=latchkey_environment(tmp_path, None), start_new_session=True)
    try:
        assert wait_until(lambda: _can_connect(("127.0.0.1", port)), 30), "latchkey did not start listening"
        # Access lines about 3 KiB long: a few hundred outgrow the pipe and the 1 MiB buffer.
        target = "/echo/stuck-log?" + "p=" + "x" * 3000
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for _ in range(600):
            client.request("GET", target)
            response = client.getresponse()
            response.read()
            assert response.status == 200
        client.request("GET", "/.latchkey/metrics")
        metrics = client.getresponse().read().decode()
        dropped = re.search(r"^latchkey_log_lines_dropped_total (\d+)", metrics, re.M)
        assert dropped and int(dropped.group(1)) > 0, metrics
    finally:
        proc.terminate()
        log = proc.stderr.read().decode()
        proc.wait(20)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == 0, log[-2000:]
    notes = [int(m) for m in re.findall(r"log lines dropped.* dropped=(\d+)", log)]
    assert notes and sum(notes) == int(dropped.group(1)), log[-2000:]
