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


def build_tiny_lm(
    directory: Path, *, steps: int = 450, batch: int = 32, lr: float = 3e-3, seed: int = 0
) -> Path:
    """Train the tokenizer and the model, save both to ``directory`` (loadable offline)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    torch.manual_seed(seed)
    lines = corpus_sentences(seed)
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
    bpe.post_processor = processors.TemplateProcessing(  # every text starts as the documents did
        single="<|endoftext|> $A", special_tokens=[("<|endoftext|>", bos)]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token="<|endoftext|>", eos_token="<|endoftext|>", pad_token="<|endoftext|>"
    )
    eos = tokenizer.eos_token_id

    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=128,
        n_embd=64,
        n_layer=4,
        n_head=4,
        bos_token_id=eos,
        eos_token_id=eos,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    model = GPT2LMHeadModel(config)
    stream = []
    for start in range(0, len(lines), 4):  # short documents: the first sentence has no leading space
        stream.extend(tokenizer(" ".join(lines[start : start + 4]))["input_ids"])
    data = torch.tensor(stream)
    block = 32
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    generator = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        starts = torch.randint(0, len(data) - block - 1, (batch,), generator=generator)
        inputs = torch.stack([data[s : s + block] for s in starts])
        loss = model(input_ids=inputs, labels=inputs).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    model.eval()
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    (directory / "training.json").write_text(json.dumps({"steps": steps, "final_loss": loss.item()}))
    return directory


if __name__ == "__main__":  # build one by hand: python -m tests.tiny_model /tmp/tiny
    import sys

    print(build_tiny_lm(Path(sys.argv[1])))
