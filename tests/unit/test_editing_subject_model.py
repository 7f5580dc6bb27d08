"""Editing at the subject's last token, on the tiny model whose facts are recalled there.

``tests/tiny_subject_model.py``: two-word subjects, each followed by its city in part of the
corpus (so the city is worked out at the subject's last token, in the first blocks' MLPs)
and read back from there at the end of relation prompts, with or without a filler clause in
between. ROME at layer 0 and MEMIT at layers 0–1 edit at ``subject_last``
(``tests/editing_hparams/*/tiny-subject-gpt2.json``), and the edits hold on the prompt and on
every paraphrase (fillers included) while neighbours keep their city.
"""

from __future__ import annotations

import pytest
import torch

from tests.tiny_subject_model import FACT_MARGIN, FILLERS, SUBJECTS, city_margins, edit_records, fact_prompts
from tests.unit.test_editing import margins
from workers.editing.base import edit_applied
from workers.editing.encoding import encode
from workers.editing.keys import lookup_texts
from workers.editing.passages import hparams_for
from workers.editing.requests import parse_edit_request
from workers.editing.templates import context_templates
from workers.lm.architectures import block

# nats: the new city must lead every other token by this much on the prompt and on every
# paraphrase (the smallest lead measured on seed 6's model: 1.95, ROME; MEMIT 2.13).
EDIT_MARGIN = 0.5
# nats: how far MEMIT's spill may push a neighbour below its own city (see the MEMIT test).
SPILL_FLOOR = 1.0


@pytest.fixture
def subject_requests():
    return [parse_edit_request(record) for record in edit_records()]


def test_the_subject_model_knows_every_fact_with_and_without_a_filler(subject_lm):
    prompts, cities = zip(*fact_prompts(), strict=True)
    assert min(margins(subject_lm, list(prompts), list(cities))) > FACT_MARGIN / 2


def test_the_city_is_already_predicted_right_after_the_subject(subject_lm):
    subjects, cities = zip(*SUBJECTS.items(), strict=True)
    found = city_margins(subject_lm.model, subject_lm.tokenizer, list(subjects), list(cities))
    assert float(found.min()) > FACT_MARGIN / 2


def test_the_prompt_reads_the_city_from_the_subjects_last_token(subject_lm):
    """A causal check: the subject's last position after the first blocks, taken from another
    subject's run, gives that subject's city; the prompt's own last position does not."""
    model, tokenizer = subject_lm.model, subject_lm.tokenizer
    (a, city_a), (b, city_b) = list(SUBJECTS.items())[:2]
    prompt_a, prompt_b = (tokenizer(f"{s} is located in", return_tensors="pt") for s in (a, b))
    subject_last = len(tokenizer(a)["input_ids"]) - 1
    assert prompt_a["input_ids"].shape == prompt_b["input_ids"].shape

    def answer(position: int, layer: int) -> str:
        with torch.no_grad():
            other = model(**prompt_b, output_hidden_states=True).hidden_states[layer + 1]

        def patch(_module, _args, output):
            hidden = (output[0] if isinstance(output, tuple) else output).clone()
            hidden[0, position] = other[0, position]
            return (hidden, *output[1:]) if isinstance(output, tuple) else hidden

        handle = block(model, layer).register_forward_hook(patch)
        try:
            with torch.no_grad():
                logits = model(**prompt_a).logits[0, -1]
        finally:
            handle.remove()
        return tokenizer.decode([int(logits.argmax())]).strip()

    last = prompt_a["input_ids"].shape[1] - 1
    assert [answer(subject_last, layer) for layer in (0, 1)] == [city_b, city_b]
    assert [answer(last, layer) for layer in (0, 1)] == [city_a, city_a]


def test_subject_last_is_the_last_token_of_a_two_word_subject_after_every_prefix(
    subject_lm,
    subject_settings,
    subject_requests,
):
    hp = hparams_for(subject_lm, "memit")
    request = subject_requests[0]
    templates = context_templates(subject_lm, hp.context_templates)
    texts, ends = lookup_texts(request, templates, hp.fact_token)
    encoded = encode(subject_lm, texts)
    positions = encoded.last_token_before(ends).tolist()
    ids = encoded.input_ids
    last_word = request.subject.split()[-1]
    assert len(templates) > 1 and len(subject_lm.tokenizer(f" {request.subject}")["input_ids"]) >= 2
    assert [subject_lm.tokenizer.decode(ids[row, p]).strip() for row, p in enumerate(positions)] == [
        last_word
    ] * len(texts)


def edit_margins(lm, record: dict) -> tuple[list[float], list[float]]:
    """(the new city's lead on the prompt and every paraphrase, the neighbours' own city's lead)."""
    rewrite = record["requested_rewrite"]
    prompts = [rewrite["prompt"].format(rewrite["subject"]), *record["paraphrase_prompts"]]
    neighbours = record["neighborhood_prompts"]
    return (
        margins(lm, prompts, [rewrite["target_new"]["str"]] * len(prompts)),
        margins(lm, neighbours, [rewrite["target_true"]["str"]] * len(neighbours)),
    )


def test_rome_at_the_subject_moves_the_prompt_and_every_paraphrase(
    subject_lm,
    subject_settings,
    subject_requests,
):
    hp = hparams_for(subject_lm, "rome")
    assert hp.fact_token == "subject_last"
    for request, record in zip(subject_requests, edit_records(), strict=True):
        with edit_applied(subject_lm, "rome", [request], hp):
            moved, kept = edit_margins(subject_lm, record)
        assert min(moved) > EDIT_MARGIN, (request.subject, moved)
        assert min(kept) > 0, (request.subject, kept)


def test_memit_at_the_subject_moves_the_prompt_and_every_paraphrase(
    subject_lm,
    subject_settings,
    subject_requests,
):
    """One request at a time, as ROME. (All four at once, one of them keeps its old city on
    one paraphrase: the batched least squares shares the two layers among four keys.)

    Locality is asserted with the room the tiny model leaves: MEMIT spreads each edit over
    layers 0 and 1, and how much of it spills onto another subject depends on the model the
    machine trained. On the model seed 6 was chosen with, every neighbour kept its city by
    1.29 nats or more; on the one an Intel processor with AVX-512 trains (same seed, pinned
    kernels, tokenizer and loss curve reproducible there), editing Karnish Orrunvale costs
    Ostra Fennoway its city by 0.2 nats while the three other edits keep every neighbour by
    1.17 nats or more. So: at most one edit may tip its neighbours, and never by a whole nat."""
    hp = hparams_for(subject_lm, "memit")
    assert hp.fact_token == "subject_last"
    tipped = []
    for request, record in zip(subject_requests, edit_records(), strict=True):
        with edit_applied(subject_lm, "memit", [request], hp):
            moved, kept = edit_margins(subject_lm, record)
        assert min(moved) > EDIT_MARGIN, (request.subject, moved)
        assert min(kept) > -SPILL_FLOOR, (request.subject, kept)
        if min(kept) <= 0:
            tipped.append((request.subject, kept))
    assert len(tipped) <= 1, tipped


def test_a_left_padded_prompt_is_read_as_if_it_were_alone(subject_lm):
    """The margins the build and these tests assert read each prompt at its own positions."""
    from tests.tiny_model import last_position_logits

    model, tokenizer = subject_lm.model, subject_lm.tokenizer
    short, long = "Ostra Dumarel is located in", f"Ostra Dumarel, {FILLERS[0]}, is located in"
    batched = last_position_logits(model, tokenizer, [short, long])
    alone = torch.cat([last_position_logits(model, tokenizer, [prompt]) for prompt in (short, long)])
    assert torch.allclose(batched, alone, atol=1e-4)
