"""An emulation of Auth0's authentication API (auth0.com/docs/api/authentication), with
refresh-token rotation and reuse detection on.

  POST /oauth/token    form or JSON; client_secret_post or client_secret_basic for the
                       confidential client, client_id alone for the native (public) one:
                       grant_type=password (username, password, scope, audience)
                       grant_type=http://auth0.com/oauth/grant-type/password-realm (+ realm)
                       grant_type=refresh_token (refresh_token): rotated, and presenting a
                       used refresh token revokes all of its family
                       200 {access_token (a JWT with exp), expires_in, token_type "Bearer",
                       scope, id_token if scope has openid, refresh_token only if scope has
                       offline_access}; 403 invalid_grant; 401 access_denied for a bad client
  GET  /userinfo       Bearer: 200 profile for a valid access token, 401 otherwise
  POST /oauth/revoke   client auth + token=REFRESH_TOKEN: revokes it (and its family); 200
  ANY  /api/...        Bearer: 200 JSON echo (sub, client_id, token, scope, method, path,
                       query, body, body_length, body_sha256); 401 `WWW-Authenticate: Bearer
                       error="invalid_token"` for a missing, expired or invalidated token

Counters (counters()): token requests by grant_type, "userinfo", "revoke", "api".
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time

from .common import EmulatedServer, Reply, Request, TokenBook

PASSWORD_REALM = "http://auth0.com/oauth/grant-type/password-realm"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt_hs256(claims: dict, key: bytes) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(json.dumps(claims).encode())
    signature = hmac.new(key, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{_b64url(signature)}"


class Auth0Emulation(EmulatedServer):
    name = "auth0"
    client_id = "lk-auth0-client"
    client_secret = "lk-itest-auth0-client-secret-c93a"
    native_client_id = "lk-auth0-native"
    username = "alice@example.com"
    password = "lk-itest-auth0-password-58b0"
    realm = "Username-Password-Authentication"
    user_sub = "auth0|lk-itest-alice"

    def __init__(self, access_token_seconds: int = 3600):
        self._key = secrets.token_bytes(32)
        self.tokens = TokenBook(access_token_seconds, self._access_jwt)
        super().__init__()
        self.issuer = f"{self.url}/"

    # ----- test control -------------------------------------------------------------------

    def expire_access_tokens(self) -> int:
        return self.tokens.expire_access()

    def invalidate_access_token(self, token: str) -> bool:
        """From now on the token gets 401 (userinfo and API), as one revoked or signed with a
        rotated key would."""
        return self.tokens.invalidate_access(token)

    def revoke_refresh_tokens(self) -> int:
        return self.tokens.revoke_refresh()

    # ----- HTTP ---------------------------------------------------------------------------

    def handle(self, request: Request) -> Reply:
        if request.path == "/oauth/token":
            return self._token(request)
        if request.path == "/userinfo":
            self.count("userinfo")
            return self._userinfo(request)
        if request.path == "/oauth/revoke":
            self.count("revoke")
            return self._revoke(request)
        if request.path.startswith("/api/"):
            self.count("api")
            return self._api(request)
        return Reply(404, {"error": "not_found"})

    def _client(self, request: Request, params: dict) -> str | None:
        """The authenticated client's id, or None."""
        basic = request.basic_client()
        client_id, secret = basic if basic else (params.get("client_id", ""), params.get("client_secret"))
        if client_id == self.native_client_id:
            return client_id  # token_endpoint_auth_method none
        if client_id == self.client_id and secret is not None and hmac.compare_digest(secret, self.client_secret):
            return client_id
        return None

    def _token(self, request: Request) -> Reply:
        params = request.params
        grant_type = params.get("grant_type", "")
        self.count(f"token:{grant_type or '(none)'}")
        if request.method != "POST":
            return Reply(405, {"error": "invalid_request", "error_description": "Use POST"})
        client_id = self._client(request, params)
        if client_id is None:
            return Reply(401, {"error": "access_denied", "error_description": "Unauthorized"})
        if grant_type in ("password", PASSWORD_REALM):
            if grant_type == PASSWORD_REALM and params.get("realm") != self.realm:
                return Reply(403, {"error": "invalid_grant", "error_description": "Wrong email or password."})
            if params.get("username") != self.username or params.get("password") != self.password:
                return Reply(403, {"error": "invalid_grant", "error_description": "Wrong email or password."})
            scope = params.get("scope", "openid profile email")
            subject = {"sub": self.user_sub, "client_id": client_id, "scope": scope,
                       "audience": params.get("audience")}
            issued = self.tokens.issue(subject, refresh="offline_access" in scope.split())
        elif grant_type == "refresh_token":
            rotated = self.tokens.rotate(params.get("refresh_token", ""))
            if rotated is None:
                return Reply(403, {"error": "invalid_grant", "error_description": "Unknown or invalid refresh token."})
            subject, issued = rotated
        else:
            return Reply(403, {"error": "unsupported_grant_type",
                               "error_description": f"Grant type '{grant_type}' not allowed for the client."})
        body = {**issued, "token_type": "Bearer", "scope": subject["scope"]}
        if "openid" in subject["scope"].split():
            body["id_token"] = self._id_token(subject)
        return Reply(200, body)

    def _access_jwt(self, subject: dict, expires_at: float) -> str:
        userinfo = f"{self.url}/userinfo"
        audience = [subject["audience"], userinfo] if subject.get("audience") else userinfo
        now = int(time.time())
        return jwt_hs256({"iss": self.issuer, "sub": subject["sub"], "aud": audience, "iat": now,
                          "exp": int(expires_at), "azp": subject["client_id"], "scope": subject["scope"],
                          "jti": secrets.token_hex(8)}, self._key)

    def _id_token(self, subject: dict) -> str:
        now = int(time.time())
        return jwt_hs256({"iss": self.issuer, "sub": subject["sub"], "aud": subject["client_id"], "iat": now,
                          "exp": now + 36000, "name": "Alice", "email": self.username}, self._key)

    def _bearer(self, request: Request) -> tuple[str, dict | None]:
        scheme, token = request.authorization()
        if scheme != "bearer" or not token:
            return token, None
        status, subject = self.tokens.access(token)
        return token, subject if status == "valid" else None

    @staticmethod
    def _unauthorized() -> Reply:
        return Reply(401, "Unauthorized", [("WWW-Authenticate", 'Bearer realm="auth0", error="invalid_token", '
                                                                'error_description="Invalid token"')])

    def _userinfo(self, request: Request) -> Reply:
        _, subject = self._bearer(request)
        if subject is None:
            return self._unauthorized()
        return Reply(200, {"sub": subject["sub"], "name": "Alice", "nickname": "alice",
                           "email": self.username, "email_verified": True})

    def _revoke(self, request: Request) -> Reply:
        params = request.params
        if request.method != "POST":
            return Reply(405, {"error": "invalid_request", "error_description": "Use POST"})
        if self._client(request, params) is None:
            return Reply(401, {"error": "access_denied", "error_description": "Unauthorized"})
        if not params.get("token"):
            return Reply(400, {"error": "invalid_request", "error_description": "Missing required parameter: token"})
        # RFC 7009 §2.2: an unknown token is not an error.
        self.tokens.revoke_refresh(params["token"])
        return Reply(200)

    def _api(self, request: Request) -> Reply:
        token, subject = self._bearer(request)
        if subject is None:
            return self._unauthorized()
        return Reply(200, {"sub": subject["sub"], "client_id": subject["client_id"], "token": token,
                           "scope": subject["scope"], **request.describe()})
