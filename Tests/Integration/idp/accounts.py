"""The user and the OAuth2 applications seeded into every IdP start. Plain constants, so that
the pytest fixtures can import them without loading Django."""

USERNAME = "alice"
PASSWORD = "lk-itest-idp-password-71d2"

# Confidential, password grant: accepts client_secret_basic and client_secret_post.
PASSWORD_CLIENT_ID = "lk-password-client"
PASSWORD_CLIENT_SECRET = "lk-itest-password-secret-9a4e"

# Confidential, client credentials grant (its tokens belong to the application's owner).
SERVICE_CLIENT_ID = "lk-service-client"
SERVICE_CLIENT_SECRET = "lk-itest-service-secret-3c81"

# Public, authorization code with PKCE S256; any port on the loopback redirect (RFC 8252 §7.3).
PUBLIC_CLIENT_ID = "lk-public-client"
REDIRECT_URI = "http://127.0.0.1/callback"

# Public, device authorization grant (RFC 8628).
DEVICE_CLIENT_ID = "lk-device-client"
