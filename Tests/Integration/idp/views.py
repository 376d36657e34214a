"""The IdP's own views: a login a script can post to, and the protected API resource."""

import hashlib

from django.contrib.auth import authenticate, login
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from oauth2_provider.oauth2_backends import get_oauthlib_core
from oauth2_provider.www_authenticate import build_bearer_challenge


@csrf_exempt
@require_POST
def login_view(request):
    """POST username and password; answers 204 with the session cookie, or 401. Django's
    LoginView needs a template and a CSRF round trip, which a scripted client has no use for."""
    user = authenticate(request, username=request.POST.get("username"), password=request.POST.get("password"))
    if user is None:
        return HttpResponse(status=401)
    login(request, user)
    return HttpResponse(status=204)


@csrf_exempt
def echo(request):
    """Any method under /api/: whom the bearer token belongs to and what arrived (the body
    whole, so a test can tell that a replayed request kept it). The token is checked by DOT;
    a failure gets its RFC 6750 §3 challenge: 401 with `error="invalid_token"` for an expired,
    revoked or unknown token, and no error code when there was no token at all."""
    body = request.body  # read first: DOT parses form bodies, which would consume a multipart one
    valid, oauth_request = get_oauthlib_core().verify_request(request, scopes=[])
    if not valid:
        response = HttpResponse(status=401)
        response["WWW-Authenticate"] = build_bearer_challenge(
            request, getattr(oauth_request, "oauth2_error", None), realm="latchkey-idp", resource_metadata_url=None)
        return response
    access = oauth_request.access_token
    return JsonResponse({
        "user": access.user.username if access.user else None,
        "client_id": access.application.client_id,
        "token": request.headers["Authorization"].partition(" ")[2],
        "scope": access.scope,
        "method": request.method,
        "path": request.path,
        "query": request.META.get("QUERY_STRING", ""),
        "content_type": request.content_type,
        "body": body.decode("utf-8", errors="replace"),
        "body_length": len(body),
        "body_sha256": hashlib.sha256(body).hexdigest(),
    })
