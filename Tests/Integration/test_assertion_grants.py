"""Grants that sign JWTs with the identity's own key (RFC 7523) and token exchange (RFC
8693), through the real binary against a token endpoint that verifies every signature."""

import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from emulations.assertions import AssertionEmulation
from support import config


def pem_pair(kind: str) -> tuple[bytes, bytes]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048) if kind == "rsa" else ec.generate_private_key(ec.SECP256R1())
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return private, public


@pytest.fixture
def keys(tmp_path):
    def make(kind: str = "rsa"):
        private, public = pem_pair(kind)
        path = tmp_path / f"{kind}-key.pem"
        path.write_bytes(private)
        path.chmod(0o600)
        return path, public
    return make


@pytest.fixture
def emulation():
    servers = []

    def make(public_pem: bytes, **kw) -> AssertionEmulation:
        server = AssertionEmulation(public_pem, **kw)
        servers.append(server)
        return server
    yield make
    for server in servers:
        server.close()


def serve(latchkey, server, identity: dict):
    route = {"name": "api", "path": "/", "upstream": server.url + "/api",
             "inject": [{"header": "Authorization", "value": "Bearer {access_token}", "identity": "id"}]}
    return latchkey.serve(config(routes=[route], credentials={}, identities={"id": identity}))


@pytest.mark.parametrize("kind", ["rsa", "ec"])
def test_jwt_bearer_grant_from_a_service_account_key(latchkey, keys, emulation, tmp_path, kind):
    key_path, public = keys(kind)
    server = emulation(public)
    account = tmp_path / "service-account.json"
    account.write_text(json.dumps({
        "type": "service_account", "client_email": "robot@example.iam", "private_key_id": "kid-1",
        "private_key": key_path.read_text(), "token_uri": server.token_url,
    }))
    account.chmod(0o600)
    proxy = serve(latchkey, server, {"grant": "jwt_bearer", "service_account_file": str(account), "scope": "read"})
    r = proxy.get("/who")
    assert r.status == 200, r
    assert r.json()["subject"] == {"sub": "robot@example.iam"}
    claims = server.claims_seen[0]
    assert claims["iss"] == "robot@example.iam" and claims["scope"] == "read" and claims["aud"] == server.token_url


def test_jwt_bearer_grant_from_a_pem_key(latchkey, keys, emulation):
    key_path, public = keys("ec")
    server = emulation(public)
    proxy = serve(latchkey, server, {"grant": "jwt_bearer", "token_url": server.token_url, "key_file": str(key_path),
                                     "assertion_issuer": "svc", "subject": "user-7"})
    r = proxy.get("/who")
    assert r.status == 200, r
    assert r.json()["subject"] == {"sub": "user-7"}


def test_private_key_jwt_client_authentication(latchkey, keys, emulation):
    key_path, public = keys("rsa")
    server = emulation(public)
    proxy = serve(latchkey, server, {"grant": "client_credentials", "token_url": server.token_url,
                                     "client_id": server.client_id, "client_auth": "private_key_jwt",
                                     "client_key_file": str(key_path)})
    r = proxy.get("/who")
    assert r.status == 200, r
    assert r.json()["subject"] == {"sub": server.client_id}


def test_token_exchange_reads_the_subject_token_file_at_each_request(latchkey, keys, emulation, tmp_path):
    _, public = keys("rsa")
    server = emulation(public, subject_token="projected-token-1", access_token_seconds=3600)
    subject = tmp_path / "token"
    subject.write_text("projected-token-1\n")
    proxy = serve(latchkey, server, {"grant": "token_exchange", "token_url": server.token_url,
                                     "subject_token_file": str(subject), "client_id": "exchanger"})
    assert proxy.get("/who").status == 200
    # The kubelet rotates the file; the next exchange (after a refusal) sends the new one.
    server.subject_token = "projected-token-2"
    subject.write_text("projected-token-2\n")
    server.expire_access_tokens()
    r = proxy.get("/again")
    assert r.status == 200, r
    assert server.token_requests("urn:ietf:params:oauth:grant-type:token-exchange") == 2


def test_an_unreadable_key_is_a_clear_503_without_key_material(latchkey, keys, emulation, tmp_path):
    key_path, public = keys("rsa")
    server = emulation(public)
    proxy = serve(latchkey, server, {"grant": "jwt_bearer", "token_url": server.token_url, "key_file": str(key_path),
                                     "assertion_issuer": "svc"})
    key_path.write_text("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
    r = proxy.get("/who")
    assert r.status == 503, r
    assert "cannot load the key" in r.json()["message"]
    assert "not a key" not in proxy.log()
