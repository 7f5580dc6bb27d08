"""A guest's history carried to the account they log in to.

A volunteer who played as a guest (known only by the browser session) and then logs in to
an account they already had keeps both: the guest's enrollments, rounds and pages move to
the account's participant. Where the account already has the same item, the account's
answer is kept and the guest's stays behind (counted, so the player is told). Only a true
guest is merged: never a crowd participant (a Prolific or MTurk id anyone can put in a
link, finding 22) and never a flagged or blocked guest (their answers do not launder into
a clean account).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import Count, Q, Sum

from annotation.models import Assignment, Enrollment, ExamAttempt, Participant, Response
from annotation.services.participation.assignment import next_positions, release_participant_assignments
from annotation.services.participation.participants import count_answers, is_anonymous

if TYPE_CHECKING:
    from annotation.kinds.base import TaskKind


@dataclass(frozen=True)
class GuestMerge:
    """What a login did with the browser's guest history."""

    carried: int = 0  # answers (game rounds, survey pages) that moved to the account
    kept_account: int = 0  # items both had: the account's kept, the guest's left with the guest
    refused: str = ""  # why nothing moved (empty when something could)

    def message(self) -> str:
        """What the player is told after the login ("" when there was no guest history)."""
        if self.refused:
            return f"Your guest rounds were not added to this account: {self.refused}."
        if not self.carried and not self.kept_account:
            return ""
        text = f"{self.carried} guest round{'s' if self.carried != 1 else ''} added to your account."
        if self.kept_account:
            both = self.kept_account
            text += (
                f" {both} passage{'s' if both != 1 else ''} you already had on this account "
                f"kept the account's answer{'s' if both != 1 else ''}; the guest's "
                f"{'were' if both != 1 else 'was'} not added."
            )
        return text


def merge_guest_into_account(*, guest: Participant, account: Participant) -> GuestMerge:
    """Move ``guest``'s enrollments, assignments, answers and exam attempts to ``account``
    in one transaction. A study only the guest took moves whole; in a study both took, the
    guest's answered items the account never had move (numbered after the account's
    pages, counted on its enrollment) and the guest's open pages are released. Kinds that
    keep per-player totals rebuild them (``TaskKind.after_responses_moved``)."""
    if guest.pk == account.pk or not is_anonymous(guest):
        return GuestMerge()
    with transaction.atomic():
        locked = Participant.objects.select_for_update().filter(pk__in=[guest.pk, account.pk]).order_by("pk")
        current = {p.pk: p for p in locked}
        if current[guest.pk].blocked or Enrollment.objects.filter(participant=guest, flagged=True).exists():
            return GuestMerge(refused="the guest was flagged or blocked by a study")
        carried = kept = 0
        moved_kinds: dict[str, TaskKind] = {}
        enrollments = Enrollment.objects.select_for_update(of=("self",)).select_related("study")
        for enrollment in enrollments.filter(participant=guest).order_by("pk"):
            account_enrollment = enrollments.filter(participant=account, study=enrollment.study_id).first()
            if account_enrollment is None:
                moved, both = _move_enrollment(enrollment, account), 0
            else:
                moved, both = _move_new_answers(enrollment, account_enrollment)
            carried, kept = carried + moved, kept + both
            if moved:
                moved_kinds[enrollment.study.kind] = enrollment.study.task_kind
        for kind in moved_kinds.values():
            kind.after_responses_moved((guest.pk, account.pk))
    return GuestMerge(carried=carried, kept_account=kept)


def _move_enrollment(enrollment: Enrollment, account: Participant) -> int:
    """A study only the guest took: every row of it becomes the account's."""
    study_id, guest_id = enrollment.study_id, enrollment.participant_id
    Assignment.objects.filter(participant_id=guest_id, study_id=study_id).update(participant=account)
    moved = Response.objects.filter(participant_id=guest_id, study_id=study_id).update(participant=account)
    ExamAttempt.objects.filter(participant_id=guest_id, exam__study_id=study_id).update(participant=account)
    Enrollment.objects.filter(pk=enrollment.pk).update(participant=account)
    return moved


COUNTS = [  # the totals ``count_answers`` keeps
    "answered_count",
    "points_total",
    "attention_passed",
    "attention_failed",
]


def _move_new_answers(guest_enrollment: Enrollment, account_enrollment: Enrollment) -> tuple[int, int]:
    """A study both took: (answers moved, items both had). Exam studies move nothing (an
    attempt is one sitting; the account's attempts stand)."""
    study_id, guest_id = guest_enrollment.study_id, guest_enrollment.participant_id
    account_id = account_enrollment.participant_id
    guest_answered = Assignment.objects.filter(
        participant_id=guest_id, study_id=study_id, status=Assignment.Status.ANSWERED, response__isnull=False
    )
    both = guest_answered.filter(item__assignments__participant_id=account_id).distinct()
    if hasattr(guest_enrollment.study, "exam"):
        return 0, guest_answered.count()
    release_participant_assignments(participant=guest_enrollment.participant, study=guest_enrollment.study)
    positions = next_positions(guest_enrollment.study, [account_id])[account_id]
    to_move = list(guest_answered.exclude(pk__in=both.values("pk")).order_by("position"))
    for assignment, position in zip(to_move, positions, strict=False):  # positions never end
        Assignment.objects.filter(pk=assignment.pk).update(participant_id=account_id, position=position)
    responses = Response.objects.filter(assignment__in=[a.pk for a in to_move])
    totals = responses.aggregate(
        points=Sum("points", default=0.0),
        passed=Count("id", filter=Q(is_attention_check=True, correct=True)),
        failed=Count("id", filter=Q(is_attention_check=True) & ~Q(correct=True)),
    )
    moved = responses.update(participant_id=account_id)
    counts = {
        "answers": moved,
        "points": totals["points"],
        "passed": totals["passed"],
        "failed": totals["failed"],
    }
    for enrollment, sign in ((account_enrollment, 1), (guest_enrollment, -1)):
        count_answers(
            participant_id=enrollment.participant_id,
            study_id=study_id,
            **{name: sign * value for name, value in counts.items()},
        )
        enrollment.refresh_from_db(fields=COUNTS)
    return moved, both.count()
