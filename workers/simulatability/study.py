"""Simulation and plausibility items from the stored records, added to a study.

``simulation_study``: the whole chain (``records``: explain, write follow-ups, answer them),
then one ``simulation`` item per kept follow-up whose explanation and model answer both
parsed. ``plausibility_study``: explanations only, then one ``plausibility`` item per
question with a gold answer, its explanations in each mode side by side. Items go through
``annotation.services.authoring.studies.add_items`` (validated by the kind, ids the study already
has skipped), so a rerun adds nothing.

The LLM simulators (another job, ``simulate``) answer these items afterwards as ``model``
participants, from the page's material only; nothing here depends on them.
"""

from __future__ import annotations

import hashlib

from rest_framework import serializers

from annotation.errors import InputError
from annotation.job_parameters import BuildPlausibilityStudyParameters, BuildSimulationStudyParameters
from annotation.kinds import get_kind
from annotation.models import FollowUp, Item, ModelExplanation, Study
from annotation.services.authoring.studies import add_items
from annotation.services.jobs import Progress

from . import records
from .prompts import CHOICE_WORDS

MAX_ID: int = Item._meta.get_field("external_id").max_length or 0  # an item id's limit, as the model has it


def _staged(progress: Progress, stage: str) -> Progress:
    """The chain's steps report through one job: each message says which step it is."""

    def report(done: int, total: int | None = None, message: str = "") -> None:
        progress(done, total, f"{stage}: {message}")

    return report


def _check_kind(study: Study, kind: str) -> None:
    if study.kind != kind:
        raise InputError({"study": [f"Study {study.slug!r} is a {study.kind!r} study, not {kind!r}."]})


def _longest_question() -> int:
    """The longest question a plausibility page takes, as the kind's payload says."""
    question = get_kind("plausibility").Payload().fields["question"]
    assert isinstance(question, serializers.CharField) and question.max_length is not None
    return question.max_length


def _tag(name: str) -> str:
    from workers.lm.registry import resolve_model

    return resolve_model(name).tag


def _short(text: str) -> str:
    """An id as given when it fits, else its start and a hash."""
    if len(text) <= MAX_ID:
        return text
    return f"{text[: MAX_ID - 13]}~{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def explanation_id(explanation: ModelExplanation) -> str:
    return _short(f"{explanation.question_id}:{_tag(explanation.model)}:{explanation.mode}")


def simulation_item(explanation: ModelExplanation, followup: FollowUp) -> dict:
    """One page: the starter with the model's answer and explanation, and the follow-up.

    ``model_followup_answer`` is the truth precision is measured against; the kind's
    ``page_context`` keeps it (and everything under provenance) off the page.
    """
    question, content = explanation.question, followup.content
    if explanation.variant == "yes_no":
        payload = {
            "variant": "yes_no",
            "starter_question": question["question"],
            "model_answer": explanation.answer,
            "model_explanation": explanation.explanation,
            "followup_question": content["question"],
        }
    else:
        payload = {
            "variant": "pairwise",
            "starter_context": question["context"],
            "starter_responses": question["responses"],
            "model_choice": explanation.answer,
            "model_explanation": explanation.explanation,
            "followup_context": content["context"],
            "followup_responses": content["responses"],
        }
    ident = explanation_id(explanation)
    payload |= {"model_followup_answer": followup.model_answer, "explanation_id": ident}
    return {
        "external_id": _short(f"{ident}:{_tag(followup.generator)}:{followup.index}"),
        "payload": payload,
        "provenance": {
            "system": f"{explanation.model}/{explanation.mode}",
            "explainer": explanation.model,
            "mode": explanation.mode,
            "generator": followup.generator,
            "question_id": explanation.question_id,
            "followup_index": followup.index,
            "prompts": {
                "explain": explanation.prompt_version,
                "followups": followup.prompt_version,
                "answer": explanation.prompt_version,
            },
            "decoding": {
                "explain": explanation.decoding,
                "followups": followup.decoding,
                "answer": followup.answer_decoding,
            },
            "seed": followup.seed,
            "seeds": {"explain": explanation.seed, "followup": followup.seed, "answer": followup.answer_seed},
            "similarity_to_kept": followup.similarity,
        },
    }


def simulation_study(study: Study, *, parameters: BuildSimulationStudyParameters, progress: Progress) -> dict:
    """The chain on a ``simulation`` study (``BuildSimulationStudyParameters``); a summary per step."""
    _check_kind(study, "simulation")
    summary = {"explain": records.explain(parameters=parameters, progress=_staged(progress, "explain"))}
    summary["counterfactuals"] = records.write_followups(
        parameters=parameters, progress=_staged(progress, "counterfactuals")
    )
    summary["answer_followups"] = records.answer_followups(
        parameters=parameters, progress=_staged(progress, "answers")
    )
    explanations = records.parsed_explanations(parameters)
    generators = [records.model_name(g) for g in parameters.generators]
    followups = FollowUp.objects.filter(
        explanation__in=explanations,
        generator__in=generators,
        status=FollowUp.Status.KEPT,
        answer_status=FollowUp.AnswerStatus.PARSED,
    ).order_by("pk")
    by_id = {e.pk: e for e in explanations}
    items = [simulation_item(by_id[f.explanation_id], f) for f in followups]
    result = add_items(study, items)
    progress(len(items), total=len(items), message=f"items: {result.added} added")
    return {**summary, "items": len(items), "added": result.added, "already_present": result.skipped}


def plausibility_item(question: dict, explanations: list[ModelExplanation]) -> dict | None:
    """One page per question with gold: the question, its correct answer, the explanations."""
    first = explanations[0]
    if first.variant == "yes_no":
        text = question["question"]
    else:
        first_response, second_response = question["responses"]
        text = f"{question['context']}\n\nResponse 1: {first_response}\nResponse 2: {second_response}"
    if len(text) > _longest_question():
        return None
    return {
        "external_id": _short(f"{first.question_id}:{_tag(first.model)}"),
        "payload": {
            "question": text,
            "answer": CHOICE_WORDS[question["answer"]],
            "explanations": [{"id": e.mode, "text": e.explanation} for e in explanations],
        },
        "provenance": {
            "system": first.model,
            "explainer": first.model,
            "modes": [e.mode for e in explanations],
            "question_id": first.question_id,
            "prompts": {"explain": first.prompt_version},
            "decoding": {e.mode: e.decoding for e in explanations},
            "seeds": {e.mode: e.seed for e in explanations},
            "answers": {e.mode: e.answer for e in explanations},
        },
    }


def plausibility_study(
    study: Study, *, parameters: BuildPlausibilityStudyParameters, progress: Progress
) -> dict:
    """Explanations (step 1 only) into a ``plausibility`` study; questions without gold are left out."""
    _check_kind(study, "plausibility")
    summary = records.explain(parameters=parameters, progress=_staged(progress, "explain"))
    grouped: dict[str, list[ModelExplanation]] = {}
    for explanation in records.parsed_explanations(parameters):
        grouped.setdefault(explanation.question_digest, []).append(explanation)
    items, without_gold, too_long = [], 0, 0
    for explanations in grouped.values():
        question = explanations[0].question
        if not question.get("answer"):
            without_gold += 1
            continue
        item = plausibility_item(question, explanations)
        if item is None:
            too_long += 1
        else:
            items.append(item)
    result = add_items(study, items)
    progress(len(items), total=len(items), message=f"items: {result.added} added")
    return {
        "explain": summary,
        "items": len(items),
        "added": result.added,
        "already_present": result.skipped,
        "without_gold": without_gold,
        "too_long": too_long,
    }
