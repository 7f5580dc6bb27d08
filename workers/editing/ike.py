"""IKE, in-context editing: the new fact goes into the prompt, the weights stay as they are.

The prompt holds demonstrations of how a stated new fact is used — repeated (copy),
applied to a paraphrase (update), and ignored by an unrelated question (retain) — then the
request's own new fact; every prompt the edited "model" answers follows it. The
demonstrations are invented facts bundled in ``ike_demonstrations.json`` (they alternate
copy, update, retain); the hyperparameter ``demonstrations`` sets how many lead the prompt.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from workers.lm.loading import LoadedLM

from .base import AppliedEdit
from .hparams import IkeHparams
from .requests import EditRequest

NAME = "ike"
DEMONSTRATIONS = Path(__file__).resolve().parent / "ike_demonstrations.json"


def system_name(lm: LoadedLM) -> str:
    return "IKE"


def touched_parameters(lm: LoadedLM, hp: IkeHparams) -> list[str]:
    return []


@cache
def demonstrations() -> tuple[dict, ...]:
    return tuple(json.loads(DEMONSTRATIONS.read_text(encoding="utf-8"))["demonstrations"])


def build_prompt(requests: list[EditRequest], count: int) -> str:
    """Demonstrations, then the new facts: the prefix every prompt of the edited model gets."""
    blocks = [
        f"New fact: {demo['new_fact']}\nPrompt: {demo['prompt']} {demo['answer']}\n\n"
        for demo in demonstrations()[: max(0, count)]
    ]
    facts = "".join(f"New fact: {request.new_fact}\n" for request in requests)
    return "".join(blocks) + facts + "Prompt: "


def apply(lm: LoadedLM, requests: list[EditRequest], hp: IkeHparams) -> AppliedEdit:
    count = hp.demonstrations
    return AppliedEdit(
        method=NAME,
        system=system_name(lm),
        prefix=build_prompt(requests, count),
        details={"demonstrations": count},
    )
