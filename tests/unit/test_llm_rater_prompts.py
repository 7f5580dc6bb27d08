"""LLM raters without a database: each kind's closed questions and their way back into the
kind's answer, the prompt builder, the choice of few-shot examples, the free-text parser,
and the answers' log-probabilities against a computation by hand on the tiny model."""

from __future__ import annotations

import json
import random

import pytest

from annotation.kinds import get_kind
from annotation.kinds.base import ModelOption, ModelQuestion, ModelTask
from annotation.services.analysis.model_answers import HumanExample
from tests.kinds import kind_item
from tests.rater_cases import CASES
from tests.rater_cases import PAIRWISE_PAYLOAD as PAIRWISE
from workers.raters.prompts import build_prompt, choose_examples, parse_option, prepare_examples, shots_for


def _items(kind: str):
    case = CASES[kind]
    return [
        kind_item(kind, payload, config=case.config, external_id=f"{kind}-{n}")
        for n, payload in enumerate(case.payloads)
    ]


@pytest.mark.parametrize("kind", sorted(CASES))
def test_a_persons_answer_goes_to_choices_and_back_unchanged(kind):
    """model_choices then answer_from_model is the identity on valid answers: the questions
    cover the whole answer, and the kind accepts what comes back."""
    task_kind = get_kind(kind)
    for item, (answer, state) in zip(_items(kind), CASES[kind].human, strict=True):
        stored = task_kind.validate_answer(item, answer, state=state)
        state = state or task_kind.prepare_assignment(item, random.Random(1))
        task = task_kind.model_task(item, state)
        choices = task_kind.model_choices(item, state, stored)
        ids = {q.id for q in task.questions}
        assert set(choices) <= ids
        for question in task.questions:
            if question.id in choices:
                assert choices[question.id] in {o.value for o in question.options}, question.id
        rebuilt = task_kind.answer_from_model(item, state, choices)
        assert task_kind.validate_answer(item, rebuilt, state=state) == stored


@pytest.mark.parametrize("kind", sorted(CASES))
def test_the_material_is_the_page_and_nothing_hidden(kind):
    task_kind = get_kind(kind)
    item = _items(kind)[0]
    if kind == "ranking":  # texts that do not name their systems, so a leak would show
        passages = [{"system": s, "text": f"Passage number {i}."} for i, s in enumerate(SYSTEMS)]
        item = kind_item(kind, {"fact": "Mount Quen is in Oslo.", "passages": passages})
    state = task_kind.prepare_assignment(item, random.Random(2))
    task = task_kind.model_task(item, state)
    hidden = {
        "ranking": SYSTEMS,
        "plausibility": ["cot-model-a", "posthoc-model-b"],
        "simulation": ["model_followup_answer"],
        "questionnaire": ["rome", "s0-ft", "s0-gpt"],  # systems, passage ids
    }.get(kind, [])
    text = task.material + json.dumps([q.text for q in task.questions])
    for secret in hidden:
        assert secret not in text
    assert task.questions and all(len(q.options) >= 2 for q in task.questions)


SYSTEMS = ["sys-alpha-31", "sys-beta-47", "sys-gamma-59"]


def test_the_simulation_prompt_is_the_same_whatever_the_models_follow_up_answer():
    kind = get_kind("simulation")
    payload = CASES["simulation"].payloads[0]
    prompts = []
    for answer in ("yes", "no"):
        item = kind_item("simulation", {**payload, "model_followup_answer": answer})
        task = kind.model_task(item, {})
        prompts.append(build_prompt("Guess what the AI says.", task, task.questions[0]))
    assert prompts[0] == prompts[1]
    assert payload["followup_question"] in prompts[0] and payload["model_explanation"] in prompts[0]


def test_a_pairwise_simulation_asks_for_a_response_and_hides_the_models_choice_on_the_follow_up():
    kind = get_kind("simulation")
    tasks = [
        kind.model_task(kind_item("simulation", {**PAIRWISE, "model_followup_answer": answer}), {})
        for answer in ("response_1", "response_2")
    ]
    assert tasks[0] == tasks[1]
    (question,) = tasks[0].questions
    assert [o.text for o in question.options] == ["response 1", "response 2", "either"]
    assert [o.value for o in question.options] == ["response_1", "response_2", "either"]
    assert "The AI chose: Response 1" in tasks[0].material  # the starter's choice is shown
    assert all(text in tasks[0].material for text in PAIRWISE["followup_responses"])
    answer = kind.answer_from_model(kind_item("simulation", PAIRWISE), {}, {"choice": "either"})
    assert kind.validate_answer(kind_item("simulation", PAIRWISE), answer) == {"choice": "either"}


def test_ranking_letters_follow_the_drawn_order_and_a_tie_is_settled_by_the_scores():
    kind = get_kind("ranking")
    item = _items("ranking")[0]
    state = {"shown": ["gpt", "rome", "ft"]}
    task = kind.model_task(item, state)
    assert (
        task.material.index("wrote gpt") < task.material.index("wrote rome") < task.material.index("wrote ft")
    )
    chosen = {"consistency.most": "B", "consistency.least": "B", "fluency.most": "A", "fluency.least": "C"}
    scores = {"consistency.least": {"A": -3.0, "B": -1.0, "C": -2.0}}
    answer = kind.answer_from_model(item, state, chosen, scores)
    assert answer["choices"]["consistency"] == {"most": "rome", "least": "ft"}
    assert answer["choices"]["fluency"] == {"most": "gpt", "least": "ft"}


def test_claim_evidence_falls_back_to_the_likeliest_sentence_and_neutral_takes_none():
    kind = get_kind("claim")
    item = _items("claim")[0]
    no_yes = {"label": "supports", "evidence.0": "no", "evidence.1": "no", "evidence.2": "no"}
    scores = {f"evidence.{i}": {"yes": -float(3 - i), "no": -1.0} for i in range(3)}
    assert kind.answer_from_model(item, {}, no_yes, scores) == {"label": "supports", "evidence": [2]}
    neutral = {**no_yes, "label": "neutral", "evidence.1": "yes"}
    assert kind.answer_from_model(item, {}, neutral) == {"label": "neutral", "evidence": []}


def test_the_prompt_has_the_instructions_the_examples_then_the_item_and_its_allowed_answers():
    options = (ModelOption(1, "1", "Strongly disagree"), ModelOption(2, "2", "Agree"))
    question = ModelQuestion("ratings.q", "ratings.q", "Is it fine?", options)
    task = ModelTask("THE ITEM", (question,))
    shot_task = ModelTask("OTHER ITEM", (question,))
    from workers.raters.prompts import Shot

    prompt = build_prompt(
        "Read **carefully**.", task, question, [Shot(shot_task.material, question, options[1], "o")]
    )
    assert prompt.index("Read **carefully**.") < prompt.index("OTHER ITEM") < prompt.index("THE ITEM")
    assert (
        "OTHER ITEM\n\nQuestion: Is it fine?\nAllowed answers: 1 (Strongly disagree); 2 (Agree)\nAnswer: 2"
        in prompt
    )
    assert prompt.endswith(
        "Question: Is it fine?\nAllowed answers: 1 (Strongly disagree); 2 (Agree)\nAnswer:"
    )


def test_examples_never_come_from_the_item_itself_and_are_seeded():
    kind = get_kind("claim")
    items = _items("claim")
    for n, item in enumerate(items):
        item.pk = n + 1
    examples = [
        HumanExample(item, {}, answer) for item, (answer, _) in zip(items, CASES["claim"].human, strict=True)
    ]
    examples += [HumanExample(items[0], {}, {"label": "neutral", "evidence": []})]
    for seed in range(20):
        chosen = choose_examples(examples, items[0].pk, 2, random.Random(seed))
        assert len(chosen) == 2 and all(e.item.pk != items[0].pk for e in chosen)
        assert len({e.item.pk for e in chosen}) == 2  # different items before a second answer of one
    assert choose_examples(examples, 2, 3, random.Random(4)) == choose_examples(
        examples, 2, 3, random.Random(4)
    )
    task = kind.model_task(items[0], {})
    shots = shots_for(
        task.questions[1], prepare_examples(kind, [examples[2]]), random.Random(0)
    )  # evidence.0 of item 3
    assert [(s.question.id, s.answer.value, s.item_id) for s in shots] == [("evidence.0", "yes", "claim-2")]


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (" supports", "supports"),
        ("Contradicts. Sentence 2 says so.", "contradicts"),
        ("the answer is neutral", "neutral"),
        ("  \n response 2\n", "response 2"),
        ("I have no idea", None),
        ("The old man walked to the river.", None),
        ("", None),
        ("not helpful", "not helpful"),
    ],
)
def test_free_text_is_parsed_into_an_allowed_answer_or_none(output, expected):
    options = [ModelOption(v, v) for v in ("supports", "contradicts", "neutral", "response 1", "response 2")]
    options += [ModelOption("not_helpful", "not helpful"), ModelOption("no", "no")]
    parsed = parse_option(output, options)
    assert (parsed.text if parsed else None) == expected


def test_answer_logprobs_equal_a_computation_by_hand_at_any_batch_size(tiny_lm):
    import torch

    from workers.lm.scoring import score_targets

    requests = [
        ("Lake Tolvik is located in", ["Paris", "Rome", "the red door"]),
        ("The baker", ["walked to", "x"]),
    ]
    by_hand = []
    for prompt, answers in requests:
        values = []
        for answer in answers:
            prompt_ids = tiny_lm.tokenizer(prompt)["input_ids"]
            ids = prompt_ids + tiny_lm.tokenizer(f" {answer}", add_special_tokens=False)["input_ids"]
            with torch.no_grad():
                logprobs = torch.log_softmax(tiny_lm.model(torch.tensor([ids])).logits[0].float(), -1)
            values.append(sum(float(logprobs[p - 1, ids[p]]) for p in range(len(prompt_ids), len(ids))))
        by_hand.append(values)
    for batch_size in (1, 3, 8):
        scored = [
            result.sums()
            for result in score_targets(tiny_lm, requests, batch_size=batch_size, padding_side="left")
        ]
        for got, expected in zip(scored, by_hand, strict=True):
            assert got == pytest.approx(expected, abs=1e-3)
    assert max(range(3), key=lambda i: scored[0][i]) == 0  # the tiny model knows Paris


def test_rate_llm_parameters_get_their_defaults_and_a_bad_one_is_named():
    from annotation.errors import InputError
    from annotation.services.jobs import check_job_parameters

    assert check_job_parameters("rate_llm", {"model": "tiny-gpt2"}) == {
        "model": "tiny-gpt2",
        "shots": 0,
        "seed": 0,
        "scoring": "logprob",
        "batch_size": 8,
        "max_new_tokens": 8,
    }
    with pytest.raises(InputError) as caught:
        check_job_parameters("rate_llm", {"model": "m", "shots": 99, "scoring": "vibes"})
    assert set(caught.value.errors) == {"parameters.shots", "parameters.scoring"}
    with pytest.raises(InputError) as caught:
        check_job_parameters("rate_llm", {"model": "m", "temperature": 1})
    assert set(caught.value.errors) == {"parameters.temperature"}


class SpaceMarkTokenizer:
    """Characters as tokens, with a SentencePiece-style space mark added in front of every text."""

    def __call__(self, text: str, add_special_tokens: bool = True) -> dict:
        marked = "▁" + text.replace(" ", "▁")
        return {"input_ids": ([1] if add_special_tokens else []) + [ord(c) for c in marked]}


def test_answer_tokens_are_those_that_follow_the_prompt_in_the_whole_text():
    from workers.lm.scoring import split_tokens

    prompt_ids, answers = split_tokens(SpaceMarkTokenizer(), "Q:", ["yes", "no"])
    assert prompt_ids == [1, ord("▁"), ord("Q"), ord(":")]
    # one space mark before each answer, not the two that tokenizing " yes" alone gives
    assert answers == [[ord(c) for c in "▁yes"], [ord(c) for c in "▁no"]]
