"""Participants of a study with their quality figures, and the marks a researcher sets."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.models.enrollment import FLAG_REASON_MAX
from annotation.services.access import can_see_platform_ids
from annotation.services.quality import ParticipantQuality


class QualificationOut(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=["passed", "failed", "flagged_kept_playing", "pending", "none"])
    detail = serializers.CharField()


class AgreementOut(serializers.Serializer):
    compared = serializers.IntegerField(help_text="Observations with a clear majority among the others")
    agreed = serializers.IntegerField()
    rate = serializers.FloatField(allow_null=True)


class CompetenceOut(serializers.Serializer):
    mace = serializers.FloatField(
        allow_null=True, help_text="MACE's estimate: how likely an answer is informed, not guessed"
    )
    dawid_skene = serializers.FloatField(
        allow_null=True, help_text="Dawid–Skene's probability of a right answer"
    )
    answers = serializers.IntegerField(help_text="Categorical answers the estimates rest on")
    not_identifiable = serializers.CharField(
        help_text="Why the answers cannot estimate this annotator's competence (then both figures are "
        "null), e.g. 'not identifiable: one annotator only: …'; empty when they can"
    )


class ParticipantOut(serializers.Serializer):
    """Built from a ``ParticipantQuality``; ``platform_worker_id`` only for the study's
    owner and admins. ``pseudonym`` is the participant's id in the exports."""

    participant = serializers.CharField(source="enrollment.participant.public_id")
    pseudonym = serializers.CharField(help_text="The participant's id in this study's exports")
    # DRF's metaclass takes declared fields off the class, so this is a field named "source",
    # not the Field.source attribute the stubs see it override.
    source = serializers.CharField(source="enrollment.participant.source")  # type: ignore[assignment]
    platform_worker_id = serializers.SerializerMethodField()
    status = serializers.CharField(source="enrollment.status")
    answered = serializers.IntegerField(source="enrollment.answered_count")
    points = serializers.FloatField(source="enrollment.points_total")
    attention_passed = serializers.IntegerField(source="enrollment.attention_passed")
    attention_failed = serializers.IntegerField(source="enrollment.attention_failed")
    median_seconds_per_page = serializers.FloatField(allow_null=True)
    agreement = serializers.SerializerMethodField()
    competence = serializers.SerializerMethodField(
        help_text="As the study's last reports estimated it (null: no reports yet, or no categorical answers)"
    )
    qualification = QualificationOut()
    attention = QualificationOut(help_text="What the attention checks say")
    exam = QualificationOut(allow_null=True, help_text="The qualification exam's outcome; null: no exam")
    flagged = serializers.BooleanField(source="enrollment.flagged", help_text="Flagged in this study")
    flag_reason = serializers.CharField(source="enrollment.flag_reason", help_text="Why, in this study")
    blocked = serializers.BooleanField(source="enrollment.participant.blocked")
    excluded = serializers.BooleanField(source="enrollment.excluded")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Study id → may the request's user see platform ids: one answer per study and list
        # (a list's rows share one child serializer).
        self._sees_platform_ids: dict[int, bool] = {}

    def get_platform_worker_id(self, quality: ParticipantQuality) -> str | None:
        enrollment = quality.enrollment
        seen = self._sees_platform_ids
        if enrollment.study_id not in seen:
            seen[enrollment.study_id] = can_see_platform_ids(self.context["request"].user, enrollment.study)
        return enrollment.participant.platform_worker_id if seen[enrollment.study_id] else None

    @extend_schema_field(AgreementOut)
    def get_agreement(self, quality: ParticipantQuality) -> dict[str, Any]:
        return AgreementOut(
            {
                "compared": quality.agreement_compared,
                "agreed": quality.agreement_agreed,
                "rate": quality.agreement_rate,
            }
        ).data

    @extend_schema_field(CompetenceOut(allow_null=True))
    def get_competence(self, quality: ParticipantQuality) -> dict[str, Any] | None:
        found = self.context.get("competence", {}).get(quality.pseudonym)
        return None if found is None else CompetenceOut(found).data


class PageOut(serializers.Serializer):
    position = serializers.IntegerField()
    item = serializers.CharField()
    status = serializers.CharField()
    attention_check = serializers.BooleanField()
    duration_seconds = serializers.FloatField(allow_null=True)
    correct = serializers.BooleanField(allow_null=True)
    points = serializers.FloatField(allow_null=True)
    answered_at = serializers.DateTimeField(allow_null=True)
    answer = serializers.JSONField(
        allow_null=True, help_text="What the participant answered (null: unanswered)"
    )
    gold = serializers.JSONField(allow_null=True, help_text="The item's gold answer, where it has one")


class ParticipantDetailOut(ParticipantOut):
    pages = PageOut(many=True)


class ParticipantMarks(serializers.Serializer):
    """Flag in this study (with a reason: the answers stop counting) or exclude from this
    study's counts and reports (data is kept). Blocking is site-wide, an admin's act."""

    flagged = serializers.BooleanField(required=False)
    # Not trimmed: DRF trims before it checks max_length, so a 201-character reason starting
    # with a blank was accepted and stored cut; the schema's maxLength is what holds.
    flag_reason = serializers.CharField(
        required=False, allow_blank=True, trim_whitespace=False, max_length=FLAG_REASON_MAX
    )
    blocked = serializers.BooleanField(
        required=False, help_text="Refused: only an admin blocks (site-wide); flag or exclude instead."
    )
    excluded = serializers.BooleanField(required=False)

    def validate_blocked(self, value):
        raise serializers.ValidationError(
            "Blocking is site-wide and only an admin's; flag or exclude the participant in this study."
        )

    def validate(self, data):
        if not data:
            raise serializers.ValidationError(
                {"body": ["Give at least one of flagged, flag_reason, excluded."]}
            )
        return data


class ReturnedIn(serializers.Serializer):
    participants = serializers.ListField(
        child=serializers.CharField(max_length=200),
        min_length=1,
        max_length=10000,
        help_text="Public ids or crowd-platform ids (e.g. PROLIFIC_PIDs of returned or timed-out ones).",
    )


class ReturnedOut(serializers.Serializer):
    returned = serializers.IntegerField()
    released_assignments = serializers.IntegerField()
