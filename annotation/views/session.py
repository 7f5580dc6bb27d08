"""Which participant this browser is: kept in the session, one per browser."""

from __future__ import annotations

from annotation.models import Participant

PARTICIPANT_KEY = "participant_id"  # every reader and writer of the session uses this name


def session_participant(request) -> Participant | None:
    """The participant remembered for this browser (or the logged-in user's)."""
    participant_id = request.session.get(PARTICIPANT_KEY)
    if participant_id:
        participant = Participant.objects.filter(pk=participant_id).first()
        if participant is not None:
            return participant
    if request.user.is_authenticated:
        return Participant.objects.filter(user=request.user).first()
    return None


def remember_participant(request, participant: Participant) -> None:
    if request.session.get(PARTICIPANT_KEY) != participant.pk:
        request.session.cycle_key()
        request.session[PARTICIPANT_KEY] = participant.pk
