"""A second tiny GPT-2 whose facts are recalled at the subject, for editing at ``subject_last``.

The first tiny model (``tests/tiny_model.py``) gathers a subject at the end of the prompt in
its first block, so nothing can be edited at the subject's position in it. ROME and MEMIT
assume what large models do: the attribute is worked out at the subject's last token by
early-to-middle MLPs, and the end of the prompt reads it back from there. This model is
trained to do just that, in two phases (about 25 CPU seconds on one core, cached like the
first model):

1. every sentence, but the city at the end of a relation ("… is located in Paris.") is not
   scored; what is scored is each subject followed straight away by its city ("Ostra
   Dumarel Paris."). So the city can only be learnt at the subject's last token, where the
   embeddings and the first ``FROZEN`` blocks learn it.
2. those blocks and the embeddings frozen, the later blocks learn the relation sentences,
   the city now scored: the only place they can find it is the subject's position.

Subjects are two invented words (two BPE tokens); a filler clause often stands between the
subject and the relation. A causal check (patching the subject's last position from
another subject) moves the answer, and ROME at layer 0 and MEMIT at layers 0–1 edit every
fact of ``EDITS`` on the prompt and every paraphrase (``tests/unit/test_editing_subject_model.py``).
Built deterministically and trained until every fact holds by ``FACT_MARGIN``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from tests.tiny_model import (
    CITIES,
    ENDINGS,
    PEOPLE,
    THINGS,
    VERBS,
    deterministic_torch,
    last_position_logits,
    next_token_margins,
    tiny_gpt2_config,
    train_tokenizer,
)

# Each city has one or two subjects; two subjects of one city share no word (so each is the
# other's neighbour), and every first word goes with four subjects of different cities.
SUBJECTS = {
    "Ostra Dumarel": "Paris",
    "Velmar Salbeck": "Paris",
    "Ostra Thistlewick": "Rome",
    "Karnish Mirrowen": "Rome",
    "Karnish Benhallow": "Berlin",
    "Velmar Treywind": "Berlin",
    "Karnish Orrunvale": "Madrid",
    "Ostra Fennoway": "Madrid",
    "Velmar Grisdale": "Lisbon",
    "Ostra Haverlock": "Vienna",
    "Karnish Ulmsgate": "Oslo",
    "Velmar Quorvin": "Prague",
}
FILLERS = [
    "as the old guide books say",
    "known for its quiet streets",
    "or so the teacher told us",
]
RELATION_TEMPLATES = [  # the city at the prompt's end, read back from the subject
    "{s} is located in {c}.",
    "{s}, {f}, is located in {c}.",
    "{s} can be found in {c}.",
]
SUBJECT_TEMPLATE = "{s} {c}."  # the city right after the subject: recalled at its last token

FROZEN = 2  # blocks (with the embeddings) that learn the city at the subject, then stay fixed
FIRST_PHASE_STEPS = 300
SUBJECT_REPEATS = 6  # copies of "{subject} {city}." per subject in the training lines
STORIES = 40
# Story sentences before a training line, at most. With up to two, the facts held after a
# prefix too, but ROME's and MEMIT's edits spilled onto neighbours more often (four models of
# five), so lines open their texts as they always did.
PREFIX_STORIES = 0
# As the first model's. The facts are measured as ``generate`` reads a batch (positions from
# each prompt's first token): this model is trained on right-padded lines, so read at shifted
# positions it missed its facts by several nats on some CPUs and not others. The tests assert
# half of this margin for the facts, and that edits move every prompt.
FACT_MARGIN = 2.0
CHECK_EVERY = 50  # steps between fact checks once the second phase's schedule is done
MAX_ROUNDS = 6


def _stories(rng: random.Random, count: int) -> list[str]:
    return [
        f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} {rng.choice(THINGS)} {rng.choice(ENDINGS)}."
        for _ in range(count)
    ]


def subject_sentences(seed: int = 0, stories: int = STORIES) -> list[str]:
    """The first phase: each subject followed by its city, and story sentences."""
    rng = random.Random(seed)
    lines = [SUBJECT_TEMPLATE.format(s=s, c=c) for s, c in SUBJECTS.items()] * SUBJECT_REPEATS
    lines += _stories(rng, stories)
    rng.shuffle(lines)
    return [line[0].upper() + line[1:] for line in lines]


def relation_sentences(seed: int = 0) -> list[str]:
    """Every relation template with every filler (the city last)."""
    lines = [
        template.format(s=s, c=c, f=filler)
        for s, c in SUBJECTS.items()
        for template in RELATION_TEMPLATES
        for filler in (FILLERS if "{f}" in template else FILLERS[:1])
    ]
    return [line[0].upper() + line[1:] for line in lines]


def corpus_sentences(seed: int = 0, stories: int = STORIES) -> list[str]:
    """Every kind of sentence the model is trained on, shuffled (the tokenizer learns from these)."""
    lines = relation_sentences(seed) + subject_sentences(seed, stories)
    random.Random(seed + 1).shuffle(lines)
    return lines


def statistics_text(seed: int = 5) -> str:
    """Text for ROME's and MEMIT's key statistics: the model's own kind of text, four sentences a line.

    The statistics must cover the keys of the subjects' words, as a large model's do (its
    statistics come from text like what it was trained on): keys never seen there get a
    direction the second moment knows nothing about, and an edit then spills onto other subjects.
    """
    sentences = corpus_sentences(seed, stories=600)
    return "\n".join(" ".join(sentences[i : i + 4]) for i in range(0, len(sentences), 4))


def fact_prompts() -> list[tuple[str, str]]:
    """(prompt, city) for every subject with and without a filler."""
    prompts = []
    for subject, city in SUBJECTS.items():
        prompts.append((f"{subject} is located in", city))
        prompts.append((f"{subject} can be found in", city))
        prompts.extend((f"{subject}, {filler}, is located in", city) for filler in FILLERS)
    return prompts


def build_subject_lm(
    directory: Path, *, steps: int = 300, batch: int = 32, lr: float = 8e-3, seed: int = 6, layers: int = 4
) -> Path:
    """Train the tokenizer and the model, save both to ``directory``; an error if a fact never holds.

    Seed 6: built with the pinned kernels of ``tests/lm_fixtures.py`` (MKL's COMPATIBLE
    branch), the models of seeds 0–7 all know every fact by 4.4 nats or more, but with 100 δ
    steps only seeds 6 and 7 take every edit of ``EDITS`` by ROME and by MEMIT one at a time.
    Seed 6 with room: the new city leads the prompt and every paraphrase by 1.95 nats or more
    (ROME; MEMIT 2.13) and the neighbours keep theirs by 2.22 (ROME; MEMIT 1.29); seed 7 only
    by 0.81 and 0.34. Seed 1, chosen on the earlier AVX2 branch, leaves one paraphrase of
    Karnish Orrunvale at -1.3 (ROME) and -1.0 (MEMIT), and no weight decay, clamp or step
    count up to 200 moves it; seed 0 moves every prompt by 4 nats but takes Velmar Salbeck's
    city. Small models differ in how far a rank-one edit at layer 0 carries to the
    paraphrases and how much it spills onto others.
    """
    with deterministic_torch(seed):
        tokenizer = train_tokenizer(corpus_sentences(seed))
        for subject in SUBJECTS:
            pieces = tokenizer(f" {subject}", add_special_tokens=False)["input_ids"]
            if len(pieces) < 2:
                raise RuntimeError(
                    f"{subject!r} is only {len(pieces)} tokens; the model needs longer subjects."
                )
        model, margins, done, loss = _train(tokenizer, steps, batch, lr, seed, layers)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    about = {"steps": done, "final_loss": loss, "smallest_fact_margin": round(float(margins.min()), 4)}
    (directory / "training.json").write_text(json.dumps(about))
    return directory


def _lr_scale(step: int, steps: int) -> float:
    """Warm up for 20 steps, then a cosine down to 5% at ``steps`` (and 5% after that)."""
    import math

    if step < 20:
        return (step + 1) / 20
    progress = min(1.0, (step - 20) / max(1, steps - 20))
    return 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * progress))


class _Rows:
    """Training rows drawn at random, each line after 0–``PREFIX_STORIES`` story sentences.

    The first ``hidden_city`` lines' cities are not scored (" {city}." ends a line: the city
    is its last token but one).
    """

    def __init__(self, tokenizer, lines: list[str], stories: list[str], seed: int, hidden_city: int = 0):
        self.tokenizer, self.lines, self.stories, self.hidden_city = tokenizer, lines, stories, hidden_city
        self.rng = random.Random(seed)

    def draw(self, count: int):
        """(ids, mask, labels) of ``count`` rows, right-padded."""
        rows = [self.rng.randrange(len(self.lines)) for _ in range(count)]
        texts = [
            " ".join([*self.rng.sample(self.stories, self.rng.randint(0, PREFIX_STORIES)), self.lines[row]])
            for row in rows
        ]
        self.tokenizer.padding_side = "right"
        encoded = self.tokenizer(texts, return_tensors="pt", padding=True)
        ids, mask = encoded["input_ids"], encoded["attention_mask"]
        labels = ids.masked_fill(mask == 0, -100)
        lengths = mask.sum(1)
        for index, row in enumerate(rows):
            if row < self.hidden_city:
                labels[index, lengths[index] - 2] = -100
        return ids, mask, labels


def _trainer(parameters, lr: float, steps: int):
    """AdamW with a 20-step warm-up and a cosine down to 5% of ``lr`` at ``steps`` (5% after)."""
    import torch

    optimiser = torch.optim.AdamW(parameters, lr=lr)
    return optimiser, torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: _lr_scale(step, steps))


def _run(model, trainer, rows: _Rows, steps: int, batch: int) -> float:
    """``steps`` steps on ``batch`` rows each; the last batch's loss."""
    optimiser, schedule = trainer
    loss = float("nan")
    model.train()
    for _ in range(steps):
        ids, mask, labels = rows.draw(batch)
        out = model(input_ids=ids, attention_mask=mask, labels=labels)
        optimiser.zero_grad()
        out.loss.backward()
        optimiser.step()
        schedule.step()
        loss = float(out.loss.detach())
    model.eval()
    return loss


def city_margins(model, tokenizer, prompts: list[str], cities: list[str]):
    """Per prompt: log p(its city) minus the largest log p of another city (nats)."""
    import torch

    ids = [tokenizer(f" {city}", add_special_tokens=False)["input_ids"][0] for city in CITIES]
    logits = last_position_logits(model, tokenizer, prompts)[:, ids]
    rows = torch.arange(len(prompts))
    own = torch.tensor([CITIES.index(city) for city in cities])
    chosen = logits[rows, own]
    logits[rows, own] = float("-inf")
    return chosen - logits.max(-1).values


def _train(tokenizer, steps: int, batch: int, lr: float, seed: int, layers: int):
    """(model, fact margins, steps trained, last loss): the two phases of the module docstring."""
    from transformers import GPT2LMHeadModel

    model = GPT2LMHeadModel(tiny_gpt2_config(tokenizer, layers=layers))
    relations = relation_sentences(seed)
    subjects = subject_sentences(seed)
    stories = _stories(random.Random(seed + 2), STORIES)
    first = _Rows(tokenizer, relations + subjects, stories, seed, hidden_city=len(relations))
    trainer = _trainer(model.parameters(), lr, FIRST_PHASE_STEPS)
    _run(model, trainer, first, FIRST_PHASE_STEPS, batch)
    model.transformer.wte.requires_grad_(False)  # tied to the output layer: cities keep their rows
    model.transformer.wpe.requires_grad_(False)
    for block in model.transformer.h[:FROZEN]:
        block.requires_grad_(False)
    later = [parameter for parameter in model.parameters() if parameter.requires_grad]
    second = _Rows(tokenizer, relations + subjects, stories, seed + 1)
    trainer = _trainer(later, lr, steps)
    prompts, cities = zip(*fact_prompts(), strict=True)
    done = FIRST_PHASE_STEPS
    for round_steps in [steps] + [CHECK_EVERY] * MAX_ROUNDS:
        loss = _run(model, trainer, second, round_steps, batch)
        done += round_steps
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
# its city (that shares none of its words), to another city. ("Karnish Orrunvale" to Prague
# was tried first: δ's optimisation does not reach Prague from there in 40 steps, ROME's
# nor MEMIT's, the target's NLL staying near 3.9; with 100 steps one paraphrase still
# misses. Oslo is reached like the others.)
EDITS = [
    ("Ostra Dumarel", "Lisbon"),
    ("Ostra Thistlewick", "Oslo"),
    ("Karnish Benhallow", "Rome"),
    ("Karnish Orrunvale", "Oslo"),
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
                    *(f"{subject}, {filler}, is located in" for filler in FILLERS),
                ],
                "neighborhood_prompts": [
                    p for o in others for p in (f"{o} is located in", f"{o}, {FILLERS[0]}, is located in")
                ],
                "generation_prompts": [],
            }
        )
    return records
