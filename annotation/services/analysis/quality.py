"""Per-participant quality figures for researchers: pace, attention, agreement, qualification.

Agreement with the majority is generic: each kind's ``agreement_values`` turns an answer
into (unit, question, value) observations; a participant's value agrees when it equals
the single most frequent value the *other* participants gave for the same unit and
question (ties and units nobody else answered are not counted). The majority is the
reports' (``stats.raters.majority_references``) over the reports' voters: the answers that
count (``populations``).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np
from django.db.models import BooleanField, ExpressionWrapper, Q

from annotation.models import Assignment, Enrollment, ExamAttempt, Item, Response, Study
from annotation.services.populations import counts_q
from annotation.services.pseudonyms import PseudonymCache
from stats.raters import majority_references


@dataclass(frozen=True)
class Qualification:
    """passed / failed / pending / none, with a short reason for the researcher."""

    outcome: str
    detail: str


@dataclass
class ParticipantQuality:
    """A participant's figures in one study. ``pseudonym`` is their id in this study's
    exports, shown on the participants page and in the API too; ``attention`` is what their
    attention checks say, ``exam`` their qualification exam's outcome (None: no exam), and
    ``qualification`` the one that decides (the exam where there is one). ``pages`` is
    filled in for one participant's detail only (``participant_pages``)."""

    enrollment: Enrollment
    seconds: list[float] = field(default_factory=list)
    agreement_compared: int = 0
    agreement_agreed: int = 0
    qualification: Qualification | None = None
    attention: Qualification | None = None
    exam: Qualification | None = None
    pseudonym: str = ""
    pages: list[dict] = field(default_factory=list)
    # Answers with authenticity signals recorded, and those with a strong sign
    # (``participation.authenticity``, docs/authenticity.md).
    signalled: int = 0
    strong_signs: int = 0

    @property
    def median_seconds_per_page(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds else None

    @property
    def agreement_rate(self) -> float | None:
        return self.agreement_agreed / self.agreement_compared if self.agreement_compared else None


def qualification_outcomes(study: Study, enrollments: list[Enrollment]) -> dict[int, Qualification]:
    """Participant id → outcome: the study's qualification exam if it has one, else its
    attention checks. One query for all the exam attempts, whatever the number of people."""
    attempts: dict[int, list[ExamAttempt]] = defaultdict(list)
    if study.qualification_id is not None:
        rows = ExamAttempt.objects.filter(
            exam_id=study.qualification_id, participant_id__in=[e.participant_id for e in enrollments]
        ).order_by("number")
        for attempt in rows:
            attempts[attempt.participant_id].append(attempt)
    return {
        e.participant_id: _exam_outcome(attempts[e.participant_id])
        if study.qualification_id is not None
        else attention_outcome(study, e)
        for e in enrollments
    }


def _exam_outcome(attempts: list[ExamAttempt]) -> Qualification:
    if not attempts:
        return Qualification("pending", "has not taken the qualification exam")
    for attempt in attempts:
        if attempt.status == ExamAttempt.Status.PASSED:
            return Qualification(
                "passed",
                f"passed the exam on attempt {attempt.number} "
                f"({attempt.correct_count} of {attempt.question_count} correct)",
            )
    failed = [a for a in attempts if a.status == ExamAttempt.Status.FAILED]
    if attempts[-1].status == ExamAttempt.Status.STARTED:
        return Qualification("pending", f"attempt {attempts[-1].number} in progress")
    best = max(a.correct_count or 0 for a in failed)
    return Qualification(
        "failed", f"failed {len(failed)} attempt(s); best {best} of {failed[-1].question_count} correct"
    )


def attention_outcome(study: Study, enrollment: Enrollment) -> Qualification:
    """What the attention checks say: failed (screened out), flagged but kept playing (more
    failures than allowed where the study lets people go on, as the game does), passed."""
    checked = enrollment.attention_passed + enrollment.attention_failed
    if enrollment.status == Enrollment.Status.SCREENED_OUT:
        return Qualification("failed", f"screened out after {enrollment.attention_failed} failed checks")
    if not checked:
        return Qualification("none", "no attention check answered yet")
    summary = f"{enrollment.attention_passed} of {checked} checks passed"
    if enrollment.attention_failed > study.max_attention_failures:
        return Qualification("flagged_kept_playing", f"{summary}; flagged, kept playing")
    if enrollment.finished:
        return Qualification("passed", summary)
    return Qualification("pending", f"{summary} so far")


def study_quality(study: Study, enrollments: list[Enrollment]) -> dict[int, ParticipantQuality]:
    """Quality of the given enrollments (participant id → figures).

    Reads only what these participants need, in a fixed number of queries: the responses
    to the items they answered (their own, for the timings, and the others', for the
    majority they are compared with) and those items once each. A page of participants
    costs the same on a study of a thousand responses or of a million.
    """
    outcomes = qualification_outcomes(study, enrollments)
    names = PseudonymCache(study.pseudonym_salt)
    found = {
        e.participant_id: ParticipantQuality(
            e,
            qualification=outcomes[e.participant_id],
            attention=attention_outcome(study, e),
            exam=outcomes[e.participant_id] if study.qualification_id is not None else None,
            pseudonym=names.get(
                e.participant_id,
                e.participant.source,
                e.participant.platform_worker_id,
                e.participant.public_id,
            ),
        )
        for e in enrollments
    }
    if not found:
        return found
    kind = study.task_kind
    theirs = Response.objects.filter(study=study, participant_id__in=list(found)).values("item_id")
    items = {item.pk: item for item in Item.objects.filter(study=study, pk__in=theirs)}
    for item in items.values():
        item.study = study
    observations = _Observations(index={participant_id: n for n, participant_id in enumerate(found)})
    # Voters: the answers that count (``populations``); a participant whose own answers do
    # not count (flagged, excluded) is still compared with them.
    responses = (
        Response.objects.filter(study=study, item_id__in=theirs)
        .filter(Q(participant_id__in=list(found)) | counts_q())
        .annotate(
            votes=ExpressionWrapper(counts_q(), output_field=BooleanField()),
            signalled=ExpressionWrapper(Q(authenticity__isnull=False), output_field=BooleanField()),
        )
        .order_by("id")
        .values_list(
            "participant_id",
            "item_id",
            "answer",
            "duration_seconds",
            "is_attention_check",
            "votes",
            "signalled",
            "strong_sign",
        )
    )
    for row in responses.iterator(chunk_size=5000):
        participant_id, item_id, answer, seconds, attention, counts, signalled, strong = row
        quality = found.get(participant_id)
        if quality is not None:
            if seconds is not None:
                quality.seconds.append(seconds)
            quality.signalled += signalled
            quality.strong_signs += strong
        if attention:
            continue
        for observation in kind.agreement_values(items[item_id], answer):
            key = (observation.unit, observation.question)
            observations.add(key, _hashable(observation.value), participant_id=participant_id, votes=counts)
    compared, agreed = observations.agreement()
    for n, quality in enumerate(found.values()):
        quality.agreement_compared, quality.agreement_agreed = int(compared[n]), int(agreed[n])
    return found


class _Observations:
    """Agreement observations as ``stats.raters`` reads them: a unit code per (unit,
    question), a value code numbered within its unit (so there are never more categories
    than one unit has different answers), whether the answer votes, and the index of the
    participant it is compared for (``index``; -1: a voter only)."""

    def __init__(self, index: dict[int, int]) -> None:
        self.index = index
        self._units: dict[tuple, int] = {}
        self._codes: dict[tuple[int, Hashable], int] = {}
        self._distinct: list[int] = []  # per unit: the values numbered so far
        self.unit: list[int] = []
        self.value: list[int] = []
        self.votes: list[bool] = []
        self.participant: list[int] = []

    def add(self, key: tuple, value: Hashable, *, participant_id: int, votes: bool) -> None:
        unit = self._units.setdefault(key, len(self._units))
        if unit == len(self._distinct):
            self._distinct.append(0)
        code = self._codes.setdefault((unit, value), self._distinct[unit])
        if code == self._distinct[unit]:
            self._distinct[unit] += 1
        self.unit.append(unit)
        self.value.append(code)
        self.votes.append(votes)
        self.participant.append(self.index.get(participant_id, -1))

    def agreement(self) -> tuple[np.ndarray, np.ndarray]:
        """Per participant index: observations with a majority to compare, and those agreeing."""
        people = len(self.index)
        if not self.unit:
            return np.zeros(people, dtype=np.int64), np.zeros(people, dtype=np.int64)
        unit, value, who = np.array(self.unit), np.array(self.value), np.array(self.participant)
        votes = np.array(self.votes, dtype=bool)
        reference = majority_references(unit, value, votes, len(self._units), max(self._distinct))
        compared = (who >= 0) & (reference >= 0)
        agreed = compared & (reference == value)
        return np.bincount(who[compared], minlength=people), np.bincount(who[agreed], minlength=people)


def participant_pages(study: Study, enrollment: Enrollment, assignments=None) -> list[dict]:
    """The pages the participant was handed, in order, with what they answered, the
    item's gold where it has some, and the answer's figures. ``assignments``: one page of
    ``participant_assignments`` (default: all of them)."""
    if assignments is None:
        assignments = participant_assignments(study, enrollment)
    pages = []
    for assignment in assignments:
        response = getattr(assignment, "response", None)
        pages.append(
            {
                "position": assignment.position,
                "item": assignment.item.external_id,
                "status": assignment.status,
                "attention_check": assignment.item.is_attention_check,
                "answer": response.answer if response else None,
                "gold": assignment.item.gold or None,
                "duration_seconds": response.duration_seconds if response else None,
                "correct": response.correct if response else None,
                "points": response.points if response else None,
                "too_fast": response.too_fast if response else False,
                "strong_sign": response.strong_sign if response else False,
                "authenticity": authenticity_summary(response.authenticity) if response else "",
                "answered_at": response.answered_at if response else None,
            }
        )
    return pages


def authenticity_summary(signals: dict | None) -> str:
    """A stored answer's authenticity signals in words, for the researcher's page: per text
    field its keystrokes, characters and pastes, then the page's hidden time and time to
    first input, and the strong signs. Empty where none were recorded."""
    if not signals:
        return ""
    if signals.get("missing"):
        return "signals missing (the page sent none)"
    parts = [
        f"{name}: {c['chars']} chars, {c['keys']} keystrokes, {c['typed']} typed, "
        f"{c['pasted']} pasted in {c['pastes']} paste(s)"
        for name, c in signals["fields"].items()
    ]
    parts.append(f"hidden {signals['hidden_ms'] / 1000:.1f} s ({signals['hidden_count']}×)")
    first = signals.get("first_input_ms")
    parts.append("no input" if first is None else f"first input after {first / 1000:.1f} s")
    signs = signals.get("signs") or []
    parts.append(f"strong signs: {', '.join(signs)}" if signs else "no strong sign")
    return "; ".join(parts)


def participant_assignments(study: Study, enrollment: Enrollment):
    """The participant's assignments in the study with their items and responses (one query)."""
    return (
        Assignment.objects.filter(study=study, participant_id=enrollment.participant_id)
        .select_related("item", "response")
        .order_by("position", "id")
    )


def _hashable(value):
    return tuple(value) if isinstance(value, list) else value
