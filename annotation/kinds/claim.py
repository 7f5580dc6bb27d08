"""Premise-claim labelling: does the passage support, contradict or not bear on a claim,
and which of its sentences are the evidence.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.http import QueryDict
from django.utils.translation import gettext, gettext_noop
from rest_framework import serializers

from annotation.text import split_sentences
from stats.overlap import set_f1

from .base import (
    ModelOption,
    ModelQuestion,
    ModelTask,
    Observation,
    RaterAnswer,
    RaterExample,
    RaterQuestion,
    Score,
    StrictSerializer,
    TaskKind,
)

# Texts marked for translation: the page shows them in its language, a model reads them as here.
LABELS = [
    ("supports", gettext_noop("The passage supports the claim")),
    ("contradicts", gettext_noop("The passage contradicts the claim")),
    ("neutral", gettext_noop("Neither: the passage does not settle it")),
]
LABEL_VALUES = [value for value, _ in LABELS]
RATER_QUESTION = "label"  # the one question a claim study's trained rater answers
RATER_TEXT = "Does the passage support or contradict the claim?"
EVIDENCE_THRESHOLD = 0.5  # a sentence is a trained rater's evidence from this probability
MAX_SENTENCES = 200
MODEL_LABELS = tuple(ModelOption(value, value, text) for value, text in LABELS)
YES_NO = (ModelOption("yes", "yes", "this sentence is evidence"), ModelOption("no", "no", "it is not"))
SENTENCE_KEYS = "abcdefghijklmnopqrstuvwxyz"  # a page's keys: each picks or unpicks one sentence


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
            raise serializers.ValidationError(
                {"evidence": [gettext("A neutral label takes no evidence sentences.")]}
            )
        if data["label"] != "neutral" and not evidence and not self.context.get("gold"):
            raise serializers.ValidationError(
                {
                    "evidence": [
                        gettext("Select the sentence or sentences that support or contradict the claim.")
                    ]
                }
            )
        data["evidence"] = sorted(evidence)
        return data


class Claim(TaskKind):
    name = "claim"
    # What a datasheet (HEDS) says of the kind's evaluations (``TaskKind.evaluation``).
    evaluation: ClassVar[dict[str, Any]] = {
        "input": "text: multiple sentences (a passage and a claim)",
        "output": "text: sentence (the claim)",
        "task": "other: claims made from a passage, checked against it",
        "relative": False,
        "extrinsic": False,
        "objective": False,
        "elicitation": "output classification or labelling",
        "quality_type": "correctness",
        "aspect": "content of output",
        "frame": "quality of output relative to the input (the passage the claim is about)",
    }
    agreement_per_answer = True  # agreement_values below
    report = "scoring.reports.claim.ClaimReport"
    label = gettext_noop("Premise and claim")
    template = "annotation/kinds/claim.html"
    Payload = ClaimPayload
    Answer = ClaimAnswer

    def page_context(self, item, assignment) -> dict:
        return self._context(item, evidence=None)

    def answer_from_form(self, data: QueryDict, item, assignment) -> dict:
        return {"label": data.get("label", ""), "evidence": data.getlist("evidence")}

    def review_context(self, item, answer: dict) -> dict:
        context = self._context(item, evidence=set(answer.get("evidence", [])))
        context["answer"] = answer
        return context

    def _context(self, item, evidence: set[int] | None) -> dict:
        """The page's context; ``evidence``: the sentences an answer shown for review chose
        (None on a page to answer, whose ``answer`` is None). Each sentence row carries what
        the template prints (its form value, its letter key on a page to answer, whether the
        answer chose it), so the template runs no filter per sentence, and tests a name it has
        rather than a missing one (which Django resolves by raising and catching)."""
        sentences = [
            {
                "value": str(index),
                "text": sentence,
                "key": "" if evidence is not None else sentence_key(index),
                "chosen": evidence is not None and index in evidence,
            }
            for index, sentence in enumerate(item.payload["sentences"])
        ]
        return {
            "claim": item.payload["claim"],
            "title": item.payload.get("title", ""),
            "sentences": sentences,
            "labels": LABELS,
            "answer": None,
        }

    answerable_by_model = True

    def model_task(self, item, state: dict) -> ModelTask:
        """The claim and the numbered sentences; the label, then per sentence whether it
        is evidence (yes / no)."""
        page = self.model_page(item, state)
        lines = [f"Claim: {page['claim']}", ""]
        if page["title"]:
            lines.append(f"Passage: {page['title']}")
        sentences = list(enumerate(row["text"] for row in page["sentences"]))
        lines += [f"Sentence {index + 1}: {sentence}" for index, sentence in sentences]
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
            for index, sentence in sentences
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

    # --- trained raters ---------------------------------------------------------------
    # An NLI classifier over (premise, claim). In training each person's answer gives the
    # whole passage as premise and, when they highlighted evidence, the highlighted
    # sentences as a second premise (as LEME's rater; left out when it is the whole
    # passage). Every answer is an example of its own, so an item's examples weigh its
    # labels as its annotators did. At prediction time the premise is the whole passage
    # (what the rater can always see); for a supports or contradicts label the evidence is
    # then every sentence that, read alone as the premise, gets that label with
    # probability >= EVIDENCE_THRESHOLD, or else the one sentence that gives it the
    # highest probability: those labels need evidence sentences.

    trained_raters = True

    def rater_questions(self, config: dict) -> list[RaterQuestion]:
        return [RaterQuestion(RATER_QUESTION, RATER_TEXT, tuple(LABEL_VALUES), False)]

    def rater_pair(self, question: RaterQuestion, item) -> tuple[str, str] | None:
        return self._premise_and_claim(item)

    def rater_value(self, question: RaterQuestion, answer: dict):
        return answer.get("label")

    def rater_examples(self, question: RaterQuestion, item, answer: dict) -> list[RaterExample]:
        value = self.rater_value(question, answer)
        if value is None:
            return []
        label = question.labels.index(value)
        claim, sentences = item.payload["claim"], item.payload["sentences"]
        out = [RaterExample(" ".join(sentences), claim, label)]
        evidence = [sentences[i] for i in answer.get("evidence", []) if i < len(sentences)]
        if evidence and len(evidence) < len(sentences):
            out.append(RaterExample(" ".join(evidence), claim, label))
        return out

    def rater_answers(self, questions, items, read) -> list[RaterAnswer]:
        """The label from the whole passage; for supports or contradicts, the evidence
        sentences. One call for the passages, one for the sentences alone."""
        (question,) = questions
        labels = question.labels
        wholes = [
            list(map(float, whole))
            for whole in read(question, [self._premise_and_claim(item) for item in items])
        ]
        chosen = [labels[_argmax(whole)] for whole in wholes]
        needs = [i for i, label in enumerate(chosen) if label != "neutral"]
        pairs = [(s, items[i].payload["claim"]) for i in needs for s in items[i].payload["sentences"]]
        alone = [list(map(float, row)) for row in read(question, pairs)] if pairs else []
        by_item, offset = {}, 0
        for i in needs:
            count = len(items[i].payload["sentences"])
            index = labels.index(chosen[i])
            by_item[i] = [row[index] for row in alone[offset : offset + count]]
            offset += count
        answers = []
        for i, whole in enumerate(wholes):
            details: dict = {
                "probabilities": {label: round(p, 6) for label, p in zip(labels, whole, strict=True)}
            }
            evidence: list[int] = []
            if i in by_item:
                sentence = by_item[i]
                evidence = [j for j, p in enumerate(sentence) if p >= EVIDENCE_THRESHOLD] or [
                    _argmax(sentence)
                ]
                details["sentence_probabilities"] = [round(p, 6) for p in sentence]
            answer = {"label": chosen[i], "evidence": evidence}
            answers.append(RaterAnswer(answer, details, {**answer, **details}))
        return answers

    def _premise_and_claim(self, item) -> tuple[str, str]:
        return " ".join(item.payload["sentences"]), item.payload["claim"]


def sentence_key(index: int) -> str:
    """The letter key that picks or unpicks the sentence at 0-based ``index`` ('' past 'z')."""
    return SENTENCE_KEYS[index] if index < len(SENTENCE_KEYS) else ""


def _argmax(values: list[float]) -> int:
    """The first index of the largest value (as NumPy's ``argmax``)."""
    return max(range(len(values)), key=lambda j: (values[j], -j))


def evidence_missing(answer: dict) -> bool:
    """A label that needs evidence sentences and has none: only an answer imported as
    incomplete (``importresponses --allow-incomplete``) can be like this."""
    return answer.get("label") != "neutral" and not answer.get("evidence")
