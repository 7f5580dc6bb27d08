"""The ``Idempotency-Key`` header on API writes (see annotation.services.web.idempotency)."""

from __future__ import annotations

import hashlib
from functools import wraps

from drf_spectacular.utils import OpenApiParameter
from rest_framework import status
from rest_framework.exceptions import APIException
from rest_framework.response import Response

from annotation.services.web.idempotency import KeyInUse, KeyReused, claim_key, forget_key, store_answer

from .parsers import spool_body

IDEMPOTENCY_HEADER = OpenApiParameter(
    name="Idempotency-Key",
    type={"type": "string", "minLength": 1, "maxLength": 255},
    location=OpenApiParameter.HEADER,
    required=False,
    description="Any unique string of 1 to 255 characters (e.g. a UUID); another length is a 400. "
    "A retry with the same key and request replays the first "
    "answer instead of writing again; the same key with a different request (any other method, "
    "path, query, content type or body) is a 422.",
)


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"


def request_fingerprint(request) -> str:
    """Method, path, query, content type and the whole body (hashed as it is read, at any size)."""
    digest = hashlib.sha256()
    for part in (request.method, request.path, request.META.get("QUERY_STRING", ""), request.content_type):
        digest.update(part.encode() + b"\0")
    digest.update(spool_body(request).encode())
    return digest.hexdigest()


def idempotent(handler):
    """Wrap a view's write handler: replay the stored answer for a repeated key."""

    @wraps(handler)
    def wrapped(view, request, *args, **kwargs):
        key = request.headers.get("Idempotency-Key")
        if key is None:
            return handler(view, request, *args, **kwargs)
        try:
            claim = claim_key(user=request.user, key=key, fingerprint=request_fingerprint(request))
        except KeyInUse as exc:
            raise Conflict(str(exc)) from None
        except KeyReused as exc:
            return Response(exc.errors, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        if claim.replay:
            return Response(
                claim.row.body, status=claim.row.status_code, headers={"Idempotent-Replayed": "true"}
            )
        try:
            response = handler(view, request, *args, **kwargs)
        except BaseException:
            forget_key(claim)
            raise
        if response.status_code >= 500:
            forget_key(claim)
        else:
            store_answer(claim, status_code=response.status_code, body=response.data)
        return response

    return wrapped
