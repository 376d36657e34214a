"""Test-only parts of the IdP: request counters (taken in a middleware, so that they count
what reached the server, answered or not), the record of every token answer (which refresh
token was presented and which one the answer issued, to follow a rotation chain), and the
endpoints that let a test read and reset them, revoke refresh tokens and expire access
tokens."""

import json
import threading
import time
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
_token_errors: Counter = Counter()  # OAuth error code of a refused token request -> count
_token_answers: list = []  # one dict per answered token request, in the order answered
_token_in_flight = 0
_revocations: Counter = Counter()  # token_type_hint -> count
# waitress's task dispatcher (set by idp.server): a request it has read waits in its queue
# for a thread before any middleware sees it, so `in_flight` alone misses it.
dispatcher = None


def snapshot() -> dict:
    with _lock:
        token = dict(_token_requests)
        token["total"] = sum(_token_requests.values())
        revoke = dict(_revocations)
        revoke["total"] = sum(_revocations.values())
        return {"token": token, "api": _api_requests, "token_errors": dict(_token_errors), "revoke": revoke}


def _answer_record(request, grant_type: str, response) -> dict:
    """What a token answer did to the refresh tokens: the one presented (a refresh) and the
    one issued (a success), with the error code of a refusal and the time of the answer."""
    try:
        body = json.loads(response.content)
    except ValueError:
        body = {}
    body = body if isinstance(body, dict) else {}
    return {"grant_type": grant_type, "status": response.status_code,
            "presented": request.POST.get("refresh_token") if grant_type == "refresh_token" else None,
            "issued": body.get("refresh_token") if response.status_code == 200 else None,
            "error": body.get("error") if response.status_code != 200 else None, "answered_at": time.time()}


class CountingMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        global _api_requests
        if request.path == "/o/token/":
            return self._token(request)
        if request.path == "/o/revoke_token/":
            hint = request.POST.get("token_type_hint", "") if request.method == "POST" else ""
            with _lock:
                _revocations[hint or "(none)"] += 1
        elif request.path.startswith("/api/"):
            with _lock:
                _api_requests += 1
        return self.get_response(request)

    def _token(self, request):
        global _token_in_flight
        grant_type = request.POST.get("grant_type", "") if request.method == "POST" else ""
        with _lock:
            _token_requests[grant_type or "(none)"] += 1
            _token_in_flight += 1
        response = None
        try:
            response = self.get_response(request)
            return response
        finally:
            # Recorded before the request stops counting as in flight: a reader that saw
            # none in flight has every answer.
            record = _answer_record(request, grant_type, response) if response is not None else None
            with _lock:
                if record is not None:
                    _token_answers.append(record)
                    if record["error"]:
                        _token_errors[record["error"]] += 1
                _token_in_flight -= 1


@require_GET
def counters(request):
    return JsonResponse(snapshot())


def _other_requests() -> int:
    """Requests waitress has read and not yet answered, other than the one asking: queued
    for a thread or being served."""
    if dispatcher is None:
        return 0
    with dispatcher.lock:
        return len(dispatcher.queue) + dispatcher.active_count - 1


@require_GET
def token_answers(request):
    """The token answers from number `since` (default 0) on (see _answer_record), how many
    token requests are still being answered, and how many other requests the server holds:
    a killed client's request runs to its end here all the same, after waiting for a thread
    when all of them are busy."""
    since = int(request.GET.get("since", "0"))
    pending = _other_requests()
    with _lock:
        return JsonResponse({"answers": _token_answers[since:], "in_flight": _token_in_flight, "pending": pending})


@csrf_exempt
@require_POST
def reset_counters(request):
    global _api_requests
    with _lock:
        _token_requests.clear()
        _token_errors.clear()
        _token_answers.clear()
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
