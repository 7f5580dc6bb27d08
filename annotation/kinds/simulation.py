"""Counterfactual simulatability: from a model's answer and explanation on a starter
example, the participant guesses what the model does on a follow-up (a counterfactual).

Two variants share the page and the scoring. ``yes_no``: a yes/no starter question, and
the guess is not helpful / yes / no. ``pairwise``: a context with two responses and the
model's preferred one, and the guess is response 1 / response 2 / either. The model's
real answer on the follow-up (``model_followup_answer``) is what simulation precision is
measured against; it stays on the server and never reaches the page.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.http import QueryDict
from django.utils.translation import gettext, gettext_noop
from rest_framework import serializers

from .base import ModelOption, ModelQuestion, ModelTask, Observation, Score, StrictSerializer, TaskKind

# Texts marked for translation: the page shows them in its language (the template translates).
YES_NO_OPTIONS = [
    (
        "not_helpful",
        gettext_noop("Not helpful: the answer and explanation do not tell me what the AI would say"),
    ),
    ("yes", gettext_noop("Helpful: the AI would answer yes")),
    ("no", gettext_noop("Helpful: the AI would answer no")),
]
PAIRWISE_OPTIONS = [
    ("response_1", gettext_noop("The AI would choose response 1")),
    ("response_2", gettext_noop("The AI would choose response 2")),
    ("either", gettext_noop("Either: its explanation gives no reason to prefer one of them")),
]
NOT_SIMULATABLE = {"not_helpful", "either"}
CHOICE_NAMES = {
    "yes": gettext_noop("Yes"),
    "no": gettext_noop("No"),
    "response_1": gettext_noop("Response 1"),
    "response_2": gettext_noop("Response 2"),
}
TEXT = 5000
# What a model says for each option: short and distinct, so their probabilities compare.
MODEL_TEXTS = {
    "not_helpful": "not helpful",
    "yes": "yes",
    "no": "no",
    "response_1": "response 1",
    "response_2": "response 2",
    "either": "either",
}


class YesNoPayload(StrictSerializer):
    variant = serializers.ChoiceField(choices=["yes_no"])
    starter_question = serializers.CharField(max_length=TEXT)
    model_answer = serializers.ChoiceField(choices=["yes", "no"])
    model_explanation = serializers.CharField(max_length=TEXT)
    followup_question = serializers.CharField(max_length=TEXT)
    model_followup_answer = serializers.ChoiceField(choices=["yes", "no"])
    explanation_id = serializers.CharField(max_length=200)


class PairwisePayload(StrictSerializer):
    variant = serializers.ChoiceField(choices=["pairwise"])
    starter_context = serializers.CharField(max_length=TEXT)
    starter_responses = serializers.ListField(
        child=serializers.CharField(max_length=TEXT), min_length=2, max_length=2
    )
    model_choice = serializers.ChoiceField(choices=["response_1", "response_2"])
    model_explanation = serializers.CharField(max_length=TEXT)
    followup_context = serializers.CharField(max_length=TEXT)
    followup_responses = serializers.ListField(
        child=serializers.CharField(max_length=TEXT), min_length=2, max_length=2
    )
    model_followup_answer = serializers.ChoiceField(choices=["response_1", "response_2"])
    explanation_id = serializers.CharField(max_length=200)


VARIANTS = {"yes_no": (YesNoPayload, YES_NO_OPTIONS), "pairwise": (PairwisePayload, PAIRWISE_OPTIONS)}


class SimulationPayload(serializers.Serializer):
    """Dispatches on ``variant`` to the variant's own strict shape."""

    def to_internal_value(self, data):
        variant = data.get("variant") if isinstance(data, dict) else None
        if variant not in VARIANTS:
            raise serializers.ValidationError({"variant": [f"Choose one of: {', '.join(VARIANTS)}."]})
        shape = VARIANTS[variant][0](data=data)
        shape.is_valid(raise_exception=True)
        return dict(shape.validated_data)


class SimulationAnswer(StrictSerializer):
    choice = serializers.CharField(allow_blank=True)

    def validate(self, data: dict) -> dict:
        options = [value for value, _ in options_for(self.context["item"].payload)]
        if data["choice"] not in options:
            raise serializers.ValidationError(
                {"choice": [gettext("Choose one answer: %(options)s.") % {"options": ", ".join(options)}]}
            )
        return data


def options_for(payload: dict) -> list[tuple[str, str]]:
    return VARIANTS[payload["variant"]][1]


class Simulation(TaskKind):
    name = "simulation"
    # What a datasheet (HEDS) says of the kind's evaluations (``TaskKind.evaluation``).
    evaluation: ClassVar[dict[str, Any]] = {
        "input": "text: multiple sentences (a question and a model's explanation)",
        "output": "text: sentence (the model's answer to a follow-up question)",
        "task": "question answering (explained, then simulated by people)",
        "relative": False,
        "extrinsic": True,
        "objective": True,
        "elicitation": (
            "task performance measurements (how often people predict the model's follow-up answer)"
        ),
        "criterion": {
            "id": "simulatability",
            "text": "What will the model answer to this follow-up question?",
            "values": None,
        },
        "quality_type": "correctness",
        "aspect": "content of output",
        "frame": (
            "quality of output relative to a system-external frame of reference (the model's actual answers)"
        ),
    }
    agreement_per_answer = True  # agreement_values below
    report = "scoring.reports.simulation.SimulationReport"
    label = gettext_noop("Counterfactual simulation (guess the model's follow-up answer)")
    template = "annotation/kinds/simulation.html"
    Payload = SimulationPayload
    Answer = SimulationAnswer

    def page_context(self, item, assignment) -> dict:
        """The starter example with the model's output and explanation, and the follow-up;
        never the model's follow-up answer."""
        payload = item.payload
        context = {
            "variant": payload["variant"],
            "model_explanation": payload["model_explanation"],
            "options": [{"value": value, "text": text} for value, text in options_for(payload)],
            "choice": {"field": "choice", "selected": ""},
        }
        if payload["variant"] == "yes_no":
            return {
                **context,
                "starter_question": payload["starter_question"],
                "model_answer": CHOICE_NAMES[payload["model_answer"]],
                "followup_question": payload["followup_question"],
            }
        return {
            **context,
            "starter_context": payload["starter_context"],
            "starter_responses": payload["starter_responses"],
            "model_choice": CHOICE_NAMES[payload["model_choice"]],
            "followup_context": payload["followup_context"],
            "followup_responses": payload["followup_responses"],
        }

    def answer_from_form(self, data: QueryDict, item, assignment) -> dict:
        return {"choice": data.get("choice", "")}

    def review_context(self, item, answer: dict) -> dict:
        context = self.page_context(item, None)
        context["choice"]["selected"] = answer.get("choice", "")
        return {**context, "answer": answer, "readonly": True}

    answerable_by_model = True
    model_rater = "simulator"

    def model_task(self, item, state: dict) -> ModelTask:
        """The starter example with the model's output and explanation, and the follow-up,
        from the page's context: the model's follow-up answer is not there to be read."""
        page = self.model_page(item, state)
        if page["variant"] == "yes_no":
            lines = [
                f"Starter question: {page['starter_question']}",
                f"The AI answered: {page['model_answer']}",
                f"The AI's explanation: {page['model_explanation']}",
                "",
                f"Follow-up question: {page['followup_question']}",
            ]
            question = "From its explanation alone, what would the AI answer to the follow-up question?"
        else:
            lines = [
                f"Starter context: {page['starter_context']}",
                *(f"Response {n}: {text}" for n, text in enumerate(page["starter_responses"], start=1)),
                f"The AI chose: {page['model_choice']}",
                f"The AI's explanation: {page['model_explanation']}",
                "",
                f"Follow-up context: {page['followup_context']}",
                *(f"Response {n}: {text}" for n, text in enumerate(page["followup_responses"], start=1)),
            ]
            question = "From its explanation alone, which response would the AI choose in the follow-up?"
        options = tuple(ModelOption(o["value"], MODEL_TEXTS[o["value"]], o["text"]) for o in page["options"])
        return ModelTask("\n".join(lines), (ModelQuestion("choice", "choice", question, options),))

    def answer_from_model(self, item, state: dict, chosen, scores=None) -> dict:
        return {"choice": chosen.get("choice", "")}

    def model_choices(self, item, state: dict, answer: dict) -> dict:
        return {"choice": answer["choice"]}

    def score(self, item, answer: dict) -> Score:
        """``correct`` against gold (qualification items); the details say whether the guess
        was a guess at all (simulatable) and whether it matched the model's real answer."""
        choice = answer["choice"]
        simulatable = choice not in NOT_SIMULATABLE
        details = {
            "simulatable": simulatable,
            "matches_model": (choice == item.payload["model_followup_answer"]) if simulatable else None,
        }
        correct = (choice == item.gold["choice"]) if item.gold else None
        return Score(correct=correct, details=details)

    def agreement_values(self, item, answer: dict) -> list[Observation]:
        unit = item.external_id
        return [
            Observation(unit, "choice", answer["choice"], "nominal"),
            Observation(unit, "simulatable", int(answer["choice"] not in NOT_SIMULATABLE), "nominal"),
        ]
