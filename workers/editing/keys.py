"""Reading the model where an edit acts: MLP keys (the down projection's input) and layer outputs."""

from __future__ import annotations

import torch

from workers.lm.architectures import block, get_module, module_name
from workers.lm.loading import LoadedLM

from .encoding import encode
from .hparams import SUBJECT_LAST
from .requests import EditRequest


def lookup_end(text: str, subject_end: int, fact_token: str) -> int:
    """Where the edit reads and writes: the subject's last token, or the prompt's last token.

    ``subject_last`` is ROME's finding for large models (facts are recalled at the
    subject); ``last`` suits models that gather the subject at the end of the prompt.
    (``fact_token`` was checked when the hyperparameters were loaded.)
    """
    return subject_end if fact_token == SUBJECT_LAST else len(text)


def lookup_texts(request: EditRequest, templates: list[str], fact_token: str) -> tuple[list[str], list[int]]:
    """The filled prompt after each context template, and where each lookup token ends."""
    texts, ends = [], []
    for template in templates:
        slot = template.index("{}")
        text = template.replace("{}", request.filled_prompt, 1)
        texts.append(text)
        ends.append(lookup_end(text, slot + request.subject_end, fact_token))
    return texts, ends


@torch.no_grad()
def lookup_keys(
    lm: LoadedLM, layer: int, request: EditRequest, templates: list[str], fact_token: str
) -> torch.Tensor:
    """(templates, d_in): the down projection's input at the lookup token after each template."""
    texts, ends = lookup_texts(request, templates, fact_token)
    module = get_module(lm.model, module_name(lm.model, "mlp_out", layer))
    return _read_at(lm, texts, ends, module, read_input=True)


def balanced_key(
    lm: LoadedLM, layer: int, request: EditRequest, templates: list[str], fact_token: str
) -> torch.Tensor:
    """The key MEMIT fits: half the request's own prompt (``templates[0]`` is "{}"), half the
    average over the other prefixes, so the edit holds where it was asked and after other text.

    The bare prompt is left out of the second half, as in the reference's ``compute_ks``
    (the mean of each group of templates, then of the groups)."""
    keys = lookup_keys(lm, layer, request, templates, fact_token)
    if len(keys) == 1:
        return keys[0]
    return (keys[0] + keys[1:].mean(0)) / 2


@torch.no_grad()
def layer_output_at_lookup(
    lm: LoadedLM, layer: int, requests: list[EditRequest], fact_token: str
) -> torch.Tensor:
    """(n, d_model): the residual stream after ``layer`` at each lookup token (plain prompt)."""
    texts = [r.filled_prompt for r in requests]
    ends = [lookup_end(r.filled_prompt, r.subject_end, fact_token) for r in requests]
    return _read_at(lm, texts, ends, block(lm.model, layer), read_input=False)


def _read_at(lm: LoadedLM, texts: list[str], ends: list[int], module, *, read_input: bool) -> torch.Tensor:
    """One forward pass; ``module``'s first input (or its output) at the token before each end."""
    encoded = encode(lm, texts)
    positions = encoded.last_token_before(ends)
    captured: dict[str, torch.Tensor] = {}

    def keep_input(_module, args):
        captured["value"] = args[0]

    def keep_output(_module, _args, output):
        captured["value"] = output[0] if isinstance(output, tuple) else output

    if read_input:
        handle = module.register_forward_pre_hook(keep_input)
    else:
        handle = module.register_forward_hook(keep_output)
    try:
        lm.model(**encoded.inputs, use_cache=False)
    finally:
        handle.remove()
    rows = torch.arange(len(texts), device=positions.device)
    return captured["value"][rows, positions].float()
