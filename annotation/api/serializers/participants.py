"""Participants of a study with their quality figures, and the marks a researcher sets."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.models.enrollment import FLAG_REASON_MAX
from annotation.services.access import can_see_platform_ids
from annotation.services.analysis.competence import COMPETENCE_SORTS
from annotation.services.analysis.quality import ParticipantQuality


class QualificationOut(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=["passed", "failed", "flagged_kept_playing", "pending", "none"])
    detail = serializers.CharField()


class AgreementOut(serializers.Serializer):
    compared = serializers.IntegerField(help_text="Observations with a clear majority among the others")
    agreed = serializers.IntegerField()
    rate = serializers.FloatField(allow_null=True)


class ParticipantSort(serializers.Serializer):
    sort = serializers.ChoiceField(
        choices=list(COMPETENCE_SORTS),
        required=False,
        help_text="competence: by the lower end of the competence's 95% interval (MACE; the "
        "scales' median correlation in a study without nominal questions), lowest first; "
        "-competence: highest first. Participants without a figure come last either way",
    )


def _end(attribute: str, text: str) -> serializers.FloatField:
    return serializers.FloatField(source=attribute, allow_null=True, help_text=text)


LOW = "Lower end of its 95% interval (bootstrap over items; null: none); ?sort=competence orders by it"
HIGH = "Upper end of its 95% interval"


class CompetenceOut(serializers.Serializer):
    """MACE and Dawid–Skene on the nominal questions, the median correlation on the scales,
    each with its 95% interval."""

    mace = _end("mace.value", "MACE's estimate: how likely an answer is informed, not guessed")
    mace_low = _end("mace.low", LOW)
    mace_high = _end("mace.high", HIGH)
    dawid_skene = _end("dawid_skene.value", "Dawid–Skene's probability of a right answer")
    dawid_skene_low = _end("dawid_skene.low", LOW)
    dawid_skene_high = _end("dawid_skene.high", HIGH)
    median_correlation = _end(
        "median_correlation.value",
        "Scale (ordinal) questions: Spearman correlation of the answers with the other "
        "annotators' median on the same items",
    )
    median_correlation_low = _end("median_correlation.low", LOW)
    median_correlation_high = _end("median_correlation.high", HIGH)
    answers = serializers.IntegerField(help_text="Answers the estimates rest on")
    not_identifiable = serializers.CharField(
        help_text="Why there is no figure (then the figures are null): the answers cannot "
        "estimate it ('not identifiable: one annotator only: …') or too few answers ('too few "
        "answers: 4 on items others also answered, at least 10 are needed'); empty when there is one"
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


class ErasureIn(serializers.Serializer):
    """An erasure cannot be undone: the request says so (as the page's ticked box)."""

    confirm = serializers.BooleanField(help_text="true: erase for good (nothing can bring it back).")

    def validate_confirm(self, value: bool) -> bool:
        if value is not True:
            raise serializers.ValidationError("Send confirm: true to erase; nothing can bring it back.")
        return value


class ErasureOut(serializers.Serializer):
    """What an erasure removed (counts only: the participant is gone)."""

    studies = serializers.ListField(child=serializers.CharField(), help_text="The studies erased from.")
    answers = serializers.IntegerField()
    pages = serializers.IntegerField()
    exam_attempts = serializers.IntegerField()
    participant_removed = serializers.BooleanField(
        help_text="The participant row (with its platform id) is gone: no study holds them any more."
    )
