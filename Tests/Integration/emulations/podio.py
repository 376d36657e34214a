"""An emulation of Podio's API auth (developers.podio.com/authentication).

  POST /oauth/token   form fields, client_id and client_secret in the body:
                      grant_type=password  (username, password)   -> ref {"type": "user", ...}
                      grant_type=app       (app_id, app_token)    -> ref {"type": "app", ...}
                      grant_type=refresh_token (refresh_token)    -> rotated pair
                      200 {access_token, token_type: "bearer", expires_in, refresh_token, scope, ref};
                      400 invalid_grant / unsupported_grant_type, 401 invalid_client
  anything else       the API: needs `Authorization: OAuth2 <access_token>` (Bearer is
                      refused, as by Podio); answers JSON: the token, its ref and the request
                      (method, path, query, body, body_length, body_sha256); otherwise 401 with
                      Podio's error body, error_description "expired_token" for an expired token
                      (what Podio's own clients look for before refreshing), "invalid_token" else

Counters (counters()): token requests by grant_type, "api" requests.
"""

from __future__ import annotations

from .common import EmulatedServer, Reply, Request, TokenBook


class PodioEmulation(EmulatedServer):
    name = "podio"
    client_id = "lk-podio-client"
    client_secret = "lk-itest-podio-client-secret-2b57"
    username = "alice@example.com"
    password = "lk-itest-podio-password-e14c"
    user_id = 1001
    app_id = "23456"
    app_token = "lk-itest-podio-app-token-6f0d"

    def __init__(self, access_token_seconds: int = 3600):
        self.tokens = TokenBook(access_token_seconds)
        super().__init__()

    # ----- test control -------------------------------------------------------------------

    def expire_access_tokens(self) -> int:
        return self.tokens.expire_access()

    def revoke_refresh_tokens(self) -> int:
        return self.tokens.revoke_refresh()

    # ----- HTTP ---------------------------------------------------------------------------

    def handle(self, request: Request) -> Reply:
        if request.path == "/oauth/token":
            return self._token(request)
        self.count("api")
        return self._api(request)

    def _token(self, request: Request) -> Reply:
        form = request.params
        grant_type = form.get("grant_type", "")
        self.count(f"token:{grant_type or '(none)'}")
        if request.method != "POST":
            return self._error(request, 405, "method_not_allowed", "Use POST")
        if form.get("client_id") != self.client_id or form.get("client_secret") != self.client_secret:
            return self._error(request, 401, "invalid_client", "Invalid client_id or client_secret")
        if grant_type == "password":
            if form.get("username") != self.username or form.get("password") != self.password:
                return self._error(request, 400, "invalid_grant", "Password is incorrect")
            ref = {"type": "user", "id": self.user_id}
            issued = self.tokens.issue(ref)
        elif grant_type == "app":
            if form.get("app_id") != self.app_id or form.get("app_token") != self.app_token:
                return self._error(request, 400, "invalid_grant", "Invalid app_id or app_token")
            ref = {"type": "app", "id": int(self.app_id)}
            issued = self.tokens.issue(ref)
        elif grant_type == "refresh_token":
            rotated = self.tokens.rotate(form.get("refresh_token", ""))
            if rotated is None:
                return self._error(request, 400, "invalid_grant", "Invalid refresh_token")
            ref, issued = rotated
        else:
            return self._error(request, 400, "unsupported_grant_type", f"Unsupported grant_type {grant_type!r}")
        return Reply(200, {**issued, "token_type": "bearer", "scope": "global:all", "ref": ref})

    def _api(self, request: Request) -> Reply:
        scheme, token = request.authorization()
        if scheme != "oauth2" or not token:
            return self._error(request, 401, "unauthorized", "invalid_token")
        status, ref = self.tokens.access(token)
        if status == "expired":
            return self._error(request, 401, "unauthorized", "expired_token")
        if status != "valid":
            return self._error(request, 401, "invalid_token", "invalid_token")
        return Reply(200, {"token": token, "ref": ref, **request.describe()})

    @staticmethod
    def _error(request: Request, status: int, error: str, description: str) -> Reply:
        """Podio's error body: error and error_description plus the request it refers to."""
        return Reply(status, {
            "error": error,
            "error_description": description,
            "error_detail": None,
            "error_parameters": {},
            "error_propagate": False,
            "request": {"url": request.path, "query_string": "", "method": request.method},
        })
