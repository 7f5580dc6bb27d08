"""The RoFT boundary game: a passage revealed one sentence at a time, human-written at
first, perhaps continued by a machine; the player marks where the machine took over.

The round has steps (reveal, guess, reason), each a server call under ``urls``; the round's
state lives on the assignment: ``{"revealed": n, "reveals": [ISO time per revealed
sentence], "guess": g | None, "guessed_at": ISO | None}``. Before the answer is stored,
nothing derived from the boundary or the unrevealed sentences reaches the browser.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from django.http import QueryDict
from django.urls import reverse
from django.utils.translation import gettext, gettext_lazy, gettext_noop, ngettext
from rest_framework import serializers

from stats.boundary import boundary_points

from ..base import AgreementField, PublicEntry, Score, StrictSerializer, TaskKind
from . import game
from .controls import REASON_CATEGORIES, round_controls
from .urls import round_steps, site_pages

MIN_SENTENCES, MAX_SENTENCES = 2, 20
MAX_REASON_CHARS = 2000
REASON_CATEGORY_VALUES = [value for value, _ in REASON_CATEGORIES]
VOLUNTEER_POLICIES = [
    ("keep_playing", "Flag them and their answers in this study; they keep playing, off the leaderboards"),
    ("screen_out", "End their session with the screen-out code, as for paid participants"),
]
GUESS_FIRST = gettext_lazy(
    "Mark the sentence where the machine took over (or say the passage is all human) first."
)


class BoundaryConfig(StrictSerializer):
    volunteer_attention_policy = serializers.ChoiceField(
        choices=[value for value, _ in VOLUNTEER_POLICIES], default="keep_playing"
    )


class BoundaryPayload(StrictSerializer):
    sentences = serializers.ListField(
        child=serializers.CharField(allow_blank=False, max_length=2000),
        min_length=MIN_SENTENCES,
        max_length=MAX_SENTENCES,
    )
    boundary = serializers.IntegerField(min_value=1)
    category = serializers.RegexField(
        r"^[a-z0-9][a-z0-9_-]*$",
        max_length=40,
        error_messages={
            "invalid": "Use lowercase letters, digits, '-' and '_' (it is part of page addresses)."
        },
    )
    model = serializers.CharField(max_length=200, required=False)
    p = serializers.FloatField(min_value=0.0, max_value=1.0, required=False)
    decoding = serializers.DictField(required=False)
    seed = serializers.IntegerField(required=False, allow_null=True)

    def validate(self, data: dict) -> dict:
        count = len(data["sentences"])
        if data["boundary"] > count:
            raise serializers.ValidationError(
                {
                    "boundary": [
                        f"Must be between 1 and {count} (the number of sentences; {count} = all human)."
                    ]
                }
            )
        if data["boundary"] < count:
            missing = [name for name in ("model", "p") if name not in data]
            if missing:
                raise serializers.ValidationError(
                    {name: ["Required when part of the passage is machine-written."] for name in missing}
                )
        return data


class BoundaryAnswer(StrictSerializer):
    guess = serializers.IntegerField(
        min_value=1, error_messages={"required": GUESS_FIRST, "null": GUESS_FIRST}
    )
    reason = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=MAX_REASON_CHARS, trim_whitespace=True
    )
    reason_categories = serializers.ListField(
        child=serializers.ChoiceField(choices=REASON_CATEGORY_VALUES), required=False, default=list
    )

    def validate(self, data: dict) -> dict:
        count = len(self.context["item"].payload["sentences"])
        guess = data["guess"]
        if guess > count:
            raise serializers.ValidationError(
                {
                    "guess": [
                        gettext(
                            "Must be between 1 and %(count)d (%(count)d means the whole passage is human)."
                        )
                        % {"count": count}
                    ]
                }
            )
        self._check_round_state(guess)
        if guess < count and not data["reason"] and not self.context.get("gold"):
            raise serializers.ValidationError({"reason": [gettext("Say what gave the machine away.")]})
        categories = data["reason_categories"]
        if len(set(categories)) != len(categories):
            raise serializers.ValidationError({"reason_categories": [gettext("A category is listed twice.")]})
        data["reason_categories"] = [value for value in REASON_CATEGORY_VALUES if value in categories]
        return data

    def _check_round_state(self, guess: int) -> None:
        """On the site the guess is the one the round recorded; imports have no state."""
        state = self.context.get("state") or {}
        if "revealed" not in state:
            return
        pending = state.get("guess")
        if pending is None:
            raise serializers.ValidationError({"guess": [GUESS_FIRST]})
        if guess != pending:
            raise serializers.ValidationError(
                {"guess": [gettext("The answer must keep the guess made in this round.")]}
            )


class BoundaryGold(StrictSerializer):
    """Gold for a boundary item is its boundary (an attention check: the passage length)."""

    guess = serializers.IntegerField(min_value=1)

    def validate(self, data: dict) -> dict:
        boundary = self.context["item"].payload["boundary"]
        if data["guess"] != boundary:
            raise serializers.ValidationError({"guess": [f"Must equal the payload's boundary ({boundary})."]})
        return data


class Boundary(TaskKind):
    name = "boundary"
    # What a datasheet (HEDS) says of the kind's evaluations (``TaskKind.evaluation``).
    evaluation: ClassVar[dict[str, Any]] = {
        "input": "text: multiple sentences (the human-written opening of a passage)",
        "output": "text: multiple sentences (the machine's continuation)",
        "task": "end-to-end text generation (continuing a passage)",
        "relative": False,
        "extrinsic": False,
        "objective": True,
        "elicitation": (
            "task performance measurements (guessing where the machine took over; points by distance)"
        ),
        "task_text": (
            "Evaluators read a passage sentence by sentence and mark the first sentence they "
            "think a machine wrote; the guess and its distance from the true boundary are "
            "recorded."
        ),
        "frame": "quality of output in its own right (is it told apart from human text)",
    }
    label = gettext_noop("Real or fake: where did the machine take over?")
    template = "annotation/kinds/boundary.html"
    page_template = "annotation/kinds/boundary.html"
    Config = BoundaryConfig
    Payload = BoundaryPayload
    Answer = BoundaryAnswer
    Gold = BoundaryGold
    agreement_fields = (AgreementField("guess", "guess", "interval"),)
    urls = round_steps
    site_urls = site_pages
    home_notice_template = "annotation/kinds/boundary_home.html"
    public_action = gettext_noop("Play")
    report = "scoring.reports.boundary.BoundaryReport"

    def ready(self) -> None:
        from . import signals  # noqa: F401 - connects the game's receivers

    def session_length(self, pages: int) -> str:
        return ngettext("%(count)d passage", "%(count)d passages", pages) % {"count": pages}

    def public_entry(self, study) -> PublicEntry:
        """Every public game study is played from the game's landing page."""
        return PublicEntry(reverse("game-landing"), self.public_action)

    def prepare_assignment(self, item, rng: random.Random) -> dict:
        return {"revealed": 1, "reveals": [], "guess": None, "guessed_at": None}

    def page_context(self, item, assignment) -> dict:
        """The revealed sentences and what the player may do next; nothing else."""
        context = round_controls(item, assignment.state if assignment is not None else {})
        if assignment is not None:
            totals = game.player_totals(assignment.participant_id)
            context.update(round_number=totals.played + 1, player_points=totals.points_total)
        return context

    def answer_from_form(self, data: QueryDict, item, assignment) -> dict:
        """The guess comes from the round's state, never from the form."""
        answer = {"reason": data.get("reason", ""), "reason_categories": data.getlist("reason_categories")}
        guess = (assignment.state or {}).get("guess") if assignment is not None else None
        if guess is not None:
            answer["guess"] = guess
        return answer

    def asks_free_text(self, config: dict) -> bool:
        """Every round ends with the player's reason, in their own words."""
        return True

    def review_context(self, item, answer: dict) -> dict:
        return {**game.round_truth(item, answer), "answer": answer}

    def score(self, item, answer: dict) -> Score:
        """Points by the RoFT rule; an attention check is passed or failed, for no points."""
        guess, boundary = answer["guess"], item.payload["boundary"]
        details = {"distance": guess - boundary}
        if item.is_attention_check:
            expected = (item.gold or {}).get("guess", len(item.payload["sentences"]))
            return Score(points=None, correct=guess == expected, details=details)
        return Score(points=boundary_points(guess, boundary), correct=guess == boundary, details=details)

    def after_response(self, response) -> None:
        game.record_round(response)

    def after_responses_moved(self, participant_ids) -> None:
        for participant_id in sorted(participant_ids):
            game.rebuild_player_stats(participant_id)

    def finished_page(self, study, enrollment) -> str | None:
        """A volunteer who played every passage of a public category ends on the game's
        page for it (score, rank, other categories); paid players get their code."""
        if study.public and enrollment.participant.source == enrollment.participant.Source.ORGANIC:
            return reverse("game-finished", kwargs={"slug": study.slug})
        return None

    def ends_session_on_attention_failure(self, study, participant) -> bool:
        if participant.source != participant.Source.ORGANIC:
            return True
        return study.config.get("volunteer_attention_policy", "keep_playing") == "screen_out"
