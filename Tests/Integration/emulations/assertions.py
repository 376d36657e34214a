"""A token endpoint that takes signed JWTs, verified for real with jwcrypto: the RFC 7523
JWT-bearer grant (a service account's key), `private_key_jwt` client authentication
(RFC 7523 §2.2) on client credentials, and RFC 8693 token exchange of a subject token.

  POST /token   grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer (assertion)
                grant_type=client_credentials with client_assertion(_type)
                grant_type=urn:ietf:params:oauth:grant-type:token-exchange
                  (subject_token, subject_token_type)
  anything else the API: Bearer tokens from /token; JSON with the token's subject

Every assertion must be signed by the registered public key, name this endpoint (or the
configured audience) in `aud`, be unexpired, and carry a `jti` not seen before."""

from __future__ import annotations

import json
import time

from jwcrypto import jwk, jwt

from .common import EmulatedServer, Reply, Request, TokenBook

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
CLIENT_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


class AssertionEmulation(EmulatedServer):
    name = "assertions"
    client_id = "lk-assertion-client"

    def __init__(self, public_key_pem: bytes, subject_token: str = "", access_token_seconds: int = 3600):
        self.key = jwk.JWK.from_pem(public_key_pem)
        self.subject_token = subject_token
        self.tokens = TokenBook(access_token_seconds)
        self.claims_seen: list[dict] = []
        self._jtis: set[str] = set()
        super().__init__()
        self.token_url = f"{self.url}/token"

    def expire_access_tokens(self) -> int:
        return self.tokens.expire_access()

    def handle(self, request: Request) -> Reply:
        if request.path == "/token":
            return self._token(request)
        self.count("api")
        scheme, token = request.authorization()
        status, subject = self.tokens.access(token) if scheme == "bearer" else ("invalid", None)
        if status != "valid":
            return Reply(401, {"error": "invalid_token"}, [("WWW-Authenticate", 'Bearer error="invalid_token"')])
        return Reply(200, {"subject": subject, **request.describe()})

    def _token(self, request: Request) -> Reply:
        form = request.params
        grant_type = form.get("grant_type", "")
        self.count(f"token:{grant_type}")
        if grant_type == JWT_BEARER:
            claims = self._verify(form.get("assertion", ""))
            if claims is None:
                return Reply(400, {"error": "invalid_grant", "error_description": "bad assertion"})
            return Reply(200, {**self.tokens.issue({"sub": claims.get("sub") or claims["iss"]}, refresh=False), "token_type": "Bearer"})
        if grant_type == "client_credentials":
            if form.get("client_assertion_type") != CLIENT_ASSERTION or form.get("client_id") != self.client_id:
                return Reply(401, {"error": "invalid_client"})
            claims = self._verify(form.get("client_assertion", ""))
            if claims is None or claims.get("iss") != self.client_id or claims.get("sub") != self.client_id:
                return Reply(401, {"error": "invalid_client", "error_description": "bad client assertion"})
            return Reply(200, {**self.tokens.issue({"sub": self.client_id}, refresh=False), "token_type": "Bearer"})
        if grant_type == TOKEN_EXCHANGE:
            if form.get("subject_token") != self.subject_token or not form.get("subject_token_type"):
                return Reply(400, {"error": "invalid_grant", "error_description": "unknown subject token"})
            issued = self.tokens.issue({"sub": "exchanged"}, refresh=False)
            return Reply(200, {**issued, "token_type": "Bearer", "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
        return Reply(400, {"error": "unsupported_grant_type"})

    def _verify(self, assertion: str) -> dict | None:
        try:
            token = jwt.JWT(jwt=assertion, key=self.key, algs=["RS256", "ES256"])
            claims = json.loads(token.claims)
        except Exception:  # any malformed or badly signed assertion is simply refused
            return None
        audience = claims.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if self.token_url not in audiences or claims.get("exp", 0) < time.time() or claims.get("jti") in self._jtis:
            return None
        self._jtis.add(claims["jti"])
        self.claims_seen.append(claims)
        return claims
