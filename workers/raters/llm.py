"""An LLM rater (or simulator) answering a study's items: prompts, scores, stored answers.

For every item the model has not answered yet, the kind's ``prepare_assignment`` draws the
page state (display order…) with a generator seeded by the rater's seed and the item, the
kind turns the page into closed questions (``model_task``), and each question gets one
prompt (``prompts.build_prompt``). The model then either scores every allowed answer by
its log-probability and takes the likeliest (``logprob``, the default: tiny and small
models give usable answers), or writes a short answer that is parsed (``generate``): an
output that names no allowed answer leaves the item unanswered, recorded and counted.
The kind assembles the chosen options into its answer; ``answer_as_model``
(``workers.raters.run``) stores it as the model participant's, as it does a trained rater's.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from annotation.errors import InputError
from annotation.job_parameters import RateLLMParameters
from annotation.kinds.base import ModelOption, ModelQuestion, ModelTask, TaskKind
from annotation.models import Item, Study
from annotation.services.analysis.model_answers import HumanExample, ModelAnswer, human_examples

from .prompts import PROMPT_VERSION, build_prompt, choose_examples, prepare_examples, reply_answer, shots_for

ITEMS_PER_STEP = 16  # items scored and stored per step: the unit of progress and of a rerun's resume


def rater_definition(study: Study, parameters: RateLLMParameters) -> dict:
    """What this rater is, as the study's kind calls it (``TaskKind.model_rater``: an ``llm``
    rater, or a ``simulator`` on a simulation study)."""
    definition: dict[str, Any] = {
        "kind": study.task_kind.model_rater,
        "model": parameters.model,
        "version": PROMPT_VERSION,
        "shots": parameters.shots,
        "seed": parameters.seed,
        "scoring": parameters.scoring,
    }
    if parameters.scoring == "generate":
        definition["max_new_tokens"] = parameters.max_new_tokens
    return definition


@dataclass
class LLMRater:
    """An LLM rater (or simulator) as ``workers.raters.run.answer_as_model`` runs it; the
    model is loaded on the first batch, so a run with nothing left to do loads nothing."""

    definition: dict
    parameters: RateLLMParameters
    examples: list[HumanExample]  # people's answers the few-shot examples come from
    lm: Any = field(default=None, repr=False)

    def leaves_out(self, study: Study) -> set[str]:
        return set()

    def answer(self, study: Study, items: Sequence[Item]) -> list[ModelAnswer]:
        if self.lm is None:
            from workers.lm.loading import shared_lm  # torch: only once there is work

            self.lm = shared_lm(self.parameters.model)
        seed, shots = self.parameters.seed, self.parameters.shots
        prompted = [
            prompt_item(study.task_kind, study, item, self.examples, seed=seed, shots=shots) for item in items
        ]
        return answer_items(self.lm, study.task_kind, prompted, self.parameters)


def llm_rater(study: Study, parameters: RateLLMParameters) -> LLMRater:
    """The rater ``parameters`` describe, for ``study``; ``InputError`` when a language model
    cannot answer the study's kind."""
    kind = study.task_kind
    if not kind.answerable_by_model:
        raise InputError({"study": [f"A language model cannot answer {kind.name} items."]})
    if parameters.scoring == "logprob" and kind.asks_open_model_questions(study.config or {}):
        raise InputError(
            {"scoring": ["This study asks questions a model answers in its own words (spans): use generate."]}
        )
    examples = human_examples(study) if parameters.shots else []
    return LLMRater(rater_definition(study, parameters), parameters, examples)


@dataclass(frozen=True)
class Prompted:
    """One item's page state, its closed questions and the prompt of each."""

    item: Item
    state: dict
    task: ModelTask
    prompts: tuple[str, ...]
    examples: tuple[str, ...]  # external ids of the items the few-shot examples came from


def prompt_item(
    kind: TaskKind,
    study: Study,
    item: Item,
    examples: Sequence[HumanExample],
    *,
    seed: int,
    shots: int,
    state: dict | None = None,
) -> Prompted:
    """The prompts of one item, the same on every run with the same seed; on the page state
    the seed draws, or on ``state`` (a judge's second order), with the same examples."""
    item.study = study
    if state is None:
        state = kind.prepare_assignment(item, random.Random(f"{seed}:state:{item.external_id}"))
    task = kind.model_task(item, state)
    rng = random.Random(f"{seed}:shots:{item.external_id}")
    chosen = choose_examples(examples, item.pk, shots, rng) if shots else []
    prepared = prepare_examples(kind, chosen)
    prompts, used = [], set()
    for question in task.questions:
        shots_here = shots_for(question, prepared, rng)
        used |= {shot.item_id for shot in shots_here}
        prompts.append(build_prompt(study.instructions, task, question, shots_here))
    return Prompted(item, state, task, tuple(prompts), tuple(sorted(used)))


def answer_items(
    lm: Any, kind: TaskKind, prompted: Sequence[Prompted], parameters: RateLLMParameters
) -> list[ModelAnswer]:
    """The rater's answers to prompted items, by log-probability or by generation."""
    if parameters.scoring == "generate":
        return _by_generation(lm, kind, prompted, parameters)
    return _by_logprob(lm, kind, prompted, parameters)


def _by_logprob(
    lm: Any, kind: TaskKind, prompted: Sequence[Prompted], parameters: RateLLMParameters
) -> list[ModelAnswer]:
    from workers.lm.scoring import score_targets

    requests = [
        (prompt, [option.text for option in question.options])
        for entry in prompted
        for prompt, question in zip(entry.prompts, entry.task.questions, strict=True)
    ]
    # Left padding: every answer ends at the right edge, so only the last positions' logits
    # are computed; an answer's score is the sum over its tokens.
    scored = iter(score_targets(lm, requests, batch_size=parameters.batch_size, padding_side="left"))
    answers = []
    for entry in prompted:
        chosen, scores, truncated = {}, {}, 0
        for question in entry.task.questions:
            result = next(scored)
            by_value = {o.value: lp for o, lp in zip(question.options, result.sums(), strict=True)}
            chosen[question.id] = max(question.options, key=lambda o: by_value[o.value]).value
            scores[question.id] = by_value
            truncated = max(truncated, result.truncated)
        answer = kind.answer_from_model(entry.item, entry.state, chosen, scores)
        details = _details(entry, truncated) | {"logprobs": _rounded(entry.task.questions, scores)}
        answers.append(
            ModelAnswer(entry.item, _raw(entry.task.questions, chosen), answer, entry.state, details=details)
        )
    return answers


def _by_generation(
    lm: Any, kind: TaskKind, prompted: Sequence[Prompted], parameters: RateLLMParameters
) -> list[ModelAnswer]:
    from workers.lm.generation import GenerationRequest, Sampling, generate_texts

    requests = [
        GenerationRequest(
            prompt,
            seed=parameters.seed,
            sampling=Sampling(top_p=0.0),
            max_new_tokens=parameters.max_new_tokens,
        )
        for entry in prompted
        for prompt in entry.prompts
    ]
    outputs = iter(generate_texts(lm, requests, batch_size=parameters.batch_size))
    answers = []
    for entry in prompted:
        chosen: dict = {}
        lines, missing = [], []
        for question in entry.task.questions:
            text = next(outputs).text
            lines.append(f"{question.id}: {text.strip()}")
            option = reply_answer(text, question)
            if option is None:
                missing.append(question.id)
            else:
                chosen[question.id] = option.value
        raw = "\n".join(lines)
        if missing:
            error = f"no allowed answer in the output for {', '.join(missing[:5])}" + (
                " …" if len(missing) > 5 else ""
            )
            answers.append(
                ModelAnswer(entry.item, raw, None, entry.state, error=error, details=_details(entry, None))
            )
            continue
        answer = kind.answer_from_model(entry.item, entry.state, chosen)
        answers.append(ModelAnswer(entry.item, raw, answer, entry.state, details=_details(entry, None)))
    return answers


def _details(entry: Prompted, truncated: int | None) -> dict:
    """What the output row keeps of the prompts: the example items, a digest of each
    prompt (rebuilt from the same seed to read it), and how many tokens the most cut one
    lost (None: generation, which cuts as ``generate_texts`` does)."""
    return {
        "examples": list(entry.examples),
        "prompt_sha256": [hashlib.sha256(p.encode()).hexdigest()[:16] for p in entry.prompts],
        "truncated_tokens": truncated,
    }


def _raw(questions: Sequence[ModelQuestion], chosen: dict) -> str:
    texts = {q.id: _text_of(q.options, chosen.get(q.id)) for q in questions}
    return "\n".join(f"{qid}: {text}" for qid, text in texts.items())


def _text_of(options: Sequence[ModelOption], value) -> str:
    return next((o.text for o in options if o.value == value), "")


def _rounded(questions: Sequence[ModelQuestion], scores: dict) -> dict:
    return {q.id: {o.text: round(scores[q.id][o.value], 4) for o in q.options} for q in questions}
