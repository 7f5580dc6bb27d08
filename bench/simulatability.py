"""Follow-ups generated per second by the ``counterfactuals`` step, at batch 1, 8 and 32.

    python bench/simulatability.py                 # the tests' tiny simulatability model (built if missing)
    python bench/simulatability.py --model NAME    # a MODEL_REGISTRY name, a directory or a cached hub id

Each row is what the job does per follow-up: render the few-shot prompt for a starter
explanation, sample (top-p 0.95, the job's defaults, each row with its own seed), and parse
the text. Batch sizes are measured interleaved, round by round, so a change in the
machine's load hits them alike; read the ratios against batch 1. The share of parseable
follow-ups is printed too (a tiny model's, not a real one's). On CPU one intra-op thread
is used unless ``--threads`` says otherwise (see bench/workers.py for why).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._django import setup_django  # noqa: E402 - after the path

STARTERS = [
    ("Can a crow fly?", "yes", "It is a bird, and every bird can fly. So the answer is yes."),
    ("Can a trout climb trees?", "no", "It is a fish, and a fish cannot climb trees. So the answer is no."),
    ("Can a koala swim?", "no", "It is a climber, and a climber cannot swim. So the answer is no."),
]


def setup(args) -> str:
    setup_django()
    if args.model:
        return args.model
    from tests.tiny_models import SIM, built_model

    print("the tests' tiny simulatability model (built if missing: about half a CPU minute)…", flush=True)
    return str(built_model(SIM))


def requests_for(count: int, new_tokens: int, offset: int):
    from workers.lm.generation import GenerationRequest, Sampling
    from workers.simulatability.prompts import followups_prompt
    from workers.simulatability.questions import Question

    sampling = Sampling(top_p=0.95, temperature=1.0)
    rows = []
    for index in range(count):
        text, answer, explanation = STARTERS[index % len(STARTERS)]
        prompt = followups_prompt(Question("q", "yes_no", text=text), answer, explanation)
        rows.append(
            GenerationRequest(prompt, seed=offset + index, sampling=sampling, max_new_tokens=new_tokens)
        )
    return rows


def run(args, model: str) -> None:
    import torch

    from workers.lm.generation import generate_texts
    from workers.lm.loading import load_lm
    from workers.simulatability.parsing import parse_followup

    if args.threads:
        torch.set_num_threads(args.threads)
    lm = load_lm(model)
    print(f"model {lm.name} on {lm.device} ({lm.dtype}), {torch.get_num_threads()} thread(s)")
    generate_texts(lm, requests_for(2, args.new_tokens, 0), batch_size=2)  # warm-up
    rates: dict[int, list[float]] = {size: [] for size in args.batch_sizes}
    parsed = total = 0
    for round_number in range(args.rounds):
        for size in args.batch_sizes:
            rows = requests_for(max(size, args.min_rows), args.new_tokens, 1000 * round_number)
            started = time.perf_counter()
            outputs = generate_texts(lm, rows, batch_size=size)
            results = [parse_followup(o.text, "yes_no") for o in outputs]
            if lm.device.type == "cuda":
                torch.cuda.synchronize()
            rates[size].append(len(rows) / (time.perf_counter() - started))
            parsed += sum(1 for r in results if r.content)
            total += len(results)
    base = statistics.median(rates[args.batch_sizes[0]])
    print(f"{'batch':>6} {'follow-ups/s (median)':>22} {'vs batch ' + str(args.batch_sizes[0]):>12}")
    for size in args.batch_sizes:
        rate = statistics.median(rates[size])
        print(f"{size:>6} {rate:>22.1f} {rate / base:>11.1f}x")
    print(f"parseable follow-ups: {parsed}/{total} ({parsed / total:.0%}), max_new_tokens {args.new_tokens}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="default: the tests' tiny simulatability model")
    parser.add_argument(
        "--batch-sizes", type=lambda raw: [int(x) for x in raw.split(",")], default=[1, 8, 32]
    )
    parser.add_argument("--new-tokens", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--min-rows", type=int, default=32, help="rows per measurement at every batch size")
    parser.add_argument("--threads", type=int, default=None if os.environ.get("CUDA_VISIBLE_DEVICES") else 1)
    args = parser.parse_args()
    run(args, setup(args))


if __name__ == "__main__":
    main()
