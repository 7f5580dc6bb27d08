"""LLM rater speed: items rated per second at batch sizes 1, 8 and 32, per kind.

    python bench/llm_rater.py                  # the tests' tiny GPT-2 (built once, cached), CPU
    python bench/llm_rater.py --model NAME     # a MODEL_REGISTRY name, a directory or a cached hub id

Runs the rater's own code (``workers.raters.llm.prompt_item`` and ``answer_items``, log-prob
scoring, zero-shot) on unsaved items of the rater tests' studies (no database): a likert
item is 3 statements × 7 answers, a claim item a label and 3 evidence questions, a
simulation item one question of 3 answers. Batch sizes are measured interleaved, round by
round, so a change in the machine's load hits all of them alike; compare the ratios more
than the absolute figures. One intra-op thread on CPU unless ``--threads`` says otherwise.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._django import setup_django  # noqa: E402 - after the path

BATCHES = (1, 8, 32)
KINDS = ("likert", "claim", "simulation")


def setup(args) -> str:
    setup_django()
    if args.model:
        return args.model
    from tests.tiny_models import TINY, built_model

    print("the tests' tiny GPT-2 (4 layers, 64 wide; built on first use)…", flush=True)
    return str(built_model(TINY))


def items(kind: str, count: int):
    from annotation.kinds import get_kind
    from annotation.models import Item, Study
    from tests.rater_cases import CASES

    case = CASES[kind]
    study = Study(slug=f"bench-{kind}", kind=kind, config=get_kind(kind).validate_config(case.config))
    return study, [
        Item(pk=n + 1, study=study, external_id=f"{kind}-{n}", payload=case.payloads[n % len(case.payloads)])
        for n in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model")
    parser.add_argument("--items", type=int, default=32, help="items per measurement")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    model = setup(args)
    import torch

    from annotation.job_parameters import RateLLMParameters
    from workers.lm.loading import load_lm
    from workers.raters.llm import answer_items, prompt_item

    torch.set_num_threads(args.threads)
    lm = load_lm(model)
    print(f"model {model} on {lm.device} ({lm.dtype}), {args.items} items per measurement")
    for kind in KINDS:
        study, batch = items(kind, args.items)
        times: dict[int, list[float]] = {size: [] for size in BATCHES}
        for _ in range(args.rounds):
            for size in BATCHES:
                parameters = RateLLMParameters(
                    model=model, shots=0, seed=0, scoring="logprob", batch_size=size, max_new_tokens=8
                )
                started = time.perf_counter()
                prompted = [prompt_item(study.task_kind, study, item, [], seed=0, shots=0) for item in batch]
                answers = answer_items(lm, study.task_kind, prompted, parameters)
                times[size].append(time.perf_counter() - started)
                assert all(a.answer is not None for a in answers)
        questions = len(prompted[0].task.questions)
        figures = ", ".join(
            f"batch {size}: {args.items / statistics.median(times[size]):,.1f}" for size in BATCHES
        )
        print(f"{kind} ({questions} questions per item): items/s {figures}")


if __name__ == "__main__":
    main()
