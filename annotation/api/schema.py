"""Shared pieces of the OpenAPI description: the error bodies every operation may return."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers

from .idempotency import IDEMPOTENCY_HEADER

FIELD_ERRORS = OpenApiResponse(
    response={
        "type": "object",
        "additionalProperties": {"type": "array", "items": {"type": "string"}},
        "description": "Field path → messages, e.g. "
        '{"items[3].payload.sentences (external_id \'c3\')": ["…"]}.',
    },
    description="Bad input: each field at fault with its messages; nothing was written.",
)


class Detail(serializers.Serializer):
    detail = serializers.CharField()


def _detail(text: str) -> OpenApiResponse:
    return OpenApiResponse(response=Detail, description=text)


THROTTLED = OpenApiResponse(
    response=Detail,
    description="Too many requests from this client address (RATE_LIMIT_TOKEN); wait the seconds "
    "in the Retry-After header.",
)

COMMON_ERRORS = {
    401: _detail("No credentials (send `Authorization: Token …` or log in)."),
    403: _detail("Not a researcher, or not allowed to make this change."),
    404: _detail("No such object among those you can reach."),
}


def documented(*, summary: str, responses: dict, request=None, write: bool = False, **extra):
    """``extend_schema`` with the common error answers (and the idempotency header on writes)."""
    answers = {**COMMON_ERRORS, **responses}
    parameters = list(extra.pop("parameters", []))
    if parameters or getattr(responses.get(200), "many", False):
        answers.setdefault(400, FIELD_ERRORS)  # a bad or unknown query parameter, a bad page
    if write:
        answers.setdefault(400, FIELD_ERRORS)
        answers.setdefault(413, _detail("The body is larger than API_MAX_UPLOAD_BYTES."))
        answers[409] = _detail("The first request with this Idempotency-Key is still running.")
        answers[422] = OpenApiResponse(
            response=FIELD_ERRORS.response,
            description="This Idempotency-Key was used before for a different request; nothing was written.",
        )
        parameters.append(IDEMPOTENCY_HEADER)
    return extend_schema(summary=summary, request=request, responses=answers, parameters=parameters, **extra)
