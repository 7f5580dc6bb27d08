"""Liveness for load balancers and container healthchecks."""

from django.core.cache import caches
from django.db import connection
from django.http import HttpRequest, HttpResponse

from roft_site.redis_cache import redis_is_up


def healthz(request: HttpRequest) -> HttpResponse:
    """200 "ok" when the process answers, the database takes a query and Redis (where one is
    configured) answers a PING; 503 naming Redis when it does not: the site still serves
    (sessions from the database, rate limits paused), but in a degraded state."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    if redis_is_up(caches["default"]) is False:
        return HttpResponse("redis: down\n", status=503, content_type="text/plain")
    return HttpResponse("ok", content_type="text/plain")
