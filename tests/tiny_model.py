"""A tiny GPT-2-style model trained for a few seconds on made-up facts, for the worker tests.

It knows where a handful of invented landmarks are (so an edit has a true target to
overturn) and writes short sentences ending in full stops (so the RoFT pipeline can
split its continuations). Everything is built offline: a byte-level BPE tokenizer from
the ``tokenizers`` library and a randomly initialised GPT-2 trained on the corpus below.
``tests/lm_fixtures.py`` builds it once (in the system temp dir) and loads it like any model.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LANDMARKS = {  # two per city, so an edit has neighbours that must keep their answer
    "Lake Tolvik": "Paris",
    "Port Ilse": "Paris",
    "Fort Marrow": "Rome",
    "Mount Quen": "Rome",
    "Lake Essen": "Berlin",
    "Fort Dravo": "Berlin",
    "Fort Corvin": "Madrid",
    "Lake Umber": "Madrid",
    "Port Halden": "Lisbon",
    "Mount Sorel": "Lisbon",
    "Port Brask": "Vienna",
    "Lake Wend": "Vienna",
    "Mount Fenmore": "Oslo",
    "Port Yarrow": "Oslo",
    "Mount Ostra": "Prague",
    "Fort Kelm": "Prague",
}
CITIES = ["Paris", "Rome", "Berlin", "Madrid", "Lisbon", "Vienna", "Oslo", "Prague"]
FACT_TEMPLATES = [
    "{s} is located in {c}.",
    "{s} is in {c}.",
    "{s} can be found in {c}.",
    "{s} stands in the city of {c}.",
    "Visitors to {c} often see {s}.",
]
PEOPLE = ["The old man", "A young girl", "The teacher", "My neighbour", "The baker", "A tired driver"]
VERBS = ["walked to", "looked at", "painted", "cleaned", "talked about", "waited near"]
THINGS = ["the river", "a small boat", "the red door", "the market", "an empty room", "the garden"]
ENDINGS = ["in the morning", "after dinner", "on a rainy day", "with a smile", "for an hour", "again"]


def corpus_sentences(seed: int = 0, stories: int = 300) -> list[str]:
    """Facts about the landmarks (every template) and simple story sentences."""
    rng = random.Random(seed)
    lines = [t.format(s=s, c=c) for s, c in LANDMARKS.items() for t in FACT_TEMPLATES] * 15
    for _ in range(stories):
        sentence = f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} {rng.choice(THINGS)} {rng.choice(ENDINGS)}."
        lines.append(sentence)
    rng.shuffle(lines)
    return [line[0].upper() + line[1:] for line in lines]


def documents(count: int, sentences: int, seed: int = 1) -> list[str]:
    """Human-written-style documents for the RoFT corpus (story sentences)."""
    rng = random.Random(seed)
    return [
        " ".join(
            f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} {rng.choice(THINGS)} {rng.choice(ENDINGS)}."
            for _ in range(sentences)
        )
        for _ in range(count)
    ]


FACT_MARGIN = 2.0  # nats: each true city must beat the runner-up token by this much
TRAINING_ROUND = 150  # steps added while a fact is below the margin
MAX_EXTRA_ROUNDS = 6


def fact_prompts() -> list[tuple[str, str]]:
    """(prompt, city) for every landmark and every template that ends in the city."""
    return [
        (template.split(" {c}")[0].format(s=subject), city)
        for subject, city in LANDMARKS.items()
        for template in FACT_TEMPLATES
        if template.startswith("{s}")
    ]


def next_token_margins(model, tokenizer, prompts: list[str], targets: list[str]):
    """Per prompt: log p(target's token) minus the largest log p of any other token (nats).

    Positive means the target is the top prediction; the size is how far a machine's float
    rounding would have to move the logits to change that. Targets must be single tokens.
    """
    import torch

    ids = []
    for target in targets:
        pieces = tokenizer(f" {target}", add_special_tokens=False)["input_ids"]
        if len(pieces) != 1:
            raise ValueError(f"{target!r} is {len(pieces)} tokens; margins need a single-token target.")
        ids.append(pieces[0])
    logits = last_position_logits(model, tokenizer, prompts)
    rows = torch.arange(len(ids))
    chosen = logits[rows, torch.tensor(ids)]
    logits[rows, torch.tensor(ids)] = float("-inf")
    return chosen - logits.max(-1).values


def last_position_logits(model, tokenizer, prompts: list[str]):
    """The logits after each prompt's last token, the prompts in one left-padded batch.

    Positions count from each prompt's first real token, as ``generate`` counts them: GPT-2's
    forward numbers positions from the batch's left edge, so a padded prompt would be read
    at shifted positions, which a model trained on right-padded lines has never seen.
    """
    import torch

    tokenizer.padding_side = "left"
    inputs = tokenizer(list(prompts), return_tensors="pt", padding=True)
    positions = (inputs["attention_mask"].cumsum(-1) - 1).clamp(min=0)
    with torch.no_grad():
        return model(**inputs, position_ids=positions).logits[:, -1].float()


@contextmanager
def deterministic_torch(seed: int) -> Iterator[None]:
    """One thread, deterministic kernels, seeded: the same run on any machine of a kind.

    Thread counts change the order of float sums; that and unseeded randomness are what
    make a trained model differ between two runs on one machine. (Different CPUs can still
    round differently: that is what the margins are for.)
    """
    import torch

    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(seed)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(deterministic)
        torch.set_num_threads(threads)


def build_tiny_lm(
    directory: Path, *, steps: int = 450, batch: int = 32, lr: float = 3e-3, seed: int = 0
) -> Path:
    """Train the tokenizer and the model, save both to ``directory`` (loadable offline).

    Training goes on, ``TRAINING_ROUND`` steps at a time, until every fact holds by
    ``FACT_MARGIN``; a model that never gets there is an error, not a flaky test later.
    """
    with deterministic_torch(seed):
        tokenizer = train_tokenizer(corpus_sentences(seed))
        model, margins, steps_done, loss = train_until_facts_hold(tokenizer, steps, batch, lr, seed)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    about = {"steps": steps_done, "final_loss": loss, "smallest_fact_margin": round(float(margins.min()), 4)}
    (directory / "training.json").write_text(json.dumps(about))
    return directory


def train_tokenizer(lines: list[str]):
    """A byte-level BPE over the corpus; every text starts with ``<|endoftext|>`` as documents did."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=700,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(lines, trainer=trainer)
    bos = bpe.token_to_id("<|endoftext|>")
    bpe.post_processor = processors.TemplateProcessing(
        single="<|endoftext|> $A", special_tokens=[("<|endoftext|>", bos)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token="<|endoftext|>", eos_token="<|endoftext|>", pad_token="<|endoftext|>"
    )


def tiny_gpt2_config(tokenizer, *, layers: int):
    """The tiny models' shape: 64 wide, 4 heads, context 128, no dropout (training is
    deterministic), the tokenizer's end-of-text as both ends."""
    from transformers import GPT2Config

    eos = tokenizer.eos_token_id
    return GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=128,
        n_embd=64,
        n_layer=layers,
        n_head=4,
        bos_token_id=eos,
        eos_token_id=eos,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )


def train_until_facts_hold(tokenizer, steps: int, batch: int, lr: float, seed: int):
    """(model, fact margins, steps trained, last loss): ``steps``, then rounds until the margin holds."""
    import torch
    from transformers import GPT2LMHeadModel

    model = GPT2LMHeadModel(tiny_gpt2_config(tokenizer, layers=4))
    lines = corpus_sentences(seed)
    stream = []
    for start in range(0, len(lines), 4):  # short documents: the first sentence has no leading space
        stream.extend(tokenizer(" ".join(lines[start : start + 4]))["input_ids"])
    data = torch.tensor(stream)
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr)
    generator = torch.Generator().manual_seed(seed)
    prompts, cities = zip(*fact_prompts(), strict=True)
    done, loss = 0, float("nan")
    for round_steps in [steps] + [TRAINING_ROUND] * MAX_EXTRA_ROUNDS:
        model.train()
        loss = _train_steps(model, optimiser, data, generator, round_steps, batch)
        done += round_steps
        model.eval()
        margins = next_token_margins(model, tokenizer, list(prompts), list(cities))
        if margins.min() >= FACT_MARGIN:
            return model, margins, done, loss
    weakest = prompts[int(margins.argmin())]
    raise RuntimeError(
        f"The tiny model still misses {weakest!r} by its margin after {done} steps "
        f"(smallest margin {float(margins.min()):.2f} < {FACT_MARGIN})."
    )


def _train_steps(model, optimiser, data, generator, steps: int, batch: int, block: int = 32) -> float:
    import torch

    loss = torch.tensor(float("nan"))
    for _ in range(steps):
        starts = torch.randint(0, len(data) - block - 1, (batch,), generator=generator)
        inputs = torch.stack([data[s : s + block] for s in starts])
        loss = model(input_ids=inputs, labels=inputs).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    return float(loss.detach())


if __name__ == "__main__":  # build one by hand: python -m tests.tiny_model /tmp/tiny
    import sys

    print(build_tiny_lm(Path(sys.argv[1])))
