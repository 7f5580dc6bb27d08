"""API errors: bad input is a 400 naming each field; a service's refusal keeps its status."""

from __future__ import annotations

from rest_framework import status
from rest_framework.exceptions import APIException
from rest_framework.response import Response
from rest_framework.views import exception_handler

from annotation.errors import InputError, NotAllowed


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is larger than this API accepts."
    default_code = "too_large"


def api_exception_handler(exc, context):
    """DRF's handler, plus the services' own exceptions (``InputError`` → 400 field map)."""
    if isinstance(exc, InputError):
        return Response(exc.errors, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, NotAllowed):
        return Response({"detail": str(exc)}, status=status.HTTP_403_FORBIDDEN)
    return exception_handler(exc, context)
