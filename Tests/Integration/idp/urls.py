from django.urls import include, path, re_path
from oauth2_provider.urls import metadata_urlpatterns

from idp import control, views

urlpatterns = [
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    # RFC 8414 §3: discovery at the origin's /.well-known/oauth-authorization-server, so
    # that the issuer is the server's base URL.
    path("", include((metadata_urlpatterns, "metadata"))),
    path("accounts/login/", views.login_view),
    re_path(r"^api/", views.echo),
    path("_test/counters", control.counters),
    path("_test/token-answers", control.token_answers),
    path("_test/reset-counters", control.reset_counters),
    path("_test/revoke-refresh-tokens", control.revoke_refresh_tokens),
    path("_test/expire-access-tokens", control.expire_access_tokens),
]
