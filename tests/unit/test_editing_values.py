"""ROME's and MEMIT's value optimisation as the reference code does it (kmeng01/rome, kmeng01/memit).

Each test fails on the earlier version that differed from the reference: MEMIT's δ read at
the MLP output instead of the residual stream, a weight decay of ‖δ‖²/‖v‖², an early stop on
the target NLL alone, and a MEMIT key averaging the bare prompt into the context half.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from tests.unit.test_editing import EDIT_MARGIN, margins
from workers.editing.base import edit_applied
from workers.editing.keys import balanced_key, layer_output_at_lookup, lookup_keys
from workers.editing.passages import hparams_for
from workers.editing.templates import context_templates
from workers.editing.values import BLOCK_OUTPUT, MLP_OUTPUT, optimise_delta

# The reference's MEMIT values for GPT-2 XL (hparams/MEMIT/gpt2-xl.json): a δ bounded by 0.75
# of the vector it is added to. Relative to the MLP's output that is too small to edit anything.
STOP_DECAY, STOP_LOSS = 1.0, 0.5  # on the tiny model: target NLL ≈ 0.2, whole loss ≈ 1.3
REFERENCE_MEMIT = {"clamp_norm_factor": 0.75, "v_weight_decay": 0.5, "v_lr": 0.5, "v_steps": 20}


def test_memit_reads_delta_at_the_residual_stream_and_edits_with_the_reference_bound(
    tiny_lm, worker_settings, edit_requests
):
    hp = replace(hparams_for(tiny_lm, "memit"), **REFERENCE_MEMIT)
    prompts = [r.filled_prompt for r in edit_requests]
    residual = layer_output_at_lookup(tiny_lm, hp.layers[-1], edit_requests, hp.fact_token).norm(dim=1)
    with edit_applied(tiny_lm, "memit", edit_requests, hp) as applied:
        assert min(margins(tiny_lm, prompts, [r.target_new for r in edit_requests])) > EDIT_MARGIN
    base = torch.tensor(applied.details["base_norm"])
    assert torch.allclose(base, residual, rtol=1e-4), (base, residual)
    assert max(applied.details["relative_delta"]) <= REFERENCE_MEMIT["clamp_norm_factor"] + 1e-4


def test_delta_is_bounded_relative_to_the_vector_it_is_read_at(tiny_lm, worker_settings, edit_requests):
    hp = replace(hparams_for(tiny_lm, "rome"), clamp_norm_factor=0.1, v_steps=5, v_stop_loss=0.0)
    request = edit_requests[0]
    templates = context_templates(tiny_lm, hp.context_templates)
    for at in (MLP_OUTPUT, BLOCK_OUTPUT):
        value = optimise_delta(tiny_lm, request, 1, templates, hp, at=at)
        assert float(value.delta.norm()) == pytest.approx(0.1 * value.base_norm, rel=1e-4)
    mlp = optimise_delta(tiny_lm, request, 1, templates, hp, at=MLP_OUTPUT)
    residual = layer_output_at_lookup(tiny_lm, 1, [request], hp.fact_token).norm()
    assert mlp.base_norm < float(residual) / 2  # the two bounds really differ on this model


def test_weight_decay_is_the_norm_over_the_squared_base_norm(tiny_lm, worker_settings, edit_requests):
    hp = replace(hparams_for(tiny_lm, "rome"), kl_factor=0.0, v_stop_loss=0.0, v_steps=3)
    templates = context_templates(tiny_lm, hp.context_templates)
    value = optimise_delta(tiny_lm, edit_requests[0], 1, templates, hp)
    decay = hp.v_weight_decay * float(value.delta.norm()) / value.base_norm**2
    assert value.delta.norm() > 0 and value.loss == pytest.approx(value.target_nll + decay, rel=1e-5)


def test_the_early_stop_looks_at_the_whole_loss(tiny_lm, worker_settings, edit_requests):
    """A heavy decay keeps the whole loss above the threshold after the target NLL is below it:
    the optimisation goes on (a stop on the NLL alone ended it early)."""
    hp = replace(hparams_for(tiny_lm, "rome"), v_weight_decay=STOP_DECAY, v_stop_loss=STOP_LOSS)
    templates = context_templates(tiny_lm, hp.context_templates)
    value = optimise_delta(tiny_lm, edit_requests[0], 1, templates, hp)
    assert value.steps == hp.v_steps
    assert value.target_nll < STOP_LOSS < value.loss


def test_memit_key_halves_the_bare_prompt_and_the_other_prefixes(tiny_lm, worker_settings, edit_requests):
    hp = hparams_for(tiny_lm, "memit")
    templates = context_templates(tiny_lm, hp.context_templates)
    request = edit_requests[0]
    keys = lookup_keys(tiny_lm, 0, request, templates, hp.fact_token)
    key = balanced_key(tiny_lm, 0, request, templates, hp.fact_token)
    assert torch.allclose(key, (keys[0] + keys[1:].mean(0)) / 2, atol=1e-6)
    assert not torch.allclose(key, (keys[0] + keys.mean(0)) / 2, atol=1e-6)
