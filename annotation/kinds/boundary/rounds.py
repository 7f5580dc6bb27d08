"""The steps of a boundary round before its answer: reveal the next sentence, make the guess.

Each step locks the assignment row, checks the round is still open and the step fits the
round's state, and records it with a server timestamp. A repeated step (a double click,
a retried request) changes nothing. The answer itself (the reason) is stored by
``annotation.services.participation.submission.submit_response`` like any other answer.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.functional import Promise as StrPromise
from django.utils.translation import gettext, gettext_lazy

from annotation.models import Assignment
from annotation.services.participation.assignment import assignment_is_open, open_q

RAN_OUT = gettext_lazy("This round ran out of time; go on with the next passage.")


class RoundError(Exception):
    """A step that does not fit the round; ``field`` names the input at fault."""

    status = 400

    def __init__(self, message: str | StrPromise, field: str = "round"):
        self.message, self.field = message, field
        super().__init__(message)

    @property
    def errors(self) -> dict[str, list[str | StrPromise]]:
        return {self.field: [self.message]}


class RoundClosed(RoundError):
    """The round is over (answered) or ran out of time: nothing more can happen in it."""

    status = 409


def reveal_next_sentence(*, assignment: Assignment, seen: int, now: datetime | None = None) -> int:
    """Reveal the sentence after the ``seen`` ones shown; return its index.

    ``seen`` is how many sentences the page shows. Asking again for a sentence already
    revealed (the page showed ``seen`` before the last reveal) returns it unchanged.
    """
    now = now or timezone.now()
    if _reveal_in_one_update(assignment, seen, now):
        return seen
    with transaction.atomic():
        locked, state, count = _open_round(assignment, now)
        revealed = state["revealed"]
        if state.get("guess") is not None:
            raise RoundClosed(gettext("You already made your guess in this round."), "guess")
        if seen == revealed - 1 and seen >= 1:
            return seen
        if seen != revealed:
            raise RoundError(
                gettext("The page is out of step with the round (%(shown)d sentences shown); reload it.")
                % {"shown": revealed},
                "seen",
            )
        if revealed >= count:
            raise RoundError(
                gettext("That was the last sentence: mark it or say the passage is all human."), "seen"
            )
        state["reveals"] = [*_started(state, locked, now), now.isoformat()]
        state["revealed"] = revealed + 1
        _save_state(assignment, state)
        return revealed


def _reveal_in_one_update(assignment: Assignment, seen: int, now: datetime) -> bool:
    """The common reveal as one conditional ``UPDATE``: it applies only while the round is
    open and its state is still the one the caller read (unguessed, showing exactly ``seen``
    sentences), and writes the next state, locking the row while it does. False: the round
    is in any other state, or changed since, and the locked path decides (a repeat, an
    error, a closed round)."""
    state = assignment.state
    count = len(assignment.item.payload["sentences"])
    if state.get("guess") is not None or state.get("revealed") != seen or not 1 <= seen < count:
        return False
    started = (assignment.shown_at or now).isoformat()
    reveals = [*state["reveals"], now.isoformat()] if state.get("reveals") else [started, now.isoformat()]
    revealed = {**state, "revealed": seen + 1, "reveals": reveals}
    if not Assignment.objects.filter(open_q(now), pk=assignment.pk, state=state).update(state=revealed):
        return False
    assignment.state = revealed
    return True


def record_guess(*, assignment: Assignment, guess: int, now: datetime | None = None) -> int:
    """Record the guess: the newest sentence is machine-written, or (after the last
    sentence) the passage is all human (``guess`` = the number of sentences)."""
    now = now or timezone.now()
    with transaction.atomic():
        locked, state, count = _open_round(assignment, now)
        revealed = state["revealed"]
        if state.get("guess") is not None:
            if state["guess"] == guess:
                return guess
            raise RoundClosed(gettext("You already made your guess in this round."), "guess")
        if not 1 <= guess <= count:
            raise RoundError(
                gettext("Must be between 1 and %(count)d (%(count)d means all human).") % {"count": count},
                "guess",
            )
        newest, all_human = guess == revealed - 1, guess == count and revealed == count
        if not (newest or all_human):
            raise RoundError(
                gettext(
                    "Mark the newest sentence on the page, "
                    "or after the last one say the passage is all human."
                ),
                "guess",
            )
        state["reveals"] = _started(state, locked, now)
        state["guess"], state["guessed_at"] = guess, now.isoformat()
        _save_state(assignment, state)
        return guess


def _open_round(assignment: Assignment, now: datetime) -> tuple[Assignment, dict, int]:
    """The round's row, locked, with a copy of its state and its number of sentences (from
    the item the caller's assignment carries: a passage does not change during a round)."""
    locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if locked.status == Assignment.Status.ANSWERED:
        raise RoundClosed(gettext("This round is over and its answer is stored; it earns nothing more."))
    if not assignment_is_open(locked, now):
        raise RoundClosed(RAN_OUT)
    return locked, dict(locked.state), len(assignment.item.payload["sentences"])


def _started(state: dict, assignment: Assignment, now: datetime) -> list[str]:
    """The reveal log; its first entry is when the first sentence was shown."""
    if state.get("reveals"):
        return list(state["reveals"])
    return [(assignment.shown_at or now).isoformat()]


def _save_state(assignment: Assignment, state: dict) -> None:
    """Store the new state; the caller's copy of the assignment sees it too."""
    assignment.state = state
    Assignment.objects.filter(pk=assignment.pk).update(state=state)
