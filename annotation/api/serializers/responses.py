"""Responses, one per answer, with their provenance and timings."""

from __future__ import annotations

from typing import cast

from rest_framework import serializers

from annotation.kinds import all_kinds
from annotation.models import Response
from annotation.services.pseudonyms import participant_pseudonym


class ResponseOut(serializers.ModelSerializer):
    """``participant`` is the site-wide ``public_id`` (as in the participants API and its
    filter); ``pseudonym`` the participant's id in this study's exports and pages."""

    study = serializers.CharField(source="study.slug")
    kind = serializers.CharField(source="study.kind")
    item = serializers.CharField(source="item.external_id")
    participant = serializers.CharField(source="participant.public_id")
    pseudonym = serializers.SerializerMethodField(
        help_text="The participant's id in this study's exports (their `participant` column) and pages"
    )
    position = serializers.IntegerField(source="assignment.position")

    class Meta:
        model = Response
        fields = [
            "id", "study", "kind", "item", "participant", "pseudonym", "position", "answer", "points",
            "correct", "score_details", "display_order", "is_attention_check", "flagged", "too_fast",
            "shown_at", "answered_at", "duration_seconds", "imported", "authenticity", "strong_sign",
        ]  # fmt: skip

    def get_pseudonym(self, response: Response) -> str:
        return participant_pseudonym(response.study, response.participant)


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
        cast(serializers.ChoiceField, self.fields["kind"]).choices = list(all_kinds())  # declared above
