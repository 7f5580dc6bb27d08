"""A study's own settings as a study file and the API spell them (``studies`` loads files
with them, ``study_files`` writes them back out)."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import URLValidator
from rest_framework import serializers

from annotation.models import Study

from .human_subset import HumanSubsetField

# A study's own settings, listed once: a study file's fields, the API's study record and
# what PATCH may change are this list plus, where they apply, slug, kind, status and config.
STUDY_SETTINGS = [
    "title", "description", "instructions", "consent", "public", "annotations_per_item",
    "items_per_session", "attention_check_rate", "max_attention_failures", "assignment_timeout_minutes",
    "completion_code", "screenout_code", "completion_url", "expected_seconds_per_page",
    "min_seconds_per_page", "pay_partial_sessions", "hold_submit", "close_when_full", "language",
    "participants_may_erase", "retention_days", "retention_erases_answers", "authenticity_signals",
    "human_subset",
]  # fmt: skip


class CompletionURLField(serializers.CharField):
    """A URL template, not a URL: ``{code}`` is not allowed in an RFC 3986 URI, so the schema
    says "string" rather than ``format: uri``; the check is Django's URL validator, as before."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 500)
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_blank", True)
        kwargs.setdefault(
            "help_text",
            "Crowd platform return link, a URL template: {code} is replaced by the completion code, "
            "e.g. https://app.prolific.com/submissions/complete?cc={code}. Empty: none.",
        )
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value:  # checked here, not as a validator: drf-spectacular would add format: uri
            try:
                URLValidator()(value)
            except DjangoValidationError:
                raise serializers.ValidationError("Enter a valid URL.") from None
        return value


class StudyFields(serializers.ModelSerializer):
    """The study-level fields of a study file (items and config are checked apart)."""

    slug = serializers.SlugField(max_length=80)
    completion_url = CompletionURLField()
    human_subset = HumanSubsetField()

    class Meta:
        model = Study
        fields = ["slug", "kind", "status", *STUDY_SETTINGS]
