"""`latchkey check` on forward listeners and allow rules: each problem at its line, as
`FILE:LINE:COL: path: message`, and a good forward configuration accepted."""

from test_config import problem_lines

GOOD = """\
listeners:
  - { name: main, listen: "127.0.0.1:18090" }
  - name: agent
    listen: "0.0.0.0:18091"
    mode: forward
    tunnel: [pypi.org, "*.pythonhosted.org"]
    inbound: { proxy_auth: { value: pw } }
routes:
  - name: github
    listeners: [agent]
    host: api.github.com
    upstream: https://api.github.com
    allow: [{ method: GET, path: /repos/** }]
"""

BAD = """\
listeners:
  - name: agent
    listen: "0.0.0.0:18091"
    mode: forward
    tls: { local_ca: true }
    tunnel: ["*"]
    allowed_hosts: [api.local]
  - name: main
    listen: "127.0.0.1:18090"
    inbound: { proxy_auth: { value: pw } }
routes:
  - name: github
    listeners: [agent]
    upstream: https://api.github.com
    allow: [{ method: GET, path: "/repos/**.json" }]
"""
# line -> words the problem there must mention
BAD_PROBLEMS = {
    3: "inbound.proxy_auth",  # reachable from other machines, no check
    5: "CONNECT tunnels",
    6: "open proxy",
    7: "target host",
    10: "reverse listener",
    12: "missing key 'host'",
    15: "whole segment",
}


def test_check_accepts_a_forward_listener(latchkey):
    path = latchkey.write("forward.yaml", GOOD)
    r = latchkey.run(["check", "--config", str(path)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 listeners, 1 route" in r.stdout


def test_check_places_every_forward_problem(latchkey):
    path = latchkey.write("forward-bad.yaml", BAD)
    r = latchkey.run(["check", "--config", str(path)])
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    found = problem_lines(out, path)
    assert set(found) == set(BAD_PROBLEMS), out
    for line, word in BAD_PROBLEMS.items():
        assert any(word in p for p in found[line]), f"line {line} should mention {word!r}: {found[line]}"
