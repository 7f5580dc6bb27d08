"""Premise-claim labelling: does the passage support, contradict or not bear on a claim,
and which of its sentences are the evidence.
"""

from __future__ import annotations

from django.http import QueryDict
from rest_framework import serializers

from annotation.text import split_sentences
from scoring.overlap import set_f1

from .base import Observation, Score, StrictSerializer, TaskKind

LABELS = [
    ("supports", "The passage supports the claim"),
    ("contradicts", "The passage contradicts the claim"),
    ("neutral", "Neither: the passage does not settle it"),
]
LABEL_VALUES = [value for value, _ in LABELS]
MAX_SENTENCES = 200


class ClaimPayload(StrictSerializer):
    """Either ``sentences`` (already split) or ``passage`` (split here), plus the claim."""

    sentences = serializers.ListField(
        child=serializers.CharField(trim_whitespace=True, allow_blank=False),
        min_length=1,
        max_length=MAX_SENTENCES,
        required=False,
    )
    passage = serializers.CharField(required=False, allow_blank=False)
    claim = serializers.CharField(allow_blank=False)
    claim_type = serializers.CharField(required=False, allow_blank=False, max_length=200)
    title = serializers.CharField(required=False, allow_blank=False, max_length=500)

    def validate(self, data: dict) -> dict:
        has_sentences, has_passage = "sentences" in data, "passage" in data
        if has_sentences == has_passage:
            raise serializers.ValidationError(
                {"sentences": ["Give either 'sentences' (a list) or 'passage' (a text), not both."]}
            )
        if has_passage:
            sentences = split_sentences(data.pop("passage"))
            if not 1 <= len(sentences) <= MAX_SENTENCES:
                raise serializers.ValidationError({"passage": ["The passage must hold 1 to 200 sentences."]})
            data["sentences"] = sentences
        return data


class ClaimAnswer(StrictSerializer):
    # DRF's metaclass moves declared fields off the class, so this does not shadow Field.label.
    label = serializers.ChoiceField(choices=LABEL_VALUES)  # type: ignore[assignment]
    evidence = serializers.ListField(
        child=serializers.IntegerField(min_value=0), required=False, default=list
    )

    def validate(self, data: dict) -> dict:
        evidence = data.get("evidence", [])
        count = len(self.context["item"].payload["sentences"])
        out_of_range = [i for i in evidence if i >= count]
        if out_of_range:
            raise serializers.ValidationError(
                {"evidence": [f"Sentence index {out_of_range[0]} is out of range (0 to {count - 1})."]}
            )
        if len(set(evidence)) != len(evidence):
            raise serializers.ValidationError({"evidence": ["A sentence is listed twice."]})
        if data["label"] == "neutral" and evidence:
            raise serializers.ValidationError({"evidence": ["A neutral label takes no evidence sentences."]})
        if data["label"] != "neutral" and not evidence and not self.context.get("gold"):
            raise serializers.ValidationError(
                {"evidence": ["Select the sentence or sentences that support or contradict the claim."]}
            )
        data["evidence"] = sorted(evidence)
        return data


class Claim(TaskKind):
    name = "claim"
    label = "Premise and claim"
    template = "annotation/kinds/claim.html"
    Payload = ClaimPayload
    Answer = ClaimAnswer

    def page_context(self, item, assignment) -> dict:
        return {
            "claim": item.payload["claim"],
            "title": item.payload.get("title", ""),
            "sentences": list(enumerate(item.payload["sentences"])),
            "labels": LABELS,
        }

    def answer_from_form(self, data: QueryDict, item, assignment) -> dict:
        return {"label": data.get("label", ""), "evidence": data.getlist("evidence")}

    def review_context(self, item, answer: dict) -> dict:
        context = self.page_context(item, None)
        context["answer"] = answer
        context["evidence"] = set(answer.get("evidence", []))
        return context

    def score(self, item, answer: dict) -> Score | None:
        gold = item.gold
        if not gold:
            return None
        details = {}
        if gold.get("evidence") and gold["label"] != "neutral":
            details["evidence_f1"] = set_f1(answer["evidence"], gold["evidence"])
        return Score(correct=answer["label"] == gold["label"], details=details)

    def agreement_values(self, item, answer: dict) -> list[Observation]:
        unit = item.external_id
        values = [Observation(unit, "label", answer["label"], "nominal")]
        if evidence_missing(answer):
            return values  # an incomplete import: its evidence is unknown, not "none"
        chosen = set(answer["evidence"])
        for index in range(len(item.payload["sentences"])):
            values.append(Observation(f"{unit}#{index}", "evidence", int(index in chosen), "nominal"))
        return values


def evidence_missing(answer: dict) -> bool:
    """A label that needs evidence sentences and has none: only an answer imported as
    incomplete (``importresponses --allow-incomplete``) can be like this."""
    return answer.get("label") != "neutral" and not answer.get("evidence")
