"""The workers' fast paths keep their results: statistics read once, batches equal to single rows."""

from __future__ import annotations

import dataclasses
import os

import pytest
import torch

from workers.editing.base import edit_applied
from workers.editing.passages import hparams_for
from workers.editing.stats import CACHE
from workers.lm.generation import GenerationRequest, Sampling, generate_texts


def top_token(lm, prompt: str) -> str:
    inputs = lm.tokenizer([prompt], return_tensors="pt")
    with torch.no_grad():
        logits = lm.model(**inputs).logits[0, -1]
    return lm.tokenizer.decode([int(logits.argmax())]).strip()


@pytest.fixture
def rome_hparams(tiny_lm, worker_settings, tmp_path):
    """ROME on the tiny model with its statistics in a fresh directory (a small token budget)."""
    worker_settings.EDITING_STATS_DIR = tmp_path
    return dataclasses.replace(hparams_for(tiny_lm, "rome"), stats_tokens=3000)


def test_repeated_edits_read_the_key_statistics_once(tiny_lm, rome_hparams, edit_requests):
    passes, reads = CACHE.corpus_passes, CACHE.file_reads
    for request in edit_requests[:2] * 2:
        with edit_applied(tiny_lm, "rome", [request], rome_hparams):
            assert top_token(tiny_lm, request.filled_prompt) == request.target_new
    assert CACHE.corpus_passes == passes + 1  # one pass over the corpus, on the first edit
    assert CACHE.file_reads == reads + 1  # and the file it wrote read once, not per edit


def test_a_rewritten_statistics_file_is_read_again(tiny_lm, rome_hparams, edit_requests, tmp_path):
    with edit_applied(tiny_lm, "rome", edit_requests[:1], rome_hparams):
        pass
    reads = CACHE.file_reads
    (cached,) = (tmp_path / tiny_lm.spec.tag).iterdir()
    later = cached.stat().st_mtime_ns + 10**9
    os.utime(cached, ns=(later, later))  # as if another process had written it anew
    with edit_applied(tiny_lm, "rome", edit_requests[:1], rome_hparams):
        pass
    assert CACHE.file_reads == reads + 1


def test_one_rome_call_applies_each_of_several_requests(tiny_lm, rome_hparams, edit_requests):
    tolvik, _, corvin = edit_requests
    with edit_applied(tiny_lm, "rome", [tolvik, corvin], rome_hparams) as applied:
        assert [top_token(tiny_lm, r.filled_prompt) for r in (tolvik, corvin)] == ["Rome", "Prague"]
    assert [edit["case_id"] for edit in applied.details["edits"]] == ["tolvik", "corvin"]
    assert top_token(tiny_lm, tolvik.filled_prompt) == "Paris"  # restored


def test_greedy_rows_give_the_same_text_in_a_batch_as_alone(tiny_lm):
    prompts = [
        "Lake Tolvik is located in",
        "The teacher",
        "My neighbour walked to the river in the morning. The baker",
        "Fort Corvin can be found in",
        "A",
        "Visitors to Oslo often see",
    ]
    requests = [
        GenerationRequest(prompt, seed=0, sampling=Sampling(top_p=0.0), max_new_tokens=8 + 2 * i)
        for i, prompt in enumerate(prompts)
    ]
    batched = generate_texts(tiny_lm, requests, batch_size=len(requests))
    alone = [generate_texts(tiny_lm, [request], batch_size=1)[0] for request in requests]
    assert batched == alone
    assert batched[0].text.strip().startswith("Paris")
    assert len({g.text for g in batched}) == len(batched)
