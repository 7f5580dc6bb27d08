"""Plausibility of explanations: a question, its correct answer and several explanations,
each rated yes / moderate / no for how well it justifies that answer.

Explanations usually come from different systems and their ids may say which, so the page
numbers them 1, 2, 3… in an order drawn per assignment (recorded in its state) and never
shows an id; the numbers posted back are turned into ids here.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from django.http import QueryDict
from django.utils.translation import gettext, gettext_noop
from rest_framework import serializers

from .base import ModelOption, ModelQuestion, ModelTask, Observation, Score, StrictSerializer, TaskKind
from .checks import check_ratings, check_unique, one_of, score_ratings

# Names and texts marked for translation: the page shows them in its language.
RATINGS = [
    ("yes", gettext_noop("Yes"), gettext_noop("correct, and justifies the answer well")),
    ("moderate", gettext_noop("Moderate"), gettext_noop("partly useful, but has an error or a gap")),
    ("no", gettext_noop("No"), gettext_noop("does not justify the answer, or is wrong")),
]
RATING_VALUES = [value for value, _, _ in RATINGS]
ORDINAL = {"no": 0, "moderate": 1, "yes": 2}
ID_PATTERN = r"^[A-Za-z0-9_./:-]+$"


class Explanation(StrictSerializer):
    id = serializers.RegexField(ID_PATTERN, max_length=100)
    text = serializers.CharField(max_length=5000)


class PlausibilityPayload(StrictSerializer):
    question = serializers.CharField(max_length=2000)
    answer = serializers.CharField(max_length=500)
    explanations = serializers.ListField(child=Explanation(), min_length=1, max_length=12)

    def validate(self, data: dict) -> dict:
        message = "Each explanation needs a different id ({!r} is used twice)."
        data["explanations"] = check_unique(data["explanations"], "id", "explanations", message)
        return data


class PlausibilityAnswer(StrictSerializer):
    """``{"ratings": {explanation_id: yes|moderate|no}}``; every explanation (gold: some)."""

    ratings = serializers.JSONField()

    def validate(self, data: dict) -> dict:
        order = explanation_order(self.context["item"], self.context.get("state"))
        wanted = {
            key: gettext("explanation %(number)d") % {"number": number}
            for number, key in enumerate(order, start=1)
        }
        partial = bool(self.context.get("gold"))
        return {"ratings": check_ratings(data["ratings"], wanted, one_of(RATING_VALUES), partial=partial)}


def explanation_order(item, state: dict | None) -> list[str]:
    """The recorded display order of explanation ids; the file's order without one."""
    ids = [e["id"] for e in item.payload["explanations"]]
    order = (state or {}).get("order")
    return list(order) if order and sorted(order) == sorted(ids) else ids


class Plausibility(TaskKind):
    name = "plausibility"
    # What a datasheet (HEDS) says of the kind's evaluations (``TaskKind.evaluation``).
    evaluation: ClassVar[dict[str, Any]] = {
        "input": "text: multiple sentences",
        "output": "text: multiple sentences (an explanation)",
        "task": "other: explaining a model's answer",
        "relative": False,
        "extrinsic": False,
        "objective": False,
        "elicitation": "direct quality estimation",
        "criterion": {
            "id": "plausibility",
            "text": "Is the explanation plausible?",
            "values": ["yes", "moderate", "no"],
        },
        "aspect": "content of output",
        "frame": "quality of output relative to the input (the question and the answer explained)",
    }
    agreement_per_answer = True  # agreement_values below
    report = "scoring.reports.plausibility.PlausibilityReport"
    label = gettext_noop("Plausibility of explanations (yes / moderate / no)")
    template = "annotation/kinds/plausibility.html"
    Payload = PlausibilityPayload
    Answer = PlausibilityAnswer

    def prepare_assignment(self, item, rng: random.Random) -> dict:
        ids = [e["id"] for e in item.payload["explanations"]]
        return {"order": rng.sample(ids, len(ids))}

    def page_context(self, item, assignment) -> dict:
        return self._context(item, explanation_order(item, assignment.state if assignment else None), {})

    def _context(self, item, order: list[str], ratings: dict) -> dict:
        texts = {e["id"]: e["text"] for e in item.payload["explanations"]}
        explanations = [
            {
                "number": number,
                "text": texts[key],
                "field": f"rating-{number}",
                "selected": ratings.get(key, ""),
            }
            for number, key in enumerate(order, start=1)
        ]
        return {
            "question": item.payload["question"],
            "correct_answer": item.payload["answer"],
            "explanations": explanations,
            "options": [{"value": v, "name": name, "text": text} for v, name, text in RATINGS],
        }

    def answer_from_form(self, data: QueryDict, item, assignment) -> dict:
        order = explanation_order(item, assignment.state)
        fields = {key: data.get(f"rating-{number}") for number, key in enumerate(order, start=1)}
        return {"ratings": {key: value for key, value in fields.items() if value not in (None, "")}}

    def review_context(self, item, answer: dict) -> dict:
        order = explanation_order(item, None)
        return {**self._context(item, order, answer.get("ratings", {})), "answer": answer, "readonly": True}

    answerable_by_model = True

    def model_task(self, item, state: dict) -> ModelTask:
        """The question, its correct answer and the numbered explanations in the order of
        ``state``; per explanation yes / moderate / no."""
        page = self.model_page(item, state)
        lines = [f"Question: {page['question']}", f"Correct answer: {page['correct_answer']}"]
        lines += [f"Explanation {e['number']}: {e['text']}" for e in page["explanations"]]
        options = tuple(ModelOption(o["value"], o["value"], o["text"]) for o in page["options"])
        questions = tuple(
            ModelQuestion(
                f"rating.{e['number']}",
                "rating",
                f"Does explanation {e['number']} justify the correct answer?",
                options,
            )
            for e in page["explanations"]
        )
        return ModelTask("\n".join(lines), questions)

    def answer_from_model(self, item, state: dict, chosen, scores=None) -> dict:
        order = explanation_order(item, state)
        return {
            "ratings": {
                key: chosen[f"rating.{number}"]
                for number, key in enumerate(order, start=1)
                if f"rating.{number}" in chosen
            }
        }

    def model_choices(self, item, state: dict, answer: dict) -> dict:
        ratings = answer.get("ratings", {})
        order = explanation_order(item, state)
        return {
            f"rating.{number}": ratings[key] for number, key in enumerate(order, start=1) if key in ratings
        }

    def score(self, item, answer: dict) -> Score | None:
        return score_ratings(item, answer)

    def agreement_values(self, item, answer: dict) -> list[Observation]:
        """Per explanation (unit ``<item>#<explanation id>``): no 0, moderate 1, yes 2 (ordinal)."""
        return [
            Observation(f"{item.external_id}#{key}", "plausibility", ORDINAL[value], "ordinal")
            for key, value in answer["ratings"].items()
        ]
