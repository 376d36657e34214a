"""The persistent token store through the real binary against the real OAuth2 server
(django-oauth-toolkit, idp_support.py): tokens and rotated refresh tokens survive a
restart, the files are private and sealed when a key is set, Latchkey refuses a store
others can read and a wrong key, moves a corrupt file aside, takes up a store file another
process wrote without a restart, and two servers on one store never spend a refresh token
twice."""

import base64
import json
import os
import shutil
import stat
import time

from replicas import ACCESS_TOKEN_SECONDS, Load, assert_one_token_request_per_expiry, shared_identity_config
from support import config, wait_until
from test_oauth import identity_route, password_identity

KEY = base64.b64encode(bytes(range(32))).decode()
OTHER_KEY = base64.b64encode(bytes(range(32, 64))).decode()


def store_config(idp, **identity) -> dict:
    return config(routes=[identity_route(upstream=idp.url + "/api")], credentials={},
                  identities={"idp": password_identity(idp, **identity)})


def store_dir(latchkey, name: str = "state"):
    return latchkey.workdir / name / "latchkey"


def token_file(latchkey, name: str = "state"):
    return store_dir(latchkey, name) / "idp.json"


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_token_survives_a_restart(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3600)
    first = latchkey.serve(store_config(idp))
    r = first.get("/before")
    assert r.status == 200, r
    assert idp.token_requests() == 1
    assert first.stop() == 0
    second = latchkey.serve(store_config(idp))
    r = second.get("/after")
    assert r.status == 200, r
    assert r.json()["token"] == first_token(latchkey)
    assert idp.token_requests() == 1, "the restarted proxy asked the IdP again"


def first_token(latchkey) -> str:
    return json.loads(token_file(latchkey).read_text())["token"]["access_token"]


def test_the_refresh_token_rotated_before_a_restart_is_used_after_it(latchkey, make_idp):
    idp = make_idp(access_token_seconds=2)
    cfg = lambda: store_config(idp, refresh_ahead="0s", clock_skew="0s")  # noqa: E731
    first = latchkey.serve(cfg())
    assert first.get("/1").status == 200
    time.sleep(2.3)
    assert first.get("/2").status == 200  # refreshed: the first refresh token is spent
    assert idp.token_requests("refresh_token") == 1
    assert first.stop() == 0
    time.sleep(2.3)
    second = latchkey.serve(cfg())
    r = second.get("/3")
    assert r.status == 200, r
    # The rotated refresh token came back from the store: a used one would have been
    # refused (invalid_grant) and forced a new password grant.
    assert idp.token_requests("refresh_token") == 2
    assert idp.token_requests("password") == 1
    assert "invalid_grant" not in second.log()


def test_files_are_private_and_hold_no_token_when_a_key_is_set(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3600)
    proxy = latchkey.serve(store_config(idp), env={"LATCHKEY_STORE_KEY": KEY})
    r = proxy.get("/x")
    assert r.status == 200, r
    access_token = r.json()["token"]
    path = token_file(latchkey)
    assert mode(store_dir(latchkey)) == 0o700
    assert mode(path) == 0o600
    text = path.read_text()
    assert access_token not in text
    assert set(json.loads(text)) == {"format", "cipher", "nonce", "ciphertext", "tag"}
    assert KEY not in proxy.log()
    assert "encrypted=\"yes, key from environment variable LATCHKEY_STORE_KEY\"" in proxy.log()


def test_a_plaintext_store_is_sealed_once_a_key_is_given(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3600)
    first = latchkey.serve(store_config(idp))
    assert first.get("/x").status == 200
    assert first.stop() == 0
    assert "access_token" in token_file(latchkey).read_text()
    second = latchkey.serve(store_config(idp), env={"LATCHKEY_STORE_KEY": KEY})
    assert second.wait_log(r"is not encrypted although a store key is configured")
    assert second.get("/y").status == 200
    assert idp.token_requests() == 1
    idp.expire_access_tokens()  # the next request is refused, refreshed and replayed: a save
    assert second.get("/z").status == 200
    assert wait_until(lambda: "access_token" not in token_file(latchkey).read_text(), 5)


def test_a_store_directory_others_can_read_stops_the_start(latchkey, idp):
    directory = store_dir(latchkey)
    directory.mkdir(parents=True)
    directory.chmod(0o750)
    proxy = latchkey.serve(store_config(idp), wait=False)
    assert proxy.wait_exit(30) == 1
    assert f"store directory {directory} is accessible by others (mode 0750); run chmod 700 {directory}" in proxy.log()
    assert "listening" not in proxy.log()


def test_a_wrong_key_stops_the_start_and_leaves_the_store_alone(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3600)
    first = latchkey.serve(store_config(idp), env={"LATCHKEY_STORE_KEY": KEY})
    assert first.get("/x").status == 200
    assert first.stop() == 0
    before = token_file(latchkey).read_bytes()

    wrong = latchkey.serve(store_config(idp), env={"LATCHKEY_STORE_KEY": OTHER_KEY}, wait=False)
    assert wrong.wait_exit(30) == 1
    assert (f"store file {token_file(latchkey)} does not open with the store key from environment variable "
            "LATCHKEY_STORE_KEY") in wrong.log()
    assert OTHER_KEY not in wrong.log()
    assert token_file(latchkey).read_bytes() == before

    missing = latchkey.serve(store_config(idp), wait=False)
    assert missing.wait_exit(30) == 1
    assert "is encrypted, but no store key is configured" in missing.log()

    right = latchkey.serve(store_config(idp), env={"LATCHKEY_STORE_KEY": KEY})
    assert right.get("/y").status == 200
    assert idp.token_requests() == 1


def test_a_corrupt_file_is_moved_aside_and_the_proxy_still_works(latchkey, idp):
    directory = store_dir(latchkey)
    directory.mkdir(parents=True, mode=0o700)
    token_file(latchkey).write_text('{"format":"latchkey-token-v1","token":{"access_tok')
    token_file(latchkey).chmod(0o600)
    proxy = latchkey.serve(store_config(idp))
    line = proxy.wait_log(r"is not a Latchkey token file .*moved it aside")
    assert line and "event=failed" in line and "identity=idp" in line, proxy.log_tail()
    moved = [p.name for p in directory.iterdir() if p.name.startswith("idp.json.corrupt-")]
    assert len(moved) == 1
    assert (directory / moved[0]).read_text() == '{"format":"latchkey-token-v1","token":{"access_tok'
    r = proxy.get("/x")
    assert r.status == 200, r
    assert json.loads(token_file(latchkey).read_text())["token"]["access_token"] == r.json()["token"]


def test_a_store_file_written_by_another_process_is_taken_up_without_a_restart(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3600)
    server = latchkey.serve(store_config(idp), env={"LATCHKEY_STORE_KEY": KEY})
    first = server.get("/1").json()["token"]

    # Another latchkey, with its own store, logs in with the same key and stops.
    other = latchkey.serve(store_config(idp), env={"LATCHKEY_STORE_KEY": KEY, "XDG_STATE_HOME": str(latchkey.workdir / "other")})
    second = other.get("/2").json()["token"]
    assert other.stop() == 0
    assert second != first

    # Its file replaces the server's, as `latchkey login` replaces it: atomically.
    staged = store_dir(latchkey) / ".incoming"
    shutil.copyfile(token_file(latchkey, "other"), staged)
    staged.chmod(0o600)
    os.replace(staged, token_file(latchkey))
    line = server.wait_log(r"taken from the token store", timeout=10)
    assert line and "event=acquired" in line, server.log_tail()
    r = server.get("/3")
    assert r.status == 200, r
    assert r.json()["token"] == second
    assert idp.token_requests() == 2

    # Removed (`latchkey logout`): the server forgets the token; this identity logs in by
    # itself again on the next request.
    token_file(latchkey).unlink()
    line = server.wait_log(r"removed from the token store", timeout=10)
    assert line and "event=logged_out" in line, server.log_tail()
    r = server.get("/4")
    assert r.status == 200, r
    assert r.json()["token"] not in (first, second)
    assert idp.token_requests() == 3


def test_the_quick_start_creates_no_store(latchkey, upstream):
    proxy = latchkey.quick(upstream.url)
    assert proxy.get("/echo").status == 200
    assert not (latchkey.workdir / "state").exists()


def test_two_servers_on_one_store_directory_spend_each_refresh_token_once(latchkey, make_idp):
    # The refresh lock of the file store: an flock on the identity's refresh-lock file.
    idp = make_idp(access_token_seconds=ACCESS_TOKEN_SECONDS)
    cfg = lambda: shared_identity_config(idp, {"type": "file"})  # noqa: E731
    first, second = latchkey.serve(cfg()), latchkey.serve(cfg())
    assert first.get("/warm-up").status == 200
    assert second.get("/warm-up").status == 200
    assert idp.token_requests() == 1
    assert (store_dir(latchkey) / "idp.refresh-lock").exists()

    before = idp.token_requests()
    load = Load([first, second], seconds=3.5 * ACCESS_TOKEN_SECONDS)
    load.assert_all_served()
    assert_one_token_request_per_expiry(idp, load, before)
    assert len(load.tokens) >= 3


def test_introspection_at_start_renews_a_token_the_idp_ended(latchkey, make_idp):
    idp = make_idp(access_token_seconds=3600)
    cfg = lambda: store_config(idp, check_on_start="introspection",  # noqa: E731
                               introspection_url=idp.url + "/o/introspect/")
    first = latchkey.serve(cfg())
    stored = first.get("/1").json()["token"]
    assert first.stop() == 0

    again = latchkey.serve(cfg())
    assert again.get("/2").json()["token"] == stored, "an active token is kept"
    assert idp.token_requests() == 1
    assert again.stop() == 0

    idp.expire_access_tokens()  # ended at the IdP; the store still thinks it has an hour
    third = latchkey.serve(cfg())
    r = third.get("/3")
    assert r.status == 200, r
    assert r.json()["token"] != stored
    assert idp.token_requests("refresh_token") == 1
    assert "no longer accepted" in third.log()
