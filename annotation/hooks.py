"""/hooks/…: the addresses crowd platforms send their events to (webhooks).

Neither face's pages nor the researchers' API (no token, no session, no schema): the platform
proves itself by its signature, which the platform's folder checks (``platforms.prolific.hooks``).
CSRF-exempt for that reason, these views only; rate-limited per address as the other public
endpoints (``RATE_LIMIT_HOOK``, ``services.web.ratelimit``).
"""

from __future__ import annotations

from django.http import JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from annotation.platforms.prolific.hooks import receive_prolific


@csrf_exempt
@require_POST
def prolific_hook(request, slug: str) -> JsonResponse:
    answer = receive_prolific(slug, request.headers, request.body)
    return JsonResponse(answer.as_dict(), status=answer.status)


urlpatterns = [
    path("prolific/<slug:slug>/", prolific_hook, name="prolific-hook"),
]
