"""The one log-probability scorer (workers/lm/scoring.py) against a plain computation.

The reference here is the obvious one: per (prompt, target), one forward pass over the
whole text alone, unpadded, and the log-probability of each target token read at the
position before it. The scorer batches, pads on either side, reads a shared next-token
distribution for targets that differ only in their last token, and computes only the
logits it needs: none of that may change a number.
"""

from __future__ import annotations

import pytest
import torch

from workers.lm.scoring import score_targets, token_log_probs
from workers.lm.tokens import kept_positions, padded, tokenized, truncated

REQUESTS = [
    ("Lake Tolvik is located in", ["Paris", "Rome", "the red door"]),  # mixed lengths: a row each
    ("The baker", ["walked to", "x"]),
    ("Is the sky green? Answer:", ["yes", "no"]),  # one token each: one shared row
    ("Rate it from 1 to 5. The teacher walked to the river and sat down. Rating:", ["1", "2", "3", "4", "5"]),
    ("The", ["teacher walked to the river", "old man"]),
    ("Fort Marrow is in Paris. Port Halden is in Rome. The old man walked to the door and", ["said", "left"]),
]


def plain_token_log_probs(lm, prompt: str, target: str, *, limit: int | None = None) -> list[float]:
    """One unpadded forward over ``prompt + " " + target``; the target's tokens are what
    follows the prompt's. With ``limit``, the prompt's content loses its beginning so the
    whole fits (the BOS mark stays)."""
    tokenizer = lm.tokenizer
    prompt_ids = tokenizer(prompt)["input_ids"]
    whole = tokenizer(f"{prompt} {target}")["input_ids"]
    assert whole[: len(prompt_ids)] == prompt_ids  # byte-level BPE: the prompt tokenizes alike
    target_ids = whole[len(prompt_ids) :]
    if limit is not None and len(whole) > limit:
        prompt_ids = prompt_ids[:1] + prompt_ids[len(whole) - limit + 1 :]
    ids = prompt_ids + target_ids
    with torch.no_grad():
        logprobs = torch.log_softmax(lm.model(torch.tensor([ids])).logits[0].float(), dim=-1)
    return [float(logprobs[p - 1, ids[p]]) for p in range(len(prompt_ids), len(ids))]


@pytest.mark.parametrize("padding_side", ["left", "right"])
@pytest.mark.parametrize("batch_size", [1, 3, 16])
def test_token_log_probs_sums_and_means_equal_one_plain_forward_per_pair(tiny_lm, padding_side, batch_size):
    expected = [[plain_token_log_probs(tiny_lm, prompt, t) for t in targets] for prompt, targets in REQUESTS]
    scored = score_targets(tiny_lm, REQUESTS, batch_size=batch_size, padding_side=padding_side)
    assert len(scored) == len(REQUESTS)
    for result, tokens in zip(scored, expected, strict=True):
        assert result.truncated == 0
        assert [len(values) for values in result.tokens] == [len(values) for values in tokens]
        for got, want in zip(result.tokens, tokens, strict=True):
            assert got == pytest.approx(want, abs=1e-4)
        assert result.sums() == pytest.approx([sum(v) for v in tokens], abs=1e-4)
        assert result.means() == pytest.approx([sum(v) / len(v) for v in tokens], abs=1e-4)
    assert any(len(values) > 2 for result in scored for values in result.tokens)  # lengths do vary


def test_a_prompt_longer_than_the_model_loses_its_beginning_and_keeps_its_bos(tiny_lm):
    story = " ".join(["The old man walked to the river and sat down by the door."] * 30)
    prompt = f"{story} The teacher walked to"
    limit = tiny_lm.max_positions
    assert len(tiny_lm.tokenizer(prompt)["input_ids"]) > limit
    for targets in (["the", "a"], ["the river", "a"]):  # a shared row, then a row per target
        for side in ("left", "right"):
            [result] = score_targets(tiny_lm, [(prompt, targets)], padding_side=side)
            expected = [plain_token_log_probs(tiny_lm, prompt, t, limit=limit) for t in targets]
            for got, want in zip(result.tokens, expected, strict=True):
                assert got == pytest.approx(want, abs=1e-4)
            assert result.truncated > 0
    # "the" is scored alike whether it shares a row with "a" or has one of its own
    shared, alone = (score_targets(tiny_lm, [(prompt, t)])[0] for t in (["the", "a"], ["the", "a river"]))
    assert shared.tokens[0] == pytest.approx(alone.tokens[0], abs=1e-5)


def test_scoring_leaves_the_shared_tokenizer_as_it_was(tiny_lm):
    from workers.editing.encoding import encode
    from workers.lm.generation import GenerationRequest, generate_texts

    tokenizer = tiny_lm.tokenizer
    tokenizer.padding_side, tokenizer.truncation_side = "left", "right"
    long_prompt = "The old man walked to the river. " * 40
    score_targets(tiny_lm, [(long_prompt, ["yes", "no"])], padding_side="right")
    encode(tiny_lm, [long_prompt, "The baker"])
    generate_texts(tiny_lm, [GenerationRequest(long_prompt, seed=1, max_new_tokens=2)])
    assert (tokenizer.padding_side, tokenizer.truncation_side) == ("left", "right")


def test_token_log_probs_read_each_token_at_the_position_before_it():
    probabilities = torch.tensor([[[0.5, 0.25, 0.25], [0.1, 0.8, 0.1], [1 / 3, 1 / 3, 1 / 3]]])
    values = token_log_probs(torch.log(probabilities), torch.tensor([[2, 1, 0]]))
    # position 0 predicts token 1 (id 1), position 1 predicts token 2 (id 0)
    assert torch.exp(values)[0].tolist() == pytest.approx([0.25, 0.1])


def test_truncation_cuts_the_content_on_the_side_asked_and_keeps_special_marks():
    special = {0, 9}
    ids = [0, 1, 2, 3, 4, 5, 9]
    assert truncated(ids, 4, cut="left", special_ids=special) == [0, 4, 5, 9]
    assert truncated(ids, 4, cut="right", special_ids=special) == [0, 1, 2, 9]
    assert truncated(ids, 7, cut="left", special_ids=special) == ids
    assert kept_positions([1, 2, 3], 2, cut="left", special_ids=special) == [1, 2]


@pytest.mark.parametrize("side", ["left", "right"])
def test_padding_by_hand_counts_positions_from_each_rows_first_token(side):
    batch = padded([[5, 6, 7], [8]], pad_id=0, side=side)
    if side == "left":
        assert batch.input_ids.tolist() == [[5, 6, 7], [0, 0, 8]] and batch.offsets == (0, 2)
    else:
        assert batch.input_ids.tolist() == [[5, 6, 7], [8, 0, 0]] and batch.offsets == (0, 0)
    assert batch.attention_mask.sum(1).tolist() == [3, 1]
    real = batch.position_ids[batch.attention_mask.bool()].tolist()
    assert real == [0, 1, 2, 0]


@pytest.mark.parametrize(("cut", "pad"), [("left", "left"), ("left", "right"), ("right", "right")])
def test_tokenizing_by_hand_gives_what_the_tokenizer_set_to_those_sides_gives(tiny_lm_dir, cut, pad):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_lm_dir))  # its own copy: its sides are set below
    tokenizer.padding_side, tokenizer.truncation_side = pad, cut
    texts = ["The old man walked to the river. " * count for count in (1, 3, 9)] + ["Paris"]
    expected = tokenizer(texts, padding=True, truncation=True, max_length=40, return_tensors="pt")
    batch = tokenized(tokenizer, texts, limit=40, cut=cut, pad=pad)
    assert torch.equal(batch.input_ids, expected["input_ids"])
    assert torch.equal(batch.attention_mask, expected["attention_mask"])
