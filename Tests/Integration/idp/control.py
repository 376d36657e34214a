"""Test-only parts of the IdP: request counters (taken in a middleware, so that they count
what reached the server, answered or not) and the endpoints that let a test reset them,
revoke refresh tokens and expire access tokens."""

import threading
from collections import Counter
from datetime import timedelta

from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST
from oauth2_provider.models import get_access_token_model, get_refresh_token_model

_lock = threading.Lock()
_token_requests: Counter = Counter()  # grant_type -> count
_api_requests = 0
_revocations: Counter = Counter()  # token_type_hint -> count


def snapshot() -> dict:
    with _lock:
        token = dict(_token_requests)
        token["total"] = sum(_token_requests.values())
        revoke = dict(_revocations)
        revoke["total"] = sum(_revocations.values())
        return {"token": token, "api": _api_requests, "revoke": revoke}


class CountingMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        global _api_requests
        if request.path == "/o/token/":
            grant_type = request.POST.get("grant_type", "") if request.method == "POST" else ""
            with _lock:
                _token_requests[grant_type or "(none)"] += 1
        elif request.path == "/o/revoke_token/":
            hint = request.POST.get("token_type_hint", "") if request.method == "POST" else ""
            with _lock:
                _revocations[hint or "(none)"] += 1
        elif request.path.startswith("/api/"):
            with _lock:
                _api_requests += 1
        return self.get_response(request)


@require_GET
def counters(request):
    return JsonResponse(snapshot())


@csrf_exempt
@require_POST
def reset_counters(request):
    global _api_requests
    with _lock:
        _token_requests.clear()
        _revocations.clear()
        _api_requests = 0
    return JsonResponse(snapshot())


@csrf_exempt
@require_POST
def revoke_refresh_tokens(request):
    """Revokes every live refresh token of the user named by `username` (default: all users),
    so that the next refresh answers invalid_grant. DOT's revoke() also deletes the access
    token issued with it."""
    tokens = get_refresh_token_model().objects.filter(revoked__isnull=True)
    if request.POST.get("username"):
        tokens = tokens.filter(user__username=request.POST["username"])
    revoked = 0
    for token in tokens:
        token.revoke()
        revoked += 1
    return JsonResponse({"revoked": revoked})


@csrf_exempt
@require_POST
def expire_access_tokens(request):
    past = timezone.now() - timedelta(seconds=1)
    return JsonResponse({"expired": get_access_token_model().objects.update(expires=past)})
