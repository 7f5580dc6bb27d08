"""The simulatability pipeline's pure parts: reading answers and follow-ups out of generated
text (strictly: unclear output is unparseable, never guessed), the question file, the
duplicate rules, the versioned prompts, and the jobs' parameters."""

from __future__ import annotations

import json

import numpy as np
import pytest

from annotation.errors import InputError
from annotation.services.jobs import check_job_parameters, check_worker_paths
from workers.simulatability import dedup
from workers.simulatability.parsing import parse_answer, parse_followup
from workers.simulatability.prompts import explain_prompt, followups_prompt, prompt_file
from workers.simulatability.questions import Question, read_questions


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        (" Cats are mammals. So the answer is yes.", "yes"),
        (" Cats are mammals. So the answer is: NO.\n\nQuestion: next", "no"),
        (' Thus, the answer is "yes". More text after it.', "yes"),
        (" The answer is yes. Indeed the answer is yes.", "yes"),
        (" Reasoning.\nSo the answer is **no**", "no"),
    ],
)
def test_cot_answers_are_read_from_the_final_statement(text, answer):
    assert parse_answer(text, "yes_no", "cot").answer == answer


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty output"),
        ("   \n\n So the answer is yes.", "empty output"),  # the block ended before any answer
        (" Cats are mammals. Yes, I think so.", "no final answer"),
        (" So the answer is yes. Wait, the answer is no.", "conflicting answers"),
        (" So the answer is yes or no.", "hedged answer"),
        (" So the answer is yes/no.", "hedged answer"),
        (" So the answer is yesterday's news.", "no final answer"),
        (" The answer is maybe.", "no final answer"),
        (" Nobody knows.\n\nQuestion: x?\nReasoning: So the answer is yes.", "no final answer"),
    ],
)
def test_unclear_cot_outputs_are_unparseable_with_a_reason(text, problem):
    parsed = parse_answer(text, "yes_no", "cot")
    assert parsed.answer is None and parsed.problem == problem


def test_the_cot_explanation_ends_with_the_answer_sentence():
    parsed = parse_answer(" A is B. So the answer is no. Then junk follows", "yes_no", "cot")
    assert parsed.explanation == "A is B. So the answer is no."


@pytest.mark.parametrize(
    ("text", "answer", "explanation"),
    [
        (" Yes. Reason: it flies.", "yes", "it flies."),
        (" no, because fish swim.", "no", "because fish swim."),
        ("Answer: NO. Reason: x.", "no", "x."),
    ],
)
def test_posthoc_answers_come_first(text, answer, explanation):
    parsed = parse_answer(text, "yes_no", "posthoc")
    assert (parsed.answer, parsed.explanation) == (answer, explanation)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (" Unsure. Nobody knows.", "no answer first"),
        (" Yes and no. Reason: it depends.", "hedged answer"),
        (" Yes.", "no explanation"),
        (" Nope, never.", "no answer first"),
        (" Perhaps yes. Reason: x.", "no answer first"),
    ],
)
def test_unclear_posthoc_outputs_are_unparseable(text, problem):
    parsed = parse_answer(text, "yes_no", "posthoc")
    assert parsed.answer is None and parsed.problem == problem


def test_pairwise_answers_name_a_response():
    cot = parse_answer(" It helps. So the better response is Response 2.", "pairwise", "cot")
    assert cot.answer == "response_2"
    assert parse_answer(" Response 1. Reason: it answers.", "pairwise", "posthoc").answer == "response_1"
    hedged = parse_answer(" So the better response is Response 1 or Response 2.", "pairwise", "cot")
    assert hedged.answer is None and hedged.problem == "hedged answer"
    assert parse_answer(" So the better response is Response 3.", "pairwise", "cot").answer is None


def test_a_long_explanation_is_refused_not_cut():
    parsed = parse_answer(" " + "word " * 1200 + "So the answer is yes.", "yes_no", "cot")
    assert parsed.answer is None and parsed.problem == "explanation too long"


@pytest.mark.parametrize(
    ("text", "content", "problem"),
    [
        (" Can a robin  swim?\nFollow-up question: more", {"question": "Can a robin swim?"}, ""),
        (" It is a bird.", None, "not a question"),
        ("\n\nCan a robin swim?", None, "empty output"),
        (" " + "a" * 700 + "?", None, "too long"),
    ],
)
def test_yes_no_followups_are_one_question(text, content, problem):
    parsed = parse_followup(text, "yes_no")
    assert (parsed.content, parsed.problem) == (content, problem)


def test_pairwise_followups_need_a_context_and_two_responses():
    text = " Fix a tap?\nFollow-up response 1: Close the valve.\nFollow-up response 2: Taps are metal.\n\nX"
    assert parse_followup(text, "pairwise").content == {
        "context": "Fix a tap?",
        "responses": ["Close the valve.", "Taps are metal."],
    }
    assert parse_followup(" Fix a tap?\nFollow-up response 1: Close it.", "pairwise").content is None


def _embed(texts: list[str]) -> np.ndarray:
    """A stand-in encoder: texts starting with the same word point the same way."""
    rows = [np.array([1.0, 0.0]) if t.split()[0] == "Can" else np.array([0.0, 1.0]) for t in texts]
    return np.array(rows)


def test_duplicates_and_near_duplicates_are_marked_against_earlier_kept_ones():
    candidates = ["Can a cat swim?", "can a CAT swim", "Can a dog run?", "Is ice cold?", "Is a starter?"]
    verdicts, kept = dedup.classify(candidates, [], starter="Is a starter?", embed=_embed, threshold=0.9)
    assert [v.status for v in verdicts] == ["kept", "duplicate", "near_duplicate", "kept", "duplicate"]
    assert verdicts[1].duplicate_of == 0 and verdicts[2].duplicate_of == 0
    assert verdicts[4].duplicate_of == dedup.STARTER
    assert kept == ["Can a cat swim?", "Is ice cold?"]
    again, _ = dedup.classify(["Can a bird fly?"], kept, starter="x", embed=_embed, threshold=1.01)
    assert again[0].status == "kept"  # a threshold above any cosine keeps everything not repeated


def test_questions_are_read_and_every_bad_line_named(tmp_path):
    good = tmp_path / "q.jsonl"
    good.write_text(
        json.dumps({"id": "a", "question": "Is it?", "answer": "yes"})
        + "\n\n"
        + json.dumps({"id": 2, "context": "Help?", "responses": ["One.", "Two."]})
    )
    first, second = read_questions(good)
    assert (first.variant, first.gold, second.variant, second.id) == ("yes_no", "yes", "pairwise", "2")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        "\n".join(
            [
                json.dumps({"id": "a", "question": "Is it?", "answer": "maybe"}),
                json.dumps({"id": "b", "context": "c", "responses": ["only one"]}),
                json.dumps({"id": "c", "question": " ", "extra": 1}),
                "not json",
                json.dumps({"id": "d", "question": "Fine?"}),
                json.dumps({"id": "d", "question": "Again?"}),
            ]
        )
    )
    with pytest.raises(InputError) as caught:
        read_questions(bad)
    fields = " ".join(caught.value.errors)
    for expected in ("line 1: answer", "line 2: responses", "line 3: extra", "line 4", "line 6: id"):
        assert expected in fields
    with pytest.raises(InputError, match="no such file"):
        read_questions(tmp_path / "missing.jsonl")


def test_prompts_carry_their_version_and_end_open():
    question = Question("q", "yes_no", text="Can a crow fly?")
    assert prompt_file("explain", "yes_no").tag == "explain-yes_no@1"
    assert explain_prompt(question, "cot").endswith("Question: Can a crow fly?\nReasoning:")
    assert explain_prompt(question, "posthoc").endswith("Question: Can a crow fly?\nAnswer:")
    prompt = followups_prompt(question, "yes", "Crows are birds. So the answer is yes.")
    assert prompt.endswith("AI's explanation: Crows are birds. So the answer is yes.\nFollow-up question:")
    pair = Question("p", "pairwise", context="Help?", responses=("One.", "Two."))
    assert explain_prompt(pair, "cot").endswith("Response 2: Two.\nReasoning:")
    assert followups_prompt(pair, "response_1", "E.").endswith("Follow-up context:")


def test_the_jobs_check_their_parameters_and_every_generator_path(settings):
    parameters = check_job_parameters(
        "build_simulation_study", {"questions": "/srv/q.jsonl", "explainer": "m", "generators": ["a", "b"]}
    )
    assert parameters["modes"] == ["cot", "posthoc"] and parameters["n"] == 10
    with pytest.raises(InputError) as caught:
        twice = {"questions": "/q", "explainer": "m", "generators": ["a", "a"]}
        check_job_parameters("counterfactuals", twice)
    assert "parameters.generators" in caught.value.errors
    with pytest.raises(InputError) as caught:
        check_job_parameters("explain", {"questions": "/q", "explainer": "m", "modes": ["cot", "guess"]})
    assert "parameters.modes.1" in caught.value.errors or "parameters.modes" in caught.value.errors
    settings.ROFT_MODEL_ROOTS, settings.ROFT_CORPUS_ROOTS = ["/models"], ["/srv"]
    check_worker_paths("counterfactuals", {"questions": "/srv/q.jsonl", "generators": ["gpt2", "/models/x"]})
    with pytest.raises(InputError) as caught:
        check_worker_paths("counterfactuals", {"questions": "/srv/q.jsonl", "generators": ["gpt2", "/etc/x"]})
    assert list(caught.value.errors) == ["parameters.generators"]


def test_the_documented_example_question_file_reads():
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "docs" / "examples" / "simulation-questions.jsonl"
    questions = read_questions(path)
    assert {q.variant for q in questions} == {"yes_no", "pairwise"}
    assert any(not q.gold for q in questions)  # a question without gold (no plausibility item)


def test_a_plausibility_question_is_kept_up_to_the_kind_s_limit_and_skipped_past_it(tmp_path):
    """The limit is the plausibility payload's own (no copy of it to drift)."""
    from annotation.kinds import get_kind
    from annotation.models import ModelExplanation
    from workers.simulatability.study import plausibility_item

    limit = get_kind("plausibility").Payload().fields["question"].max_length

    def item_for(length: int) -> dict | None:
        question = {"id": "q1", "question": "x" * length, "answer": "yes"}
        explanation = ModelExplanation(
            question_id="q1", question=question, variant="yes_no", model=str(tmp_path), mode="cot",
            prompt_version="v1", explanation="Because.", answer="yes", decoding={}, seed=1,
        )  # fmt: skip
        return plausibility_item(question, [explanation])

    assert item_for(limit)["payload"]["question"] == "x" * limit
    assert item_for(limit + 1) is None
