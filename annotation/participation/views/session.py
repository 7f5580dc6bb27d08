"""Which participant this browser is: kept in the session, one per browser."""

from __future__ import annotations

from annotation.models import Participant
from annotation.services.participation.participants import browser_participant

PARTICIPANT_KEY = "participant_id"  # every reader and writer of the session uses this name


def session_participant(request) -> Participant | None:
    """The participant remembered for this browser, else the logged-in user's
    (``participants.browser_participant``)."""
    return browser_participant(session_id=request.session.get(PARTICIPANT_KEY), user=request.user)


def remember_participant(request, participant: Participant) -> None:
    if request.session.get(PARTICIPANT_KEY) != participant.pk:
        request.session.cycle_key()
        request.session[PARTICIPANT_KEY] = participant.pk
