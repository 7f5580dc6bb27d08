"""Studies: a summary for lists, the full record, a partial update and a status change."""

from __future__ import annotations

from rest_framework import serializers

from annotation.models import Study
from annotation.services.studies import ItemFields, StudyFields


class Progress(serializers.Serializer):
    items = serializers.IntegerField()
    items_complete = serializers.IntegerField()
    responses = serializers.IntegerField()
    responses_wanted = serializers.IntegerField()


class StudySummary(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", default=None, allow_null=True)
    item_count = serializers.IntegerField(source="n_items")
    response_count = serializers.IntegerField(source="n_responses")

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
    owner = serializers.CharField(source="owner.username", default=None, allow_null=True)
    shared_with = serializers.SlugRelatedField(slug_field="username", many=True, read_only=True)
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Study
        fields = [
            "slug", "title", "kind", "description", "instructions", "consent", "config", "status", "public",
            "annotations_per_item", "items_per_session", "attention_check_rate", "max_attention_failures",
            "assignment_timeout_minutes", "completion_code", "screenout_code", "completion_url",
            "owner", "shared_with", "progress", "created_at", "updated_at",
        ]  # fmt: skip

    def get_progress(self, study: Study) -> Progress:
        return Progress(self.context["progress"]).data


class StudyFile(StudyFields):
    """A study file (docs/formats.md): the study's fields, its kind's config, and its items."""

    config = serializers.DictField(required=False)
    items = ItemFields(many=True)

    class Meta(StudyFields.Meta):
        fields = [*StudyFields.Meta.fields, "config", "items"]


class StudyUpdate(serializers.ModelSerializer):
    """The fields a researcher may change after creation (not slug or kind)."""

    config = serializers.DictField(required=False)
    shared_with = serializers.ListField(
        child=serializers.CharField(max_length=150),
        required=False,
        help_text="Usernames of researchers who may see and change the study (owner or admin only).",
    )

    class Meta:
        model = Study
        fields = [
            "title", "description", "instructions", "consent", "config", "public", "annotations_per_item",
            "items_per_session", "attention_check_rate", "max_attention_failures",
            "assignment_timeout_minutes", "completion_code", "screenout_code", "completion_url",
            "shared_with",
        ]  # fmt: skip


class StatusChange(serializers.Serializer):
    status = serializers.ChoiceField(choices=Study.Status.choices)
