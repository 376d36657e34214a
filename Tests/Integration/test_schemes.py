"""The example configs of the auth schemes Latchkey reproduces (Configs/), each run
against a local emulation of its API with only the addresses and secrets swapped."""

import yaml

from support import REPO, free_port


def example(name: str) -> dict:
    return yaml.safe_load((REPO / "Configs" / name).read_text())


def test_podio_app_authentication(latchkey, make_podio):
    podio = make_podio(access_token_seconds=3600)
    cfg = example("podio.yaml")
    cfg["listeners"] = [{"name": "main"}]
    app = cfg["identities"]["podio-app"]
    app["token_url"] = f"{podio.url}/oauth/token"
    app["client_id"] = podio.client_id
    app["params"]["app_id"] = podio.app_id
    cfg["routes"][0]["upstream"] = podio.url
    proxy = latchkey.serve(cfg, env={"PODIO_APP_TOKEN": podio.app_token, "PODIO_CLIENT_SECRET": podio.client_secret})

    r = proxy.get("/podio/item/1")
    assert r.status == 200, r
    seen = r.json()
    assert seen["ref"] == {"type": "app", "id": int(podio.app_id)}
    assert seen["path"] == "/item/1"
    assert podio.token_requests("app") == 1

    # Podio says expired_token: the token is refreshed and the request replayed.
    podio.expire_access_tokens()
    r = proxy.request("POST", "/podio/item/2", body=b'{"title": "x"}')
    assert r.status == 200, r
    assert r.json()["body"] == '{"title": "x"}'
    assert podio.token_requests("refresh_token") == 1
    assert podio.app_token not in proxy.log()


def kii_config(tmp_path, upstream) -> dict:
    """Configs/kii.yaml with its listener on a free port, its users' token files in tmp_path
    (token-of-alice, token-of-bob) and its upstream the stub."""
    cfg = example("kii.yaml")
    cfg["listeners"] = [{"name": "main"}]
    for user in ("alice", "bob"):
        token_file = tmp_path / f"kii-{user}-token"
        token_file.write_text(f"token-of-{user}\n")
        token_file.chmod(0o600)
        cfg["identities"][f"kii-{user}"]["token"] = {"file": str(token_file)}
    cfg["routes"][0]["upstream"] = upstream.url
    return cfg


def authorization(reply) -> list:
    """The Authorization values the stub upstream received."""
    return [v for k, v in reply.json()["headers"] if k.lower() == "authorization"]


def test_kii_static_tokens_of_several_users(latchkey, upstream, tmp_path):
    proxy = latchkey.serve(kii_config(tmp_path, upstream))
    r = proxy.get("/kii/users/me")
    assert r.status == 200, r
    assert authorization(r) == ["Bearer token-of-alice"]
    r = proxy.get("/kii/users/me", headers=[("Latchkey-Identity", "kii-bob")])
    assert r.status == 200, r
    assert authorization(r) == ["Bearer token-of-bob"]
