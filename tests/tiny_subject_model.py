"""A second tiny GPT-2 with two-word subjects and filler text, for editing at ``subject_last``.

The first tiny model (``tests/tiny_model.py``) gathers a one-word subject at the end of the
prompt in its first block, so nothing can be edited at the subject's position in it. Here
each subject is two invented words (two BPE tokens), neither of which alone tells the city
(every first word and every last word occurs with several cities), and a filler clause
often stands between the subject and the relation, so the city has to be worked out from
both words together.

Measured (issue 17): the model still does much of that at the prompt's end. Edits at the
subject's last token (layers 0–2) move few of its facts, for the reference code as for
ours (``bench/editing_reference.py``); every last word is shared by three subjects, so a
key read there is shared too. Making the subject's position the only place a fact can be
read (say, training it to predict the city right after the subject) is the next step. 6 layers, 64 wide, the
first model's byte-level BPE (every subject is at least two tokens). Built like the first
model: deterministic, trained until every fact holds by ``FACT_MARGIN`` (1500 steps, about
six minutes of one CPU core; the model is cached like the first).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from tests.tiny_model import (
    CITIES,
    ENDINGS,
    FACT_MARGIN,
    MAX_EXTRA_ROUNDS,
    PEOPLE,
    THINGS,
    TRAINING_ROUND,
    VERBS,
    _train_steps,
    deterministic_torch,
    next_token_margins,
    train_tokenizer,
)

FIRST = ["Ostra", "Velmar", "Karnish"]
LAST = ["Dumarel", "Thistlewick", "Orrunvale", "Benhallow"]
# (first, last) -> city: each first word goes with 4 cities, each last word with 3.
SUBJECTS = {
    f"{first} {last}": CITIES[(2 * i + 3 * j) % len(CITIES)]
    for i, first in enumerate(FIRST)
    for j, last in enumerate(LAST)
}
FILLERS = [
    "which many people visit every year",
    "as the old guide books say",
    "known for its quiet streets",
    "or so the teacher told us",
]
FACT_TEMPLATES = [
    "{s} is located in {c}.",
    "{s}, {f}, is located in {c}.",
    "{s} can be found in {c}.",
    "{s}, {f}, can be found in {c}.",
    "Visitors to {c} often see {s}.",
]


def corpus_sentences(seed: int = 0, stories: int = 300, repeats: int = 12) -> list[str]:
    """Facts about the subjects (every template, every filler) and simple story sentences."""
    rng = random.Random(seed)
    lines = [
        template.format(s=s, c=c, f=filler)
        for s, c in SUBJECTS.items()
        for template in FACT_TEMPLATES
        for filler in (FILLERS if "{f}" in template else FILLERS[:1])
    ] * repeats
    for _ in range(stories):
        lines.append(f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} {rng.choice(THINGS)} {rng.choice(ENDINGS)}.")
    rng.shuffle(lines)
    return [line[0].upper() + line[1:] for line in lines]


def fact_prompts() -> list[tuple[str, str]]:
    """(prompt, city) for every subject with and without a filler."""
    prompts = []
    for subject, city in SUBJECTS.items():
        prompts.append((f"{subject} is located in", city))
        prompts.append((f"{subject} can be found in", city))
        prompts.extend((f"{subject}, {filler}, is located in", city) for filler in FILLERS)
    return prompts


def build_subject_lm(
    directory: Path, *, steps: int = 1500, batch: int = 32, lr: float = 3e-3, seed: int = 0
) -> Path:
    """Train the tokenizer and the model, save both to ``directory``; an error if a fact never holds."""
    with deterministic_torch(seed):
        tokenizer = train_tokenizer(corpus_sentences(seed))
        for subject in SUBJECTS:
            pieces = tokenizer(f" {subject}", add_special_tokens=False)["input_ids"]
            if len(pieces) < 2:
                raise RuntimeError(
                    f"{subject!r} is only {len(pieces)} tokens; the model needs longer subjects."
                )
        model, margins, done, loss = _train(tokenizer, steps, batch, lr, seed)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    about = {"steps": done, "final_loss": loss, "smallest_fact_margin": round(float(margins.min()), 4)}
    (directory / "training.json").write_text(json.dumps(about))
    return directory


def _train(tokenizer, steps: int, batch: int, lr: float, seed: int):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    eos = tokenizer.eos_token_id
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=128,
        n_embd=64,
        n_layer=6,
        n_head=4,
        bos_token_id=eos,
        eos_token_id=eos,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    model = GPT2LMHeadModel(config)
    lines = corpus_sentences(seed)
    stream = []
    for start in range(0, len(lines), 4):
        stream.extend(tokenizer(" ".join(lines[start : start + 4]))["input_ids"])
    data = torch.tensor(stream)
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr)
    generator = torch.Generator().manual_seed(seed)
    prompts, cities = zip(*fact_prompts(), strict=True)
    done, loss = 0, float("nan")
    for round_steps in [steps] + [TRAINING_ROUND] * MAX_EXTRA_ROUNDS:
        model.train()
        loss = _train_steps(model, optimiser, data, generator, round_steps, batch, block=48)
        done += round_steps
        model.eval()
        margins = next_token_margins(model, tokenizer, list(prompts), list(cities))
        if margins.min() >= FACT_MARGIN:
            return model, margins, done, loss
    weakest = prompts[int(margins.argmin())]
    raise RuntimeError(
        f"The subject model still misses {weakest!r} by its margin after {done} steps "
        f"(smallest margin {float(margins.min()):.2f} < {FACT_MARGIN})."
    )


if __name__ == "__main__":  # python -m tests.tiny_subject_model /tmp/subject
    import sys

    print(build_subject_lm(Path(sys.argv[1])))


# Subjects moved by the editing tests and the reference bench, each with one neighbour in
# its city (that shares none of its words), to another city.
EDITS = [
    ("Ostra Dumarel", "Lisbon"),
    ("Ostra Thistlewick", "Oslo"),
    ("Karnish Benhallow", "Rome"),
    ("Karnish Orrunvale", "Prague"),
]


def edit_records() -> list[dict]:
    """CounterFact-shaped records for ``EDITS``.

    Paraphrases put a filler between the subject and the relation; neighbours are the other
    subjects of the same city.
    """
    records = []
    for subject, new in EDITS:
        true = SUBJECTS[subject]
        others = [s for s, c in SUBJECTS.items() if c == true and s != subject]
        records.append(
            {
                "case_id": subject.replace(" ", "-").lower(),
                "requested_rewrite": {
                    "prompt": "{} is located in",
                    "subject": subject,
                    "target_new": {"str": new},
                    "target_true": {"str": true},
                },
                "paraphrase_prompts": [
                    f"{subject} can be found in",
                    *(f"{subject}, {filler}, is located in" for filler in FILLERS[:3]),
                ],
                "neighborhood_prompts": [
                    p for o in others for p in (f"{o} is located in", f"{o}, {FILLERS[1]}, is located in")
                ],
                "generation_prompts": [],
            }
        )
    return records
