"""The three model steps, each from the question file to its database records.

``explain``: the explaining model answers each question in each mode (greedy).
``write_followups``: each generator samples ``n`` follow-ups per parsed explanation, then
duplicates and near-duplicates are marked (``dedup``). ``answer_followups``: the explaining
model answers every kept follow-up in the explanation's mode (greedy): the simulation's
truth. Each step skips what its records already hold, so a rerun (or a redelivered job)
generates nothing twice; records are written batch by batch, so a stopped job keeps its work.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from django.db import transaction

from annotation.job_parameters import CounterfactualsParameters, ExplainParameters
from annotation.models import FollowUp, ModelExplanation
from annotation.services.jobs import Progress

from . import dedup
from .parsing import followup_text, parse_answer, parse_followup
from .prompts import explain_prompt, followups_prompt, prompt_file
from .questions import Question, read_questions

T = TypeVar("T")


def derived_seed(seed: int, *parts: object) -> int:
    """A record's own seed: the same for the same record in any run, batch or order."""
    digest = hashlib.sha256(":".join(map(str, (seed, *parts))).encode()).digest()
    return int.from_bytes(digest[:4], "big")


def model_name(name_or_path: str) -> str:
    """The name records and provenance carry (``ModelSpec.name``); nothing is loaded."""
    from workers.lm.registry import resolve_model

    return resolve_model(name_or_path).name


@dataclass(frozen=True)
class Decoding:
    top_p: float = 0.0  # 0: greedy
    temperature: float = 1.0
    max_new_tokens: int = 120

    def sampling(self):
        from workers.lm.generation import Sampling

        return Sampling(top_p=self.top_p, temperature=self.temperature)

    def as_dict(self) -> dict:
        return {**self.sampling().as_dict(), "max_new_tokens": self.max_new_tokens}


def generate_batches(
    name: str, work: Sequence[T], render: Callable[[T], tuple[str, int]], decoding: Decoding, batch_size: int
) -> Iterator[list[tuple[T, str, int]]]:
    """``(entry, generated text, seed)`` per entry of ``work``, one batch at a time; ``render``
    gives an entry's prompt and seed. The model is loaded once (and kept by the worker process)."""
    from workers.lm.generation import GenerationRequest, generate_texts
    from workers.lm.loading import shared_lm

    lm = shared_lm(name)
    sampling = decoding.sampling()
    for start in range(0, len(work), batch_size):
        chunk = work[start : start + batch_size]
        prompts = [render(entry) for entry in chunk]
        requests = [
            GenerationRequest(prompt, seed=seed, sampling=sampling, max_new_tokens=decoding.max_new_tokens)
            for prompt, seed in prompts
        ]
        outputs = generate_texts(lm, requests, batch_size=batch_size)
        yield [(entry, out.text, seed) for entry, out, (_, seed) in zip(chunk, outputs, prompts, strict=True)]


def explanations_of(questions: list[Question], model: str, modes: Sequence[str]) -> list[ModelExplanation]:
    """The stored explanations of the questions by ``model`` in ``modes`` (current prompts), file order."""
    versions = {q.variant: prompt_file("explain", q.variant).tag for q in questions}
    stored = ModelExplanation.objects.filter(
        question_digest__in=[q.digest for q in questions], model=model, mode__in=list(modes)
    )
    found = {(e.question_digest, e.mode, e.prompt_version): e for e in stored}
    return [
        found[key]
        for q in questions
        for mode in modes
        if (key := (q.digest, mode, versions[q.variant])) in found
    ]


def explain(*, parameters: ExplainParameters, progress: Progress) -> dict:
    """Step 1: every (question, mode) the explaining model has not answered yet."""
    questions = read_questions(parameters.questions)
    model, modes = model_name(parameters.explainer), list(parameters.modes)
    held = {(e.question_digest, e.mode) for e in explanations_of(questions, model, modes)}
    todo = [(q, mode) for q in questions for mode in modes if (q.digest, mode) not in held]
    decoding = Decoding(max_new_tokens=parameters.max_new_tokens)
    total = len(questions) * len(modes)
    progress(total - len(todo), total=total, message=f"{len(held)} explanations already stored")
    done, seed = total - len(todo), parameters.seed

    def render(entry: tuple[Question, str]) -> tuple[str, int]:
        q, mode = entry
        return explain_prompt(q, mode), derived_seed(seed, "explain", q.digest, mode)

    if todo:
        batches = generate_batches(parameters.explainer, todo, render, decoding, parameters.batch_size)
        for batch in batches:
            rows = [_explanation_row(q, mode, model, text, decoding, s) for (q, mode), text, s in batch]
            ModelExplanation.objects.bulk_create(rows, ignore_conflicts=True)
            done += len(rows)
            progress(done, message=f"{done} of {total} explanations")
    stored = explanations_of(questions, model, modes)
    return {
        "explainer": model,
        "questions": len(questions),
        "explanations": len(stored),
        "written": len(todo),
        "already_present": total - len(todo),
        "unparseable": sum(1 for e in stored if not e.parsed),
    }


def _explanation_row(
    q: Question, mode: str, model: str, text: str, decoding: Decoding, seed: int
) -> ModelExplanation:
    parsed = parse_answer(text, q.variant, mode)
    return ModelExplanation(
        question_id=q.id,
        question_digest=q.digest,
        question=q.record(),
        variant=q.variant,
        model=model,
        mode=mode,
        prompt_version=prompt_file("explain", q.variant).tag,
        raw_text=text,
        answer=parsed.answer or "",
        explanation=parsed.explanation,
        problem=parsed.problem,
        decoding=decoding.as_dict(),
        seed=seed,
    )


def question_of(explanation: ModelExplanation) -> Question:
    record = explanation.question
    if explanation.variant == "yes_no":
        return Question(record["id"], "yes_no", text=record["question"], gold=record.get("answer", ""))
    return Question(
        record["id"],
        "pairwise",
        context=record["context"],
        responses=tuple(record["responses"]),
        gold=record.get("answer", ""),
    )


def parsed_explanations(parameters: ExplainParameters) -> list[ModelExplanation]:
    questions = read_questions(parameters.questions)
    stored = explanations_of(questions, model_name(parameters.explainer), parameters.modes)
    return [e for e in stored if e.parsed]


def write_followups(*, parameters: CounterfactualsParameters, progress: Progress) -> dict:
    """Step 2: ``n`` follow-ups per parsed explanation from each generator, then duplicates marked."""
    explanations = parsed_explanations(parameters)
    generators = [model_name(g) for g in parameters.generators]
    n, batch_size, seed = parameters.n, parameters.batch_size, parameters.seed
    decoding = Decoding(parameters.top_p, parameters.temperature, parameters.followup_max_new_tokens)
    held = set(
        FollowUp.objects.filter(explanation__in=explanations).values_list(
            "explanation_id", "generator", "index"
        )
    )
    total = len(explanations) * len(generators) * n
    done = len(held & {(e.pk, g, i) for e in explanations for g in generators for i in range(n)})
    already, written = done, 0
    progress(done, total=total, message=f"{done} follow-ups already stored")
    for given, generator in zip(parameters.generators, generators, strict=True):
        todo = [(e, i) for e in explanations for i in range(n) if (e.pk, generator, i) not in held]
        if not todo:
            continue

        def render(entry: tuple[ModelExplanation, int], generator: str = generator) -> tuple[str, int]:
            e, i = entry
            prompt = followups_prompt(question_of(e), e.answer, e.explanation)
            return prompt, derived_seed(seed, "followup", e.question_digest, e.model, e.mode, generator, i)

        for batch in generate_batches(given, todo, render, decoding, batch_size):
            rows = [_followup_row(e, i, generator, text, decoding, s) for (e, i), text, s in batch]
            FollowUp.objects.bulk_create(rows, ignore_conflicts=True)
            done, written = done + len(rows), written + len(rows)
            progress(done, message=f"{done} of {total} follow-ups ({generator})")
    mark_duplicates(explanations, parameters.similarity_threshold)
    counts = _status_counts(FollowUp.objects.filter(explanation__in=explanations, generator__in=generators))
    return {
        "generators": generators,
        "explanations": len(explanations),
        "written": written,
        "already_present": already,
        **counts,
    }


def _followup_row(
    e: ModelExplanation, index: int, generator: str, text: str, decoding: Decoding, seed: int
) -> FollowUp:
    parsed = parse_followup(text, e.variant)
    return FollowUp(
        explanation=e,
        generator=generator,
        index=index,
        prompt_version=prompt_file("followups", e.variant).tag,
        raw_text=text,
        content=parsed.content or {},
        status=FollowUp.Status.PENDING if parsed.content else FollowUp.Status.UNPARSEABLE,
        decoding=decoding.as_dict(),
        seed=seed,
    )


def mark_duplicates(explanations: list[ModelExplanation], threshold: float) -> None:
    """Each explanation's unchecked follow-ups against its kept ones, in order of creation."""
    from workers.similarity import embed_sentences

    pending = FollowUp.objects.filter(explanation__in=explanations, status=FollowUp.Status.PENDING)
    for explanation_id in sorted(set(pending.values_list("explanation_id", flat=True))):
        rows = list(FollowUp.objects.filter(explanation_id=explanation_id).order_by("pk"))
        kept = [f for f in rows if f.status == FollowUp.Status.KEPT]
        fresh = [f for f in rows if f.status == FollowUp.Status.PENDING]
        starter = followup_text(_starter_content(rows[0].explanation))
        verdicts, _ = dedup.classify(
            [followup_text(f.content) for f in fresh],
            [followup_text(f.content) for f in kept],
            starter=starter,
            embed=embed_sentences,
            threshold=threshold,
        )
        pool = list(kept)
        for followup, verdict in zip(fresh, verdicts, strict=True):
            followup.status = verdict.status
            followup.similarity = verdict.similarity
            index = verdict.duplicate_of
            followup.duplicate_of = pool[index] if index is not None and index >= 0 else None
            if verdict.status == dedup.KEPT:
                pool.append(followup)
        with transaction.atomic():
            FollowUp.objects.bulk_update(fresh, ["status", "similarity", "duplicate_of"])


def _starter_content(explanation: ModelExplanation) -> dict:
    record = explanation.question
    if explanation.variant == "yes_no":
        return {"question": record["question"]}
    return {"context": record["context"], "responses": record["responses"]}


def _status_counts(followups) -> dict:
    statuses = list(followups.values_list("status", flat=True))
    return {
        status.value: statuses.count(status.value)
        for status in FollowUp.Status
        if status != FollowUp.Status.PENDING
    }


def followup_question(followup: FollowUp) -> Question:
    content, variant = followup.content, followup.explanation.variant
    qid = f"{followup.explanation.question_id}-f{followup.index}"
    if variant == "yes_no":
        return Question(qid, "yes_no", text=content["question"])
    return Question(qid, "pairwise", context=content["context"], responses=tuple(content["responses"]))


def answer_followups(*, parameters: ExplainParameters, progress: Progress) -> dict:
    """Step 3: the explaining model answers each kept follow-up in its explanation's mode."""
    explanations = parsed_explanations(parameters)
    kept = FollowUp.objects.filter(explanation__in=explanations, status=FollowUp.Status.KEPT)
    todo = list(
        kept.filter(answer_status=FollowUp.AnswerStatus.PENDING).select_related("explanation").order_by("pk")
    )
    total = kept.count()
    done, batch_size = total - len(todo), parameters.batch_size
    decoding = Decoding(max_new_tokens=parameters.max_new_tokens)
    progress(done, total=total, message=f"{done} follow-ups already answered")
    seed = parameters.seed

    def render(f: FollowUp) -> tuple[str, int]:
        e = f.explanation
        prompt = explain_prompt(followup_question(f), e.mode)
        return prompt, derived_seed(seed, "answer", e.question_digest, e.model, e.mode, f.generator, f.index)

    if todo:
        for batch in generate_batches(parameters.explainer, todo, render, decoding, batch_size):
            for followup, text, answer_seed in batch:
                record_answer(followup, text, answer_seed, decoding)
            FollowUp.objects.bulk_update([followup for followup, _, _ in batch], ANSWER_FIELDS)
            done += len(batch)
            progress(done, message=f"{done} of {total} follow-ups answered")
    statuses = list(kept.values_list("answer_status", flat=True))
    return {
        "followups": total,
        "answered": len(todo),
        "already_answered": total - len(todo),
        "unparseable": statuses.count(FollowUp.AnswerStatus.UNPARSEABLE),
    }


ANSWER_FIELDS = [
    "answer_raw",
    "answer_seed",
    "answer_decoding",
    "model_answer",
    "answer_problem",
    "answer_status",
]


def record_answer(followup: FollowUp, text: str, seed: int, decoding: Decoding) -> None:
    """The explaining model's reply on the follow-up row: raw text, parsed answer or the problem."""
    parsed = parse_answer(text, followup.explanation.variant, followup.explanation.mode)
    followup.answer_raw, followup.answer_seed, followup.answer_decoding = text, seed, decoding.as_dict()
    followup.model_answer, followup.answer_problem = parsed.answer or "", parsed.problem
    parsed_status, unparseable = FollowUp.AnswerStatus.PARSED, FollowUp.AnswerStatus.UNPARSEABLE
    followup.answer_status = parsed_status if parsed.answer else unparseable
