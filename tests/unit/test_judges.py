"""The pure parts of a judge behind an endpoint: the vote, a reply's reading, the model
family, the seeds per sample, the estimate and the base URL's check."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from rest_framework import serializers

from annotation.errors import InputError
from annotation.job_parameters import judge_base_url
from annotation.kinds.base import ModelOption, ModelQuestion
from annotation.services.analysis.judges import estimate_tokens, model_family
from workers.raters.endpoint import CallFailed, _majority, read_reply, sample_seed, winner

PICK = ModelQuestion(
    "p", "p", "Which?", (ModelOption("A", "A"), ModelOption("B", "B"), ModelOption("tie", "tie"))
)
SCALE = ModelQuestion("s", "s", "How?", tuple(ModelOption(n, str(n)) for n in (1, 2, 3)))


def test_the_most_voted_option_wins_and_equal_votes_are_a_tie_where_the_question_has_one():
    assert winner(PICK, Counter({"A": 4, "B": 2})) == "A"
    assert winner(PICK, Counter({"A": 3, "B": 3})) == "tie"
    assert winner(SCALE, Counter({3: 2, 2: 2})) == 2  # no tie option: the first in the question's order
    assert _majority(Counter({"A": 2, "B": 1})) == "A" and _majority(Counter({"A": 1, "B": 1})) is None


def reply(message: dict, **extra) -> str:
    return json.dumps({"model": "m-1", "choices": [{"message": message, "finish_reason": "stop"}], **extra})


def test_a_reply_is_read_and_malformed_or_refused_ones_are_failed_calls():
    read = read_reply(reply({"content": "B"}, system_fingerprint="fp"))
    assert (read.text, read.model, read.fingerprint) == ("B", "m-1", "fp")
    for raw in (
        '{"choices": [',
        "[]",
        json.dumps({"choices": []}),
        json.dumps({"choices": [{"message": "B"}]}),
        reply({"content": None, "refusal": "no"}),
    ):
        with pytest.raises(CallFailed):
            read_reply(raw)
    filtered = json.dumps({"choices": [{"message": {"content": ""}, "finish_reason": "content_filter"}]})
    with pytest.raises(CallFailed, match="refused"):
        read_reply(filtered)


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("gpt-4o", "openai"),
        ("gpt2-xl", "openai"),
        ("meta-llama/Llama-3.1-8B-Instruct", "meta"),
        ("llama3:8b", "meta"),
        ("Qwen/Qwen2.5-7B", "alibaba"),
        ("claude-3-5-sonnet", "anthropic"),
        ("gemma-2-9b", "google"),
        ("optimus-prime", "optimus"),  # "opt" only as a whole word
        ("rome", "rome"),
    ],
)
def test_a_models_family_is_its_makers(name, family):
    assert model_family(name) == family


def test_each_sample_gets_its_own_seed_and_the_estimate_counts_calls_and_tokens():
    assert len({sample_seed(7, n) for n in range(20)}) == 20 and all(
        0 <= sample_seed(7, n) < 2**31 for n in range(3)
    )
    estimate = estimate_tokens([40, 41], items=1, samples=3, max_tokens=5)
    assert (estimate.calls, estimate.prompt_tokens, estimate.reply_tokens, estimate.tokens) == (6, 63, 30, 93)
    estimate.check_cap(93)
    with pytest.raises(InputError, match="above the cap of 92"):
        estimate.check_cap(92)


def test_a_base_url_is_http_without_credentials_and_within_the_allowed_ones(settings):
    assert judge_base_url(" http://127.0.0.1:8000/v1/ ") == "http://127.0.0.1:8000/v1"
    for bad in (
        "ftp://x/v1",
        "http://user:pw@x/v1",
        "http://x/v1?key=1",
        "localhost:8000",
        "http://x/" + "v" * 500,
    ):
        with pytest.raises(serializers.ValidationError):
            judge_base_url(bad)
    settings.JUDGE_ALLOWED_URLS = ["https://api.example.com/"]
    assert judge_base_url("https://api.example.com/v1") == "https://api.example.com/v1"
    with pytest.raises(serializers.ValidationError, match="allowed"):
        judge_base_url("https://api.example.com.evil.test/v1")


def test_only_a_pairwise_pick_swaps_the_two_passages():
    from annotation.kinds import get_kind
    from annotation.models import Item, Study
    from tests.factories import validated_config

    kind = get_kind("questionnaire")
    passages = [{"id": "x", "text": "one"}, {"id": "y", "text": "two"}]

    def swapped(pick: dict) -> dict | None:
        study = Study(kind="questionnaire", config=validated_config("questionnaire", {"questions": [pick]}))
        return kind.swapped_state(Item(study=study, payload={"passages": passages}), {"order": ["y", "x"]})

    assert swapped({"id": "p", "type": "pick", "pick": "pairwise", "text": "Which?"}) == {"order": ["x", "y"]}
    assert swapped({"id": "p", "type": "pick", "pick": "best", "text": "Which?"}) is None
    assert get_kind("claim").swapped_state(Item(), {}) is None
