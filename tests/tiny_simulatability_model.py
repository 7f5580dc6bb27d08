"""A tiny GPT-2 that has learnt the simulatability prompts' layout, for the pipeline tests.

It is trained for a few seconds on blocks written in the layout of
``workers/simulatability/prompts.py`` about an invented little world (which animal class
can fly, swim or climb), so that greedily it answers in the requested mode and, sampled,
writes follow-up questions. Questions about a ``zorp`` (a made-up creature) get a reply
without any answer, so the tests see unparseable outputs counted. Its context is 128
tokens: the prompt's last few blocks, the question's block among them. Built and cached
by ``tests/lm_fixtures.py`` like the other tiny models; nothing is downloaded.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

CLASSES = {
    "bird": ("fly", ["crow", "robin", "finch", "heron", "sparrow", "pigeon"]),
    "fish": ("swim", ["trout", "carp", "salmon", "pike", "perch", "cod"]),
    "climber": ("climb trees", ["squirrel", "monkey", "lemur", "koala", "gecko", "sloth"]),
}
ABILITIES = [ability for ability, _ in CLASSES.values()]
UNKNOWN = "zorp"  # answers about it state no answer


def question_for(entity: str, ability: str) -> str:
    return f"Can a {entity} {ability}?"


def _class_of(entity: str) -> tuple[str, str]:
    for name, (ability, members) in CLASSES.items():
        if entity in members:
            return name, ability
    raise KeyError(entity)


def answer_of(entity: str, ability: str) -> tuple[str, str]:
    """(yes|no, the reasoning) in the tiny world; the reasoning names the class, not the
    animal, so a two-layer model learns it in a few hundred steps (no copying needed)."""
    name, can = _class_of(entity)
    if can == ability:
        return "yes", f"It is a {name}, and every {name} can {can}."
    return "no", f"It is a {name}, and a {name} cannot {ability}."


def explain_completion(entity: str, ability: str, mode: str) -> str:
    """What follows ``Reasoning:`` (cot) or ``Answer:`` (posthoc) for this question."""
    if entity == UNKNOWN:
        return " Nobody knows what that is." if mode == "cot" else " Unsure. Nobody knows what that is."
    answer, reasoning = answer_of(entity, ability)
    if mode == "cot":
        return f" {reasoning} So the answer is {answer}."
    return f" {answer.capitalize()}. Reason: {reasoning}"


WINDOW = 120  # tokens per training sample: the end of a prompt, as the model sees it, and the reply


def training_texts(seed: int = 0, count: int = 1200) -> list[tuple[str, str]]:
    """(prompt, reply) pairs rendered by the real prompt files: explanations in both modes,
    follow-ups after them. The reply ends with the blank line that closes a block."""
    from workers.simulatability.prompts import explain_prompt, followups_prompt
    from workers.simulatability.questions import YES_NO, Question

    rng = random.Random(seed)
    entities = [e for _, members in CLASSES.values() for e in members]
    pairs = []
    for _ in range(count):
        entity = UNKNOWN if rng.random() < 0.08 else rng.choice(entities)
        ability, mode = rng.choice(ABILITIES), rng.choice(("cot", "posthoc"))
        question = Question("q", YES_NO, text=question_for(entity, ability))
        if entity == UNKNOWN or rng.random() < 0.5:
            pairs.append((explain_prompt(question, mode), explain_completion(entity, ability, mode) + "\n\n"))
            continue
        answer, reasoning = answer_of(entity, ability)
        explanation = f"{reasoning} So the answer is {answer}." if mode == "cot" else reasoning
        name, _ = _class_of(entity)
        other = rng.choice([e for e in CLASSES[name][1] if e != entity])
        reply = f" {question_for(other, rng.choice(ABILITIES))}\n\n"
        pairs.append((followups_prompt(question, answer, explanation), reply))
    return pairs


def build_tiny_simulatability_lm(directory: Path, *, steps: int = 300, seed: int = 0) -> Path:
    """Train the tokenizer and the model on the pairs; save both to ``directory``.

    Each sample is a prompt's last tokens and its reply, ``WINDOW`` tokens long: the model
    is left-truncated the same way when it generates (``workers.lm.generation``).
    """
    import torch
    from transformers import GPT2LMHeadModel

    from tests.tiny_model import deterministic_torch, tiny_gpt2_config, train_tokenizer

    pairs = training_texts(seed)
    with deterministic_torch(seed):
        tokenizer = train_tokenizer([prompt + reply for prompt, reply in pairs[:300]])
        samples, labels = [], []
        rng = random.Random(seed)
        for prompt, reply in pairs:
            reply_ids = tokenizer(reply, add_special_tokens=False)["input_ids"]
            prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
            # contexts of varied length, so the reply's position teaches nothing; padded on the right
            context = prompt_ids[-rng.randint(40, WINDOW - len(reply_ids)) :]
            padding = WINDOW - len(context) - len(reply_ids)
            samples.append(context + reply_ids + [tokenizer.eos_token_id] * padding)
            # the loss is on the reply and the line before it
            labels.append([-100] * (len(context) - 12) + context[-12:] + reply_ids + [-100] * padding)
        data, targets = torch.tensor(samples), torch.tensor(labels)
        model = GPT2LMHeadModel(tiny_gpt2_config(tokenizer, layers=2))
        optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
        generator = torch.Generator().manual_seed(seed)
        loss = torch.tensor(float("nan"))
        for _ in range(steps):
            rows = torch.randint(0, len(data), (16,), generator=generator)
            loss = model(input_ids=data[rows], labels=targets[rows]).loss
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    (directory / "training.json").write_text(json.dumps({"steps": steps, "final_loss": float(loss.detach())}))
    return directory


if __name__ == "__main__":  # build one by hand: python -m tests.tiny_simulatability_model /tmp/tiny-sim
    import sys

    print(build_tiny_simulatability_lm(Path(sys.argv[1])))
