"""`latchkey check` and config errors at `serve`: every problem listed, one per line, as
`FILE:LINE:COL: path: message`; `serve` refuses a bad config with a non-zero exit."""

import re
from pathlib import Path

import pytest

from support import REPO, config, dump_yaml, free_port

BAD = """\
listeners:
  - name: main
    listen: "127.0.0.1:18080"
    colour: blue
credentials:
  api:
    value: abc
routes:
  - name: api
    path: /
    upstream: ftp://example.com
    inject:
      - header: Authorization
        value: "Bearer {token}"
        credential: missing
limits:
  head_timeout: soon
"""
# line -> a word the problem's path or message must mention
BAD_PROBLEMS = {4: "colour", 11: "upstream", 15: "credential", 17: "head_timeout"}

BAD_SEMANTIC = """\
listeners:
  - name: main
    listen: "127.0.0.1:18081"
  - name: main
    listen: "not-an-address"
credentials:
  api:
    value: abc
    env: ALSO_SET
routes:
  - name: api
    listeners: [nowhere]
    path: no-leading-slash
    upstream: http://127.0.0.1:1
"""
# each problem: the lines where it may fairly be reported
BAD_SEMANTIC_PROBLEMS = {
    "duplicate listener name": {4},
    "invalid listen address": {5},
    "credential with both value and env": {6, 7, 8, 9},
    "route names an unknown listener": {12},
    "path without a leading slash": {13},
}


def problem_lines(output: str, path: Path) -> dict:
    """line number -> problem text, from lines `FILE:LINE:COL: path: message`."""
    rx = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<rest>.+)$")
    found = {}
    for line in output.splitlines():
        m = rx.match(line.strip())
        if m and Path(m["file"]).name == path.name:
            found.setdefault(int(m["line"]), []).append(m["rest"])
    return found


def test_check_accepts_good_config(latchkey, upstream):
    path = latchkey.write_config(config(upstream.url, listeners=[{"name": "main", "listen": "127.0.0.1:18082"}]))
    r = latchkey.run(["check", "--config", str(path)])
    assert r.returncode == 0, r.stdout + r.stderr


def test_check_lists_every_problem_with_lines(latchkey):
    path = latchkey.write("bad.yaml", BAD)
    r = latchkey.run(["check", "--config", str(path)])
    out = r.stdout + r.stderr
    assert r.returncode == 1, f"exit {r.returncode}\n{out}"
    found = problem_lines(out, path)
    for line, word in BAD_PROBLEMS.items():
        assert line in found, f"no problem reported at line {line} ({word}); output:\n{out}"
        assert any(word in p for p in found[line]), f"line {line} should mention {word!r}: {found[line]}"


def test_check_semantic_problems_with_lines(latchkey):
    path = latchkey.write("semantic.yaml", BAD_SEMANTIC)
    r = latchkey.run(["check", "--config", str(path)])
    out = r.stdout + r.stderr
    assert r.returncode == 1, f"exit {r.returncode}\n{out}"
    found = problem_lines(out, path)
    missing = [what for what, lines in BAD_SEMANTIC_PROBLEMS.items() if not lines & set(found)]
    assert not missing, f"not reported: {missing}; output:\n{out}"


BAD_RECIPE = """\
credentials:
  tmdb-key: { value: k }
identities:
  tmdb-user:
    grant: recipe
    base_url: https://api.themoviedb.org/3
    secrets:
      password: { value: p }
    steps:
      - name: request_token
        request: { url: authentication/token/new, query: { api_key: "{credentials.tmdb-key}" } }
        capture: { request_token: { json: request_token } }
      - name: session
        request:
          method: POST
          url: authentication/session/new
          json: { request_token: "{request_tokn}", password: "{secrets.password}" }
        capture: { session_id: { json: session_id } }
routes:
  - name: tmdb
    path: /tmdb
    upstream: https://api.themoviedb.org/3
    inject:
      - { query: session_id, identity: tmdb-user, value: "{session_id}" }
    renew_on: [{ status: 401, json: { status_code: 3 } }]
"""


def test_check_names_the_place_of_a_broken_recipe(latchkey):
    good = latchkey.write("recipe.yaml", BAD_RECIPE.replace("{request_tokn}", "{request_token}"))
    r = latchkey.run(["check", "--config", str(good)])
    assert r.returncode == 0, r.stdout + r.stderr
    path = latchkey.write("bad-recipe.yaml", BAD_RECIPE)
    r = latchkey.run(["check", "--config", str(path)])
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    found = problem_lines(out, path)
    assert list(found) == [17], out
    assert found[17] == ["identities.tmdb-user.steps[1].request.json.request_token: unknown capture 'request_tokn'; "
                         "did you mean 'request_token'? (expected a capture of an earlier step: request_token)"], out


def test_check_problem_format_is_one_per_line(latchkey):
    path = latchkey.write("bad.yaml", BAD)
    r = latchkey.run(["check", "--config", str(path)])
    lines = [l for l in (r.stdout + r.stderr).splitlines() if l.startswith(str(path)) or l.startswith(path.name)]
    assert len(lines) >= len(BAD_PROBLEMS), r.stdout + r.stderr
    for l in lines:
        assert re.match(r"^.+?:\d+:\d+: \S.*: \S.*$", l), f"not FILE:LINE:COL: path: message: {l!r}"


def test_check_yaml_syntax_error(latchkey):
    path = latchkey.write("syntax.yaml", "listeners:\n  - name: main\n    listen: [unclosed\nroutes: []\n")
    r = latchkey.run(["check", "--config", str(path)])
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert problem_lines(out, path), f"a syntax error should still be FILE:LINE:COL: ...; got:\n{out}"


def test_check_missing_file(latchkey, tmp_path):
    r = latchkey.run(["check", "--config", str(tmp_path / "nope.yaml")])
    assert r.returncode != 0
    assert "nope.yaml" in r.stdout + r.stderr


def test_check_does_not_echo_secrets(latchkey):
    text = BAD.replace("value: abc", "value: super-secret-inline-value")
    path = latchkey.write("secret.yaml", text.replace("colour: blue", "colour: [1, 2]"))
    r = latchkey.run(["check", "--config", str(path)])
    assert "super-secret-inline-value" not in r.stdout + r.stderr


def test_serve_refuses_bad_config(latchkey):
    path = latchkey.write("bad.yaml", BAD)
    r = latchkey.run(["serve", "--config", str(path)], timeout=30)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert problem_lines(out, path), f"serve should say what is wrong, as check does:\n{out}"


def test_serve_refuses_unknown_key(latchkey, upstream):
    cfg = config(upstream.url, listeners=[{"name": "main", "listen": f"127.0.0.1:{free_port()}"}])
    cfg["routes"][0]["strip_prefixx"] = True
    path = latchkey.write_config(cfg)
    r = latchkey.run(["serve", "--config", str(path)], timeout=30)
    assert r.returncode != 0
    assert "strip_prefixx" in r.stdout + r.stderr


def test_missing_env_credential_reported(latchkey, upstream):
    cfg = config(upstream.url, listeners=[{"name": "main", "listen": f"127.0.0.1:{free_port()}"}],
                 credentials={"api": {"env": "LK_ITEST_SURELY_UNSET"}})
    path = latchkey.write_config(cfg)
    r = latchkey.run(["serve", "--config", str(path)], timeout=30)
    assert r.returncode != 0, r.stdout + r.stderr
    assert "LK_ITEST_SURELY_UNSET" in r.stdout + r.stderr


def test_quick_start_flag_errors(latchkey):
    r = latchkey.run(["serve", "--listen", "127.0.0.1:1", "--upstream", "ftp://x", "--header", "Bad"], timeout=30)
    assert r.returncode != 0


def test_unknown_command(latchkey):
    r = latchkey.run(["frobnicate"])
    assert r.returncode != 0


def test_help(latchkey):
    r = latchkey.run(["--help"])
    assert r.returncode == 0
    assert "serve" in r.stdout and "check" in r.stdout


EXAMPLES = sorted((REPO / "Configs").glob("*.yaml")) + sorted((REPO / "Configs").glob("*.yml"))


@pytest.mark.parametrize("path", EXAMPLES or [None], ids=[p.name for p in EXAMPLES] or ["none"])
def test_shipped_configs_pass_check(latchkey, path):
    """The shipped examples are valid; only the secret files and variables they name (which
    exist where they are deployed, not here) may be reported missing."""
    if path is None:
        pytest.skip("no config in Configs/ yet")
    r = latchkey.run(["check", "--config", str(path)],
                     env={k: "placeholder" for k in re.findall(r"env:\s*([A-Z_][A-Z0-9_]*)", path.read_text())})
    out = r.stdout + r.stderr
    if r.returncode == 0:
        return
    found = problem_lines(out, path)
    environmental = re.compile(r"cannot (open|read)|no such file|not set|does not exist", re.I)
    real = [f"{line}: {p}" for line, ps in found.items() for p in ps if not environmental.search(p)]
    assert found and not real, f"problems in a shipped config:\n{out}"
