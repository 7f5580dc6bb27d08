"""Errors the services raise for bad input, each naming the field at fault."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from rest_framework.exceptions import ValidationError

from annotation.serializer_reuse import validated


class NotAllowed(PermissionDenied):
    """The user may see the object but not make this change: a 403 on the pages (Django
    answers ``PermissionDenied`` so) and in the API (``api.errors``), nothing changed."""


class InputError(Exception):
    """Bad input, nothing written. ``errors`` maps a field path to its messages."""

    def __init__(self, errors: dict[str, list[str]]):
        self.errors = errors
        super().__init__(self.summary())

    def summary(self) -> str:
        return "; ".join(f"{path}: {' '.join(messages)}" for path, messages in self.errors.items())

    @classmethod
    def from_validation(cls, exc: ValidationError, prefix: str = "") -> InputError:
        return cls(flatten_errors(exc.detail, prefix))


def checked(serializer_class, data, *, place: str = "", **kwargs) -> dict:
    """``data`` validated by ``serializer_class`` (built with ``kwargs``), as a dict.

    Bad data raises ``InputError`` with each message under its field path, prefixed by
    ``place`` ("parameters" → "parameters.limit"). The one way services turn a DRF
    serializer's verdict into an ``InputError``."""
    if set(kwargs) <= {"context"}:  # one instance for many values inside reused_serializers()
        try:
            return dict(validated(serializer_class, data, kwargs.get("context")))
        except ValidationError as exc:
            raise InputError(flatten_errors(exc.detail, place)) from None
    serializer = serializer_class(data=data, **kwargs)
    if not serializer.is_valid():
        raise InputError(flatten_errors(serializer.errors, place))
    return dict(serializer.validated_data)


def flatten_errors(detail, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested error detail → {"items[3].payload.sentences": ["…"]}."""
    flat: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = "" if key == "non_field_errors" else str(key)
            path = f"{prefix}.{name}" if prefix and name else (prefix or name)
            for sub, messages in flatten_errors(value, path).items():
                flat.setdefault(sub, []).extend(messages)
    elif isinstance(detail, list) and detail and all(isinstance(x, (dict, list)) for x in detail):
        for index, value in enumerate(detail):
            if value:
                flat.update(flatten_errors(value, f"{prefix}[{index}]"))
    elif isinstance(detail, list):
        flat[prefix or "answer"] = [str(x) for x in detail]
    else:
        flat[prefix or "answer"] = [str(detail)]
    return flat
