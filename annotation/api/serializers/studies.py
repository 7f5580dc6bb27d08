"""Studies: a summary for lists, the full record, a partial update and a status change."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.models import Study, StudyShare, StudyVersion
from annotation.services.authoring.human_subset import HumanSubsetField
from annotation.services.authoring.study_fields import STUDY_SETTINGS, CompletionURLField, StudyFields
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


class StudyShareOut(serializers.Serializer):
    """A researcher the study is shared with, and their role (docs/api.md, roles)."""

    username = serializers.CharField(source="user.username")
    role = serializers.ChoiceField(choices=StudyShare.Role.choices)


# The study's latest version and its frozen plan (``versions``' fields, read-only).
FROZEN_FIELDS = ["version", "analysis_plan", "frozen_at", "frozen_digest", "frozen_version"]


class StudyDetail(serializers.ModelSerializer):
    """The full record; ``closed_at``, ``closed_because`` and ``closed_details`` (why, when and
    on what figures the study closed) are read-only: the closing rules write them."""

    owner = serializers.CharField(source="owner.username", default=None, allow_null=True)
    shared_with: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", many=True, read_only=True
    )
    shares = StudyShareOut(many=True, read_only=True, help_text="Each share's researcher and role.")
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
            *StudyFields.Meta.fields, "config", "owner", "shared_with", "shares", "progress", *CLOSING_FIELDS,
            *FROZEN_FIELDS, "created_at", "updated_at",
        ]  # fmt: skip
        read_only_fields = FROZEN_FIELDS

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
        help_text=(
            "Usernames of the researchers the study is shared with (owners or admins only): those "
            "already shared with keep their role, the others become analysts."
        ),
    )
    analysis_plan = serializers.DictField(
        required=False, help_text="The analysis plan (docs/reproducibility.md); a deviation once frozen."
    )
    deviation_reason = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=5000,
        write_only=True,
        help_text="Why a study whose plan is frozen is changed: the change is recorded as a deviation.",
    )

    class Meta:
        model = Study
        fields = [*STUDY_SETTINGS, "kind", "config", "shared_with", "analysis_plan", "deviation_reason"]

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


class Freeze(serializers.Serializer):
    analysis_plan = serializers.DictField(
        help_text="The analysis plan (docs/reproducibility.md): populations, tests, hypotheses, "
        "stopping_rule, exclusion_rules, sample_size."
    )


class VersionOut(serializers.ModelSerializer):
    """One version of a study: what changed, by whom, when, and why (a deviation's reason)."""

    author = serializers.CharField(source="author.username", default=None, allow_null=True)

    class Meta:
        model = StudyVersion
        fields = [
            "number", "digest", "items_digest", "item_count", "diff", "changed", "author", "source",
            "reason", "deviation", "created_at",
        ]  # fmt: skip
