"""Session recipes (`grant: recipe`) through the real binary: Configs/tmdb.yaml, with only its
addresses swapped, against the TheMovieDB emulation (emulations/tmdb.py). The session is made
on the first request in TMDB's three calls; `api_key` and `session_id` go on every call and
into no log; an invalidated session (401 `status_code` 3) is made again once for many waiting
requests, which are replayed, bodies intact; a refused API key (`status_code` 7) is not a
reason for a new session; the session survives a restart, sealed in the store when a key is
set; a wrong password is named at its step; `status`, `token --field` and `logout` know the
recipe's captures; a `lifetime` expires the session; an HTML answer is a clear error."""

import base64
import copy
import json
import os
import stat
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

from emulations.tmdb import query_values
from support import latchkey_environment, wait_until
from test_login import login_config_file
from test_schemes import example

RECIPE = ["token_new", "validate_with_login", "session_new"]
KEY = base64.b64encode(bytes(range(32))).decode()
WRONG_PASSWORD = "lk-itest-wrong-tmdb-password-0c1d"


def tmdb_config(tmdb, **identity) -> dict:
    """Configs/tmdb.yaml with its steps and its route pointed at the emulation."""
    cfg = example("tmdb.yaml")
    cfg["listeners"] = [{"name": "main"}]
    user = cfg["identities"]["tmdb-user"]
    user["base_url"] = tmdb.base_url
    user.update(identity)
    cfg["routes"][0]["upstream"] = tmdb.base_url
    return cfg


def tmdb_env(tmdb, password: str | None = None, **extra) -> dict:
    return {"TMDB_API_KEY": tmdb.api_key, "TMDB_USERNAME": tmdb.username,
            "TMDB_PASSWORD": password or tmdb.password, **extra}


def serve(latchkey, tmdb, cfg: dict | None = None, **env):
    return latchkey.serve(cfg or tmdb_config(tmdb), env=tmdb_env(tmdb, **env))


def cli(latchkey, tmdb, *args, **env):
    return latchkey.run(list(args), env=tmdb_env(tmdb, **env))


def config_file(latchkey, tmdb, cfg: dict | None = None) -> str:
    return login_config_file(latchkey, cfg or tmdb_config(tmdb))


def endpoints(tmdb) -> list[str]:
    return [call.endpoint for call in tmdb.calls()]


def session_of(call) -> str:
    (session,) = query_values(call, "session_id")
    return session


def store_file(latchkey):
    return latchkey.workdir / "state" / "latchkey" / "tmdb-user.json"


def favorite_path(tmdb) -> str:
    return f"/tmdb/account/{tmdb.account_id}/favorite"


def post_json(proxy, target: str, body: bytes):
    return proxy.request("POST", target, headers=[("Content-Type", "application/json")], body=body)


def secrets_of(tmdb) -> list[str]:
    """Every secret the recipe handles or makes, for greps of outputs."""
    request_tokens = {c.json()["request_token"] for c in tmdb.calls() if c.endpoint in RECIPE[1:]}
    sessions = {session_of(c) for c in tmdb.calls() if query_values(c, "session_id")}
    return [tmdb.api_key, tmdb.password, WRONG_PASSWORD, *request_tokens, *sessions, *tmdb.live_sessions(),
            *tmdb.deleted_sessions()]


def assert_no_secret(tmdb, *outputs: str) -> None:
    for secret in secrets_of(tmdb):
        for output in outputs:
            assert secret not in output, f"a secret ({secret[:6]}…) in:\n{output[-3000:]}"


# ----- the session ------------------------------------------------------------------------------

def test_the_session_is_made_on_the_first_request_in_three_calls(latchkey, tmdb):
    proxy = serve(latchkey, tmdb)
    assert tmdb.calls() == [], "the session is made when a request needs it, not at start"

    r = proxy.get("/tmdb/account")
    assert r.status == 200, r
    assert (r.json()["id"], r.json()["username"]) == (tmdb.account_id, tmdb.username)
    assert endpoints(tmdb) == RECIPE + ["account"]
    assert tmdb.sessions_created == 1

    token_new, validate, session_new, account = tmdb.calls()
    assert (token_new.method, token_new.query, token_new.body) == ("GET", {"api_key": tmdb.api_key}, b"")
    request_token = validate.json()["request_token"]
    assert validate.method == "POST" and validate.content_type.startswith("application/json")
    assert validate.query == {"api_key": tmdb.api_key}
    assert validate.json() == {"username": tmdb.username, "password": tmdb.password, "request_token": request_token}
    assert session_new.method == "POST" and session_new.query == {"api_key": tmdb.api_key}
    assert session_new.json() == {"request_token": request_token}
    assert query_values(account, "api_key") == [tmdb.api_key]
    assert query_values(account, "session_id") == tmdb.live_sessions()

    assert proxy.get("/tmdb/account").status == 200
    assert tmdb.sessions_created == 1 and endpoints(tmdb) == RECIPE + ["account", "account"]


def test_api_key_and_session_id_go_on_every_call_and_into_no_log(latchkey, tmdb):
    cfg = tmdb_config(tmdb)
    cfg["logging"] = {"level": "debug"}
    proxy = serve(latchkey, tmdb, cfg)
    assert proxy.get("/tmdb/account?language=en-US").status == 200
    assert proxy.get(f"{favorite_path(tmdb)}/movies?page=1").status == 200
    body = json.dumps({"media_type": "movie", "media_id": 550, "favorite": True}).encode()
    assert post_json(proxy, favorite_path(tmdb), body).status == 201

    (session,) = tmdb.live_sessions()
    api_calls = [c for c in tmdb.calls() if c.endpoint not in RECIPE]
    assert [c.endpoint for c in api_calls] == ["account", "favorite_movies", "favorite"]
    for call in tmdb.calls():
        assert query_values(call, "api_key") == [tmdb.api_key], call
    for call in api_calls:
        assert query_values(call, "session_id") == [session], call
    assert query_values(api_calls[0], "language") == ["en-US"] and query_values(api_calls[1], "page") == ["1"]

    assert proxy.stop() == 0
    log = proxy.log()
    assert "/tmdb/account" in log and "favorite" in log, "no access log to check"
    assert_no_secret(tmdb, log)


def test_an_invalidated_session_is_made_again_once_for_50_waiting_requests_and_a_post_is_replayed(latchkey, tmdb):
    proxy = serve(latchkey, tmdb)
    movies = f"{favorite_path(tmdb)}/movies"
    assert proxy.get(movies).status == 200
    (first,) = tmdb.live_sessions()

    # TMDB forgets the session; the new one is slow to come, so that the requests wait for it.
    assert tmdb.invalidate_session() == 1
    tmdb.slow("session_new", 0.5)
    with ThreadPoolExecutor(50) as pool:
        replies = list(pool.map(lambda i: proxy.get(f"{movies}?page={i + 1}"), range(50)))
    assert [r.status for r in replies] == [200] * 50, [r for r in replies if r.status != 200][:3]
    assert tmdb.sessions_created == 2, proxy.log_tail()
    assert endpoints(tmdb).count("token_new") == endpoints(tmdb).count("session_new") == 2
    (second,) = tmdb.live_sessions()
    sessions = [session_of(c) for c in tmdb.calls("favorite_movies")[1:]]
    assert set(sessions) == {first, second}
    assert sessions.count(second) == 50, "each request answered once, with the new session"
    pages = sorted(int(query_values(c, "page")[0]) for c in tmdb.calls("favorite_movies") if session_of(c) == second)
    assert pages == list(range(1, 51))

    # A JSON POST refused for its session is replayed, byte for byte, with the next one.
    tmdb.slow("session_new", 0)
    assert tmdb.invalidate_session() == 1
    body = json.dumps({"media_type": "movie", "media_id": 550, "favorite": True}).encode()
    r = post_json(proxy, favorite_path(tmdb), body)
    assert r.status == 201 and r.json()["status_code"] == 1, r
    refused, replayed = tmdb.calls("favorite")
    assert refused.body == replayed.body == body
    assert replayed.content_type.startswith("application/json")
    assert session_of(refused) == second and session_of(replayed) == tmdb.live_sessions()[0] != second
    assert tmdb.sessions_created == 3 and tmdb.favorites() == [550]


def test_a_refused_api_key_is_passed_through_without_a_new_session(latchkey, tmdb):
    proxy = serve(latchkey, tmdb)
    assert proxy.get("/tmdb/account").status == 200
    tmdb.revoke_api_key()
    r = proxy.get("/tmdb/account")
    assert r.status == 401, r
    assert r.json() == {"success": False, "status_code": 7,
                        "status_message": "Invalid API key: You must be granted a valid key."}
    assert endpoints(tmdb) == RECIPE + ["account", "account"], "a new session cannot mend an API key"
    assert tmdb.sessions_created == 1


def test_a_restart_reuses_the_stored_session(latchkey, tmdb):
    first = serve(latchkey, tmdb)
    assert first.get("/tmdb/account").status == 200
    assert first.stop() == 0
    second = serve(latchkey, tmdb)
    assert second.get("/tmdb/account").status == 200
    assert endpoints(tmdb) == RECIPE + ["account", "account"]
    assert len({session_of(c) for c in tmdb.calls("account")}) == 1
    assert tmdb.sessions_created == 1


def test_a_sealed_store_keeps_no_session_id_in_clear(latchkey, tmdb):
    proxy = serve(latchkey, tmdb, LATCHKEY_STORE_KEY=KEY)
    assert proxy.get("/tmdb/account").status == 200
    (session,) = tmdb.live_sessions()
    path = store_file(latchkey)
    assert wait_until(path.exists, 5), list(path.parent.iterdir())
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    text = path.read_text()
    assert set(json.loads(text)) == {"format", "cipher", "nonce", "ciphertext", "tag"}
    assert_no_secret(tmdb, text)
    assert proxy.stop() == 0
    # The same key opens it: the session comes back.
    again = serve(latchkey, tmdb, LATCHKEY_STORE_KEY=KEY)
    assert again.get("/tmdb/account").status == 200
    assert tmdb.sessions_created == 1 and session_of(tmdb.calls("account")[-1]) == session


# ----- failures ---------------------------------------------------------------------------------

def test_a_wrong_password_fails_at_validate_with_login_and_is_shown_nowhere(latchkey, tmdb):
    proxy = serve(latchkey, tmdb, password=WRONG_PASSWORD)
    r = proxy.get("/tmdb/account")
    assert r.status == 503 and r.json()["error"] == "identity_unavailable", r
    message = r.json()["message"]
    assert "step 'validate_with_login'" in message and "HTTP 401" in message, message
    assert "identities.tmdb-user.secrets.password" in message, message
    assert endpoints(tmdb) == ["token_new", "validate_with_login"], "no session, no API call"
    assert tmdb.calls("validate_with_login")[0].json()["password"] == WRONG_PASSWORD
    line = proxy.wait_log(r"event=failed", timeout=5)
    assert line and "step 'validate_with_login'" in line, proxy.log_tail()

    token = cli(latchkey, tmdb, "token", "tmdb-user", "--config", config_file(latchkey, tmdb), password=WRONG_PASSWORD)
    assert token.returncode == 1 and token.stdout == ""
    assert "step 'validate_with_login'" in token.stderr, token.stderr
    assert proxy.stop() == 0
    assert_no_secret(tmdb, r.body.decode(), proxy.log(), token.stderr)


def test_an_html_answer_where_json_is_captured_is_a_clear_error_and_the_server_stays_up(latchkey, tmdb):
    tmdb.answer_html("session_new", 200)
    proxy = serve(latchkey, tmdb)
    r = proxy.get("/tmdb/account")
    assert r.status == 503 and r.json()["error"] == "identity_unavailable", r
    message = r.json()["message"]
    assert "step 'session'" in message and "not JSON (text/html)" in message, message
    assert proxy.alive() and proxy.get("/.latchkey/health").status == 200
    assert endpoints(tmdb) == RECIPE

    # The page goes away: a later attempt (after the back-off) makes the session.
    tmdb.answer_html("session_new", None)
    assert wait_until(lambda: proxy.get("/tmdb/account").status == 200, timeout=15), proxy.log_tail()
    assert tmdb.sessions_created == 1
    assert_no_secret(tmdb, r.body.decode(), proxy.log())


# ----- lifetime ---------------------------------------------------------------------------------

def test_a_lifetime_makes_a_new_session_after_it(latchkey, tmdb):
    proxy = serve(latchkey, tmdb, tmdb_config(tmdb, lifetime="2s", clock_skew="0s", refresh_ahead="0s"))
    assert proxy.get("/tmdb/account").status == 200
    (first,) = tmdb.live_sessions()
    assert proxy.get("/tmdb/account").status == 200
    assert tmdb.sessions_created == 1
    time.sleep(2.3)
    assert proxy.get("/tmdb/account").status == 200
    assert tmdb.sessions_created == 2
    assert [session_of(c) for c in tmdb.calls("account")][:2] == [first, first]
    assert session_of(tmdb.calls("account")[-1]) != first


# ----- the CLI ----------------------------------------------------------------------------------

def test_status_lists_the_identity_and_its_capture_names_without_values(latchkey, tmdb):
    proxy = serve(latchkey, tmdb)
    assert proxy.get("/tmdb/account").status == 200
    path = config_file(latchkey, tmdb)

    text = cli(latchkey, tmdb, "status", "--config", path)
    assert text.returncode == 0, text.stderr
    row = next(line.split() for line in text.stdout.splitlines() if line.startswith("tmdb-user "))
    assert row[:4] == ["tmdb-user", "recipe", "store", "valid"], text.stdout
    assert "CAPTURES" in text.stdout and "request_token, session_id" in text.stdout, text.stdout

    report = json.loads(cli(latchkey, tmdb, "status", "--config", path, "--json").stdout)
    (identity,) = [i for i in report["identities"] if i["name"] == "tmdb-user"]
    assert (identity["grant"], identity["state"]) == ("recipe", "valid")
    assert identity["captures"] == ["request_token", "session_id"], identity
    assert_no_secret(tmdb, text.stdout + text.stderr, json.dumps(report))


def test_token_field_prints_the_session_id(latchkey, tmdb):
    proxy = serve(latchkey, tmdb)
    assert proxy.get("/tmdb/account").status == 200
    (session,) = tmdb.live_sessions()
    path = config_file(latchkey, tmdb)

    printed = cli(latchkey, tmdb, "token", "tmdb-user", "--field", "session_id", "--config", path)
    assert printed.returncode == 0, printed.stderr
    assert (printed.stdout, printed.stderr) == (session + "\n", "")
    # Without --field: the token capture, the recipe's last one.
    assert cli(latchkey, tmdb, "token", "tmdb-user", "--config", path).stdout == session + "\n"
    unknown = cli(latchkey, tmdb, "token", "tmdb-user", "--field", "nope", "--config", path)
    assert unknown.returncode == 1 and unknown.stdout == "" and "session_id" in unknown.stderr, unknown.stderr
    assert session not in unknown.stderr
    assert tmdb.sessions_created == 1, "the stored session was printed, not a new one"


def test_logout_deletes_the_session_at_tmdb_and_a_login_makes_a_new_one(latchkey, tmdb):
    cfg = tmdb_config(tmdb)
    proxy = serve(latchkey, tmdb, copy.deepcopy(cfg))
    assert proxy.get("/tmdb/account").status == 200
    (first,) = tmdb.live_sessions()
    path = config_file(latchkey, tmdb, cfg)

    out = cli(latchkey, tmdb, "logout", "tmdb-user", "--config", path)
    assert out.returncode == 0, out.stderr
    assert "ran its logout step" in out.stdout, out.stdout
    assert tmdb.deleted_sessions() == [first] and tmdb.live_sessions() == []
    (delete,) = tmdb.calls("session_delete")
    assert (delete.method, delete.query) == ("DELETE", {"api_key": tmdb.api_key})
    assert delete.json() == {"session_id": first}
    assert_no_secret(tmdb, out.stdout + out.stderr, store_file(latchkey).read_text())

    # As for every identity: logged out until a login, even though it could log in by itself.
    line = proxy.wait_log(r"event=logged_out", timeout=10)
    assert line and "identity=tmdb-user" in line, proxy.log_tail()
    r = proxy.get("/tmdb/account")
    assert r.status == 401 and r.json()["error"] == "login_required", r
    assert tmdb.sessions_created == 1

    login = cli(latchkey, tmdb, "login", "tmdb-user", "--config", path)
    assert login.returncode == 0, login.stderr
    assert "session_id" in login.stdout and tmdb.sessions_created == 2
    (second,) = tmdb.live_sessions()
    r = wait_until(lambda: (reply := proxy.get("/tmdb/account")).status == 200 and reply, timeout=10)
    assert r, proxy.log_tail()
    assert session_of(tmdb.calls("account")[-1]) == second != first
    assert tmdb.sessions_created == 2
    assert_no_secret(tmdb, login.stdout + login.stderr, proxy.log())


def test_a_one_time_code_is_asked_by_login_and_the_running_serve_takes_up_the_session(latchkey, tmdb):
    """A recipe with `{prompts.otp}` runs only in `latchkey login`, which reads the code from
    standard input when there is no terminal (the child has no controlling terminal here); until
    then requests get 401 login_required and nothing is sent to TMDB."""
    cfg = tmdb_config(tmdb, prompts={"otp": "One-time code from your authenticator app"})
    cfg["identities"]["tmdb-user"]["steps"][1]["request"]["json"]["otp"] = "{prompts.otp}"
    proxy = serve(latchkey, tmdb, copy.deepcopy(cfg))
    r = proxy.get("/tmdb/account")
    assert r.status == 401 and r.json()["error"] == "login_required", r
    assert endpoints(tmdb) == []

    code = "424242"
    login = subprocess.run([str(latchkey.binary), "login", "tmdb-user", "--config", config_file(latchkey, tmdb, cfg)],
                           input=code + "\n", capture_output=True, text=True, timeout=60, start_new_session=True,
                           env=latchkey_environment(latchkey.workdir, tmdb_env(tmdb)), cwd=latchkey.workdir)
    assert login.returncode == 0, login.stderr
    assert "One-time code from your authenticator app" in login.stderr
    assert code not in login.stdout + login.stderr
    (validate,) = tmdb.calls("validate_with_login")
    assert validate.json()["otp"] == code
    assert tmdb.sessions_created == 1

    r = wait_until(lambda: (reply := proxy.get("/tmdb/account")).status == 200 and reply, timeout=10)
    assert r, proxy.log_tail()
    assert tmdb.sessions_created == 1, "the running serve took up the session login made"
    assert_no_secret(tmdb, login.stdout + login.stderr, proxy.log())
