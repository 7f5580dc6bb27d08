"""Model editing on the tiny model: each method does what it claims and is undone exactly."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from tests.tiny_model import next_token_margins
from workers.editing.base import edit_applied
from workers.editing.hparams import load_hparams
from workers.editing.ike import build_prompt
from workers.editing.metrics import preferences, short_form_metrics
from workers.editing.passages import hparams_for
from workers.editing.stats import StatisticsUnavailable, second_moments
from workers.lm.architectures import get_module, module_name

UNRELATED = [  # other subjects in other cities, and plain text
    "Fort Marrow is located in",
    "Port Halden is in",
    "Mount Ostra can be found in",
    "The teacher walked to",
]


EDIT_MARGIN = 1.0  # nats: an edited fact's new target beats every other token by this much


def margins(lm, prompts: list[str], targets: list[str]) -> list[float]:
    """Per prompt, how far (in nats) the target's token leads the runner-up; negative: it is not first.

    The tests assert margins, not bare top tokens, so a machine whose float rounding differs
    a little still passes, while an edit that fails (or only scrapes through) does not.
    """
    return next_token_margins(lm.model, lm.tokenizer, prompts, targets).tolist()


def next_token_distributions(lm, prompts: list[str], prefix: str = "") -> torch.Tensor:
    """(prompts, vocabulary) probabilities of the next token."""
    inputs = lm.tokenizer(
        [prefix + p for p in prompts], return_tensors="pt", padding=True, padding_side="left"
    )
    with torch.no_grad():
        return torch.softmax(lm.model(**inputs).logits[:, -1].float(), dim=-1)


def weights(lm) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in lm.model.named_parameters()}


def changed(lm, saved: dict[str, torch.Tensor]) -> set[str]:
    return {name for name, p in lm.model.named_parameters() if not torch.equal(p, saved[name])}


@pytest.fixture
def tolvik(edit_requests):
    return edit_requests[0]


def test_rome_makes_the_new_target_most_likely_and_leaves_unrelated_prompts(tiny_lm, worker_settings, tolvik):
    prompt = tolvik.filled_prompt
    assert margins(tiny_lm, [prompt], ["Paris"])[0] > EDIT_MARGIN
    unrelated_before = next_token_distributions(tiny_lm, UNRELATED)
    with edit_applied(tiny_lm, "rome", [tolvik], hparams_for(tiny_lm, "rome")):
        assert margins(tiny_lm, [prompt], ["Rome"])[0] > EDIT_MARGIN
        neighbours = tolvik.neighborhood_prompts
        assert min(margins(tiny_lm, neighbours, ["Paris"] * len(neighbours))) > EDIT_MARGIN
        unrelated_after = next_token_distributions(tiny_lm, UNRELATED)
    assert (unrelated_before.argmax(-1) == unrelated_after.argmax(-1)).all()
    drift = (unrelated_before * (unrelated_before.log() - unrelated_after.log())).sum(-1)
    assert drift.max() < 0.1, drift  # KL(before ‖ after) per unrelated prompt, in nats


def test_rome_writes_a_rank_one_update_to_one_projection(tiny_lm, worker_settings, tolvik):
    hp = hparams_for(tiny_lm, "rome")
    saved = weights(tiny_lm)
    name = f"{module_name(tiny_lm.model, 'mlp_out', hp.layer)}.weight"
    with edit_applied(tiny_lm, "rome", [tolvik], hp):
        assert changed(tiny_lm, saved) == {name}
        update = tiny_lm.model.get_parameter(name).detach() - saved[name]
        assert torch.linalg.matrix_rank(update, rtol=1e-4) == 1


def test_memit_applies_several_edits_at_once(tiny_lm, worker_settings, edit_requests):
    hp = hparams_for(tiny_lm, "memit")
    prompts = [r.filled_prompt for r in edit_requests]
    assert min(margins(tiny_lm, prompts, [r.target_true for r in edit_requests])) > EDIT_MARGIN
    saved = weights(tiny_lm)
    with edit_applied(tiny_lm, "memit", edit_requests, hp) as applied:
        assert min(margins(tiny_lm, prompts, [r.target_new for r in edit_requests])) > EDIT_MARGIN
        touched = {f"{module_name(tiny_lm.model, 'mlp_out', layer)}.weight" for layer in hp.layers}
        assert changed(tiny_lm, saved) == touched
    assert applied.details["edits"] == 3 and applied.details["layers"] == [0, 1]


def test_ft_stays_within_its_linf_bound(tiny_lm, worker_settings, tolvik):
    hp = hparams_for(tiny_lm, "ft")
    saved = weights(tiny_lm)
    with edit_applied(tiny_lm, "ft", [tolvik], hp):
        moved = changed(tiny_lm, saved)
        assert moved and all(".mlp.c_proj." in name and ".h.1." in name for name in moved)
        largest = max((tiny_lm.model.get_parameter(n) - saved[n]).abs().max().item() for n in moved)
        assert 0 < largest <= hp.norm_constraint + 1e-7
        assert margins(tiny_lm, [tolvik.filled_prompt], ["Rome"])[0] > EDIT_MARGIN


@pytest.mark.parametrize("method", ["none", "ike", "ft", "ft_m", "rome", "memit"])
def test_weights_are_restored_bit_for_bit(tiny_lm, worker_settings, edit_requests, method):
    saved = weights(tiny_lm)
    with edit_applied(tiny_lm, method, edit_requests[:2], hparams_for(tiny_lm, method)):
        assert bool(changed(tiny_lm, saved)) == (method in ("ft", "ft_m", "rome", "memit"))
    assert changed(tiny_lm, saved) == set()


def test_weights_are_restored_when_the_work_inside_fails(tiny_lm, worker_settings, tolvik):
    saved = weights(tiny_lm)
    hp = hparams_for(tiny_lm, "rome")
    with pytest.raises(RuntimeError, match="generation broke"), edit_applied(tiny_lm, "rome", [tolvik], hp):
        raise RuntimeError("generation broke")
    assert changed(tiny_lm, saved) == set()


def test_ike_builds_its_prompt_and_changes_no_weight(tiny_lm, worker_settings, edit_requests):
    saved = weights(tiny_lm)
    with edit_applied(tiny_lm, "ike", edit_requests[:1], hparams_for(tiny_lm, "ike")) as applied:
        assert changed(tiny_lm, saved) == set()
    prefix = applied.prefix
    assert prefix.count("New fact:") == 3  # two demonstrations, then the request's fact
    assert prefix.endswith(f"New fact: {edit_requests[0].new_fact}\nPrompt: ")
    assert applied.system == "IKE" and applied.details == {"demonstrations": 2}
    assert build_prompt(edit_requests[:1], 0) == f"New fact: {edit_requests[0].new_fact}\nPrompt: "


def test_short_form_metrics_before_and_after_rome(tiny_lm, worker_settings, tolvik):
    before = preferences(tiny_lm, tolvik)
    assert short_form_metrics(tiny_lm, tolvik, before=before) == {
        "efficacy": False,
        "paraphrase_success": 0.0,
        "neighbourhood_success": 1.0,
        "neighbourhood_unchanged": 1.0,
    }
    with edit_applied(tiny_lm, "rome", [tolvik], hparams_for(tiny_lm, "rome")):
        after = short_form_metrics(tiny_lm, tolvik, before=before)
    assert after["efficacy"] is True
    assert after["neighbourhood_unchanged"] == after["neighbourhood_success"] == 1.0


def test_statistics_need_a_corpus_unless_identity_is_chosen(tiny_lm, worker_settings):
    worker_settings.EDITING_STATS_CORPUS = None
    hp = hparams_for(tiny_lm, "rome")
    with pytest.raises(StatisticsUnavailable, match="EDITING_STATS_CORPUS"):
        second_moments(tiny_lm, [1], hp)
    identity = second_moments(tiny_lm, [1], replace(hp, stats="identity"))[1]
    assert torch.equal(identity, torch.eye(identity.shape[0]))


def test_statistics_are_computed_once_then_read_from_disk(tiny_lm, worker_settings, tmp_path):
    worker_settings.EDITING_STATS_DIR = tmp_path
    hp = replace(hparams_for(tiny_lm, "rome"), stats_tokens=3000)
    calls = []
    handle = tiny_lm.model.register_forward_hook(lambda *args: calls.append(1))
    try:
        first = second_moments(tiny_lm, [0, 2], hp)
        passes = len(calls)
        second = second_moments(tiny_lm, [0, 2], hp)
    finally:
        handle.remove()
    assert passes > 0 and len(calls) == passes  # the second call ran no forward pass
    assert torch.equal(first[2], second[2]) and not torch.equal(first[0], first[2])
    files = sorted(p.name for p in (tmp_path / tiny_lm.spec.tag).iterdir())
    assert len(files) == 2 and files[0].startswith("transformer.h.0.mlp.c_proj-")
    width = get_module(tiny_lm.model, module_name(tiny_lm.model, "mlp_out", 0)).weight.shape[0]
    assert first[0].shape == (width, width)


def test_unknown_models_get_the_layer_at_a_third_of_their_depth(settings):
    settings.EDITING_HPARAMS_DIR = None
    assert load_hparams("rome", keys=["never-seen"], num_layers=12).layer == 4
    assert load_hparams("ft", keys=["never-seen"], num_layers=48).layer == 16
    assert load_hparams("memit", keys=["never-seen"], num_layers=12).layers == (0, 1, 2, 3, 4)
    assert load_hparams("rome", keys=["gpt2-xl"], num_layers=48).layer == 17
    assert load_hparams("rome", keys=["never-seen"], num_layers=12).file == "default.json"
