"""Responses, one per answer, with their provenance and timings."""

from __future__ import annotations

from rest_framework import serializers

from annotation.kinds import all_kinds
from annotation.models import Response


class ResponseOut(serializers.ModelSerializer):
    study = serializers.CharField(source="study.slug")
    kind = serializers.CharField(source="study.kind")
    item = serializers.CharField(source="item.external_id")
    participant = serializers.CharField(source="participant.public_id")
    position = serializers.IntegerField(source="assignment.position")

    class Meta:
        model = Response
        fields = [
            "id", "study", "kind", "item", "participant", "position", "answer", "points", "correct",
            "score_details", "display_order", "is_attention_check", "flagged", "shown_at", "answered_at",
            "duration_seconds", "imported",
        ]  # fmt: skip


class ResponseFilter(serializers.Serializer):
    study = serializers.SlugField(required=False)
    kind = serializers.ChoiceField(choices=[], required=False)
    since = serializers.DateTimeField(required=False, help_text="answered at or after (ISO 8601)")
    until = serializers.DateTimeField(required=False, help_text="answered before (ISO 8601)")
    flagged = serializers.BooleanField(required=False, allow_null=True, default=None)
    attention_check = serializers.BooleanField(required=False, allow_null=True, default=None)
    participant = serializers.CharField(required=False, help_text="a participant's public id")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = list(all_kinds())
