"""Django settings of the test IdP. server.py fills the environment before Django reads them:
IDP_DB (the sqlite file), IDP_BASE_URL (http://127.0.0.1:PORT), IDP_ACCESS_TOKEN_SECONDS."""

import os

SECRET_KEY = "lk-itest-idp-django-secret-key-not-for-production"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
ROOT_URLCONF = "idp.urls"
USE_TZ = True
LOGIN_URL = "/accounts/login/"

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
]

# No CSRF middleware: scripted clients (the fixtures) post the device-flow forms without a
# browser. The login view is ours and exempt too.
MIDDLEWARE = [
    "idp.control.CountingMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]

# DOT's device-flow views render its bundled templates.
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
}]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ["IDP_DB"],
        "OPTIONS": {
            # Many server threads write tokens at once: take the write lock up front and wait
            # for it rather than fail with "database is locked"; WAL lets readers go on.
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF",
        },
    }
}

# Django's default PBKDF2 costs ~0.5 s per check; DOT hashes client secrets with it too.
# A token request must be cheap here so that timing tests measure the proxy, not the IdP.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

BASE_URL = os.environ["IDP_BASE_URL"]

OAUTH2_PROVIDER = {
    "ACCESS_TOKEN_EXPIRE_SECONDS": int(os.environ.get("IDP_ACCESS_TOKEN_SECONDS", "3")),
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
    "PKCE_REQUIRED": True,
    # RFC 9700 §2.1.1: S256 only, so a client that falls back to "plain" fails here.
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "SCOPES": {"read": "Reading scope", "write": "Writing scope"},
    "DEFAULT_SCOPES": ["read", "write"],
    "OAUTH_DEVICE_VERIFICATION_URI": f"{BASE_URL}/o/device/",
    # RFC 8628 §3.2 default is 5 s; 1 s keeps device-flow tests short.
    "DEVICE_FLOW_INTERVAL": 1,
}

# stderr keeps what a failing test needs (errors, tracebacks). Quieted: DOT's RFC 9700 nag on
# every password grant, and waitress noting that requests wait for a thread (the storm tests
# send more at once than it has threads, on purpose).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["stderr"], "level": "WARNING"},
    "loggers": {
        "oauth2_provider": {"level": "ERROR"},
        "waitress.queue": {"level": "ERROR"},
    },
}
