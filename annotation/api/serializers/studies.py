"""Studies: a summary for lists, the full record, a partial update and a status change."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.models import Study
from annotation.services.authoring.human_subset import HumanSubsetField
from annotation.services.authoring.studies import STUDY_SETTINGS, CompletionURLField, StudyFields
from annotation.services.authoring.validation import ItemFields
from annotation.services.participation.assignment import item_progress
from annotation.services.study_status import CLOSING_FIELDS


class Progress(serializers.Serializer):
    items = serializers.IntegerField()
    items_complete = serializers.IntegerField()
    responses = serializers.IntegerField()
    responses_wanted = serializers.IntegerField()


class StudySummary(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", default=None, allow_null=True)
    item_count = serializers.IntegerField(source="n_items")
    response_count = serializers.IntegerField(
        source="n_responses",
        help_text="The answers that count (as the study's progress.responses): no test runs, "
        "model raters, adjudicators or attention checks.",
    )

    class Meta:
        model = Study
        fields = [
            "slug",
            "title",
            "kind",
            "status",
            "public",
            "owner",
            "item_count",
            "response_count",
            "created_at",
        ]


class StudyDetail(serializers.ModelSerializer):
    """The full record; ``closed_at``, ``closed_because`` and ``closed_details`` (why, when and
    on what figures the study closed) are read-only: the closing rules write them."""

    owner = serializers.CharField(source="owner.username", default=None, allow_null=True)
    shared_with: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", many=True, read_only=True
    )
    completion_url = CompletionURLField()
    human_subset = HumanSubsetField(read_only=True)
    progress = serializers.SerializerMethodField()
    closed_because = serializers.ChoiceField(
        choices=[("", "not closed"), *Study.ClosedBecause.choices],
        read_only=True,
        help_text="Why the study closed; empty while it is not closed.",
    )

    class Meta:
        model = Study
        fields = [
            *StudyFields.Meta.fields, "config", "owner", "shared_with", "progress", *CLOSING_FIELDS,
            "created_at", "updated_at",
        ]  # fmt: skip

    @extend_schema_field(Progress)
    def get_progress(self, study: Study) -> dict[str, Any]:
        # The views pass the progress they counted; the browsable API's PATCH form does not.
        progress = self.context.get("progress") or item_progress(study)
        return Progress(progress).data


class StudyFile(StudyFields):
    """A study file (docs/formats.md): the study's fields, its kind's config, and its items."""

    config = serializers.DictField(required=False)
    items = ItemFields(many=True)

    class Meta(StudyFields.Meta):
        fields = [*StudyFields.Meta.fields, "config", "items"]


class StudyUpdate(serializers.ModelSerializer):
    """The fields a researcher may change after creation: not the slug, nor the status (it
    has its own endpoint); the kind only while the study has no items. Any other field is
    an error, not silently ignored."""

    config = serializers.DictField(required=False)
    completion_url = CompletionURLField()
    human_subset = HumanSubsetField()
    shared_with = serializers.ListField(
        child=serializers.CharField(max_length=150),
        required=False,
        help_text="Usernames of researchers who may see and change the study (owner or admin only).",
    )

    class Meta:
        model = Study
        fields = [*STUDY_SETTINGS, "kind", "config", "shared_with"]

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: [_not_changeable(name)] for name in unknown})
        return super().to_internal_value(data)


def _not_changeable(name: str) -> str:
    if name == "status":
        return "Change the status with POST /studies/<slug>/status/."
    if name in StudyDetail.Meta.fields:
        return "This field cannot be changed."
    return "Unknown field."


class StatusChange(serializers.Serializer):
    status = serializers.ChoiceField(choices=Study.Status.choices)
