"""Premise-claim labelling: does the passage support, contradict or not bear on a claim,
and which of its sentences are the evidence.
"""

from __future__ import annotations

from django.http import QueryDict
from rest_framework import serializers

from annotation.text import split_sentences
from stats.overlap import set_f1

from .base import ModelOption, ModelQuestion, ModelTask, Observation, Score, StrictSerializer, TaskKind

LABELS = [
    ("supports", "The passage supports the claim"),
    ("contradicts", "The passage contradicts the claim"),
    ("neutral", "Neither: the passage does not settle it"),
]
LABEL_VALUES = [value for value, _ in LABELS]
MAX_SENTENCES = 200
MODEL_LABELS = tuple(ModelOption(value, value, text) for value, text in LABELS)
YES_NO = (ModelOption("yes", "yes", "this sentence is evidence"), ModelOption("no", "no", "it is not"))


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
    report = "scoring.reports.claim.ClaimReport"
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

    answerable_by_model = True

    def model_task(self, item, state: dict) -> ModelTask:
        """The claim and the numbered sentences; the label, then per sentence whether it
        is evidence (yes / no)."""
        page = self.model_page(item, state)
        lines = [f"Claim: {page['claim']}", ""]
        if page["title"]:
            lines.append(f"Passage: {page['title']}")
        lines += [f"Sentence {index + 1}: {sentence}" for index, sentence in page["sentences"]]
        label = ModelQuestion(
            "label", "label", "Does the passage support the claim, contradict it, or neither?", MODEL_LABELS
        )
        evidence = tuple(
            ModelQuestion(
                f"evidence.{index}",
                "evidence",
                f"Is sentence {index + 1} (“{sentence}”) one of the sentences that support or "
                "contradict the claim?",
                YES_NO,
            )
            for index, sentence in page["sentences"]
        )
        return ModelTask("\n".join(lines), (label, *evidence))

    def answer_from_model(self, item, state: dict, chosen, scores=None) -> dict:
        """A neutral label takes no evidence. Another label takes the sentences answered
        yes; when none was, the one most likely to be evidence (from the scores)."""
        label = chosen.get("label")
        if label == "neutral":
            return {"label": label, "evidence": []}
        evidence = [
            int(qid.split(".")[1])
            for qid, value in chosen.items()
            if qid.startswith("evidence.") and value == "yes"
        ]
        if not evidence and scores:
            margins = {
                int(qid.split(".")[1]): by_value["yes"] - by_value["no"]
                for qid, by_value in scores.items()
                if qid.startswith("evidence.")
            }
            if margins:
                evidence = [max(margins, key=lambda index: margins[index])]
        return {"label": label, "evidence": sorted(evidence)}

    def model_choices(self, item, state: dict, answer: dict) -> dict:
        choices: dict = {"label": answer["label"]}
        if evidence_missing(answer):
            return choices
        chosen = set(answer.get("evidence", []))
        for index in range(len(item.payload["sentences"])):
            choices[f"evidence.{index}"] = "yes" if index in chosen else "no"
        return choices

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
