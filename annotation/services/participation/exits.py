"""Leaving a study: the participant's own return (``leave_study``), the platform's list of
returns (``mark_returned``), and the way back to a crowd platform: codes, return links,
MTurk's externalSubmit.

Prolific participants are sent back to Prolific's completion link with the study's
completion code (or its screen-out code). MTurk workers submit a small form to the
``turkSubmitTo`` host MTurk gave on entry, with their assignmentId: that is how the HIT
is marked done. The host is checked against ``MTURK_SUBMIT_HOSTS`` so the form can
never post to anywhere else.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.utils import timezone

from annotation.errors import InputError
from annotation.models import Assignment, Enrollment, Item, Participant, Study

from .assignment import release_participant_assignments
from .participants import session_cut_short


@dataclass(frozen=True)
class CrowdExit:
    """What the last page offers: the code, a return link, and MTurk's submit form."""

    code: str
    screened_out: bool
    cut_short: bool = False  # the items ran out before the promised pages (``session_cut_short``)
    return_url: str = ""
    mturk_submit_url: str = ""
    mturk_assignment_id: str = ""


def crowd_exit(study: Study, enrollment: Enrollment) -> CrowdExit:
    """The code and the way back; a session cut short gets no code (and no way to submit it)
    unless the study pays partial sessions."""
    screened_out = enrollment.status == Enrollment.Status.SCREENED_OUT
    cut_short = session_cut_short(enrollment, study)
    if cut_short and not study.pay_partial_sessions:
        return CrowdExit(code="", screened_out=False, cut_short=True)
    code = study.screenout_code if screened_out else study.completion_code
    source = enrollment.participant.source
    template: str | None = study.completion_url
    if not template and source == Participant.Source.PROLIFIC:
        template = settings.PROLIFIC_COMPLETION_URL
    return_url = template.replace("{code}", code) if template and code else ""
    submit_url, assignment_id = "", ""
    if source == Participant.Source.MTURK:
        submit_url, assignment_id = mturk_submission(enrollment.platform_session)
    return CrowdExit(
        code=code,
        screened_out=screened_out,
        cut_short=cut_short,
        return_url=return_url,
        mturk_submit_url=submit_url,
        mturk_assignment_id=assignment_id,
    )


def mturk_submission(session: dict) -> tuple[str, str]:
    """(externalSubmit URL, assignmentId), or empty strings when MTurk gave no usable host."""
    host_url = session.get("turkSubmitTo", "")
    assignment_id = session.get("assignmentId", "")
    parts = urlsplit(host_url)
    if parts.scheme != "https" or parts.hostname not in settings.MTURK_SUBMIT_HOSTS or not assignment_id:
        return "", ""
    return f"https://{parts.hostname}/mturk/externalSubmit", assignment_id


@dataclass(frozen=True)
class PreviewPage:
    """One page of a researcher's preview: the item as a participant gets it (an unsaved
    assignment), its number among ``total``, and what the researcher sees beside it."""

    item: Item
    assignment: Assignment
    number: int
    total: int


def preview_page(study: Study, number: int) -> PreviewPage | None:
    """Page ``number`` (1-based) of every item of the study, attention checks included, in
    the file's order; nothing is assigned or stored. None past the last page."""
    items = Item.objects.filter(study=study).order_by("id")
    total = items.count()
    if not 1 <= number <= total:
        return None
    item = items.select_related("study")[number - 1]
    state = study.task_kind.prepare_assignment(item, random.Random(item.pk))
    assignment = Assignment(study=study, item=item, position=number, state=state)
    return PreviewPage(item=item, assignment=assignment, number=number, total=total)


def preview_example(study: Study) -> tuple[Item, Assignment] | None:
    """An ordinary item and an unsaved assignment to render MTurk's read-only preview.

    Nothing is assigned or stored: the page shows what the task looks like, built by the
    kind's ``page_context`` exactly as for a participant, so it shows no answers either.
    """
    item = (
        Item.objects.filter(study=study, is_attention_check=False)
        .order_by("id")
        .select_related("study")
        .first()
    )
    if item is None:
        return None
    state = study.task_kind.prepare_assignment(item, random.Random(item.pk))
    return item, Assignment(study=study, item=item, position=1, state=state)


def mark_returned(study: Study, *, participants: list[str]) -> dict:
    """Participants who returned the task or timed out on the platform: free their pages.

    Each entry is a public id or a crowd-platform id (e.g. a PROLIFIC_PID from the
    platform's list of returned submissions). Unknown entries are an error and nothing is
    changed. Finished sessions keep their status; their unanswered pages are released.
    """
    enrollments = Enrollment.objects.filter(study=study).select_related("participant")
    by_public = {
        e.participant.public_id: e for e in enrollments.filter(participant__public_id__in=participants)
    }
    by_worker = {
        e.participant.platform_worker_id: e
        for e in enrollments.filter(participant__platform_worker_id__in=participants).exclude(
            participant__platform_worker_id=""
        )
    }
    unknown = [name for name in participants if name not in by_public and name not in by_worker]
    if unknown:
        raise InputError({"participants": [f"{name!r} is not enrolled in this study." for name in unknown]})
    released = returned = 0
    for enrollment in {e.pk: e for e in [*by_public.values(), *by_worker.values()]}.values():
        released += release_participant_assignments(participant=enrollment.participant, study=study)
        returned += Enrollment.objects.filter(
            pk=enrollment.pk, status__in=[Enrollment.Status.STARTED, Enrollment.Status.ACTIVE]
        ).update(status=Enrollment.Status.RETURNED, finished_at=timezone.now())
    return {"returned": returned, "released_assignments": released}


def leave_study(enrollment: Enrollment) -> int:
    """The participant chose to stop: release their pages and record the return."""
    released = release_participant_assignments(participant=enrollment.participant, study=enrollment.study)
    Enrollment.objects.filter(
        pk=enrollment.pk, status__in=[Enrollment.Status.STARTED, Enrollment.Status.ACTIVE]
    ).update(status=Enrollment.Status.RETURNED, finished_at=timezone.now())
    return released
