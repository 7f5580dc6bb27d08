"""FT-L (every target token scored at the prompt's end, as the reference) and FT-M (teacher-forced)."""

from __future__ import annotations

import pytest
import torch

from tests.lm_fixtures import edit_record
from workers.editing.base import edit_applied
from workers.editing.encoding import encode
from workers.editing.ft import target_loss
from workers.editing.passages import hparams_for
from workers.editing.requests import parse_edit_request

TWO_TOKENS = "Lisbon Vienna"  # a target of several tokens for the tiny model


def nll_pieces(lm, prompt: str, target: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(log p of each target token at the prompt's end, log p of each given the ones before it)."""
    ids = lm.tokenizer(f" {target}", add_special_tokens=False)["input_ids"]
    prompt_ids = lm.tokenizer(prompt)["input_ids"]
    with torch.no_grad():
        logits = lm.model(torch.tensor([prompt_ids + ids])).logits[0].float()
    log_probs = torch.log_softmax(logits, dim=-1)
    at_end = log_probs[len(prompt_ids) - 1, ids]
    forced = log_probs[torch.arange(len(ids)) + len(prompt_ids) - 1, ids]
    return at_end, forced


def losses(lm, request) -> tuple[float, float]:
    encoded = encode(lm, [f"{request.filled_prompt} {request.target_new}"])
    mask = encoded.tokens_after([len(request.filled_prompt)])
    with torch.no_grad():
        logits = lm.model(**encoded.inputs).logits
    return (
        float(target_loss(logits, encoded, mask, teacher_forced=False)),
        float(target_loss(logits, encoded, mask, teacher_forced=True)),
    )


def test_ft_l_scores_every_target_token_at_the_prompts_end_and_ft_m_teacher_forces(tiny_lm):
    request = parse_edit_request(edit_record("two", "Lake Tolvik", TWO_TOKENS, "Paris"))
    at_end, forced = nll_pieces(tiny_lm, request.filled_prompt, TWO_TOKENS)
    assert len(at_end) >= 2
    ft_l, ft_m = losses(tiny_lm, request)
    assert ft_l == pytest.approx(float(-at_end.mean()), rel=1e-5)
    assert ft_m == pytest.approx(float(-forced.mean()), rel=1e-5)
    assert abs(ft_l - ft_m) > 0.1


def test_ft_l_and_ft_m_agree_on_single_token_targets(tiny_lm, edit_requests):
    ft_l, ft_m = losses(tiny_lm, edit_requests[0])
    assert ft_l == pytest.approx(ft_m, rel=1e-6)


def test_ft_m_is_offered_by_name_and_learns_the_whole_target(tiny_lm, worker_settings):
    request = parse_edit_request(edit_record("two", "Lake Tolvik", TWO_TOKENS, "Paris"))
    hp = hparams_for(tiny_lm, "ft_m")
    _, forced_before = nll_pieces(tiny_lm, request.filled_prompt, TWO_TOKENS)
    with edit_applied(tiny_lm, "ft_m", [request], hp) as applied:
        _, forced_after = nll_pieces(tiny_lm, request.filled_prompt, TWO_TOKENS)
    assert (applied.method, applied.system, hp.file) == ("ft_m", "FT_M", "tiny-gpt2.json")
    assert float(-forced_after.mean()) < float(-forced_before.mean()) / 4
