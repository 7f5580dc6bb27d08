"""Worker speed: seconds per edit per method, and generated tokens per second by batch size.

    python bench/workers.py                      # a tiny GPT-2 built on the spot (CPU is fine)
    python bench/workers.py --model gpt2-xl      # a MODEL_REGISTRY name, a directory or a cached hub id

Edits are applied and undone the way ``edit_and_generate`` does (statistics and context
prefixes are prepared once, before timing). Generation samples with p = 0.9 and a fixed
number of new tokens per row. Methods and batch sizes are measured interleaved (one edit of
each method per round, one batch of each size per round), so a change in the machine's load
hits all of them alike; compare the ratios (ROME against MEMIT, batch 8 and 32 against
batch 1) more than the absolute numbers.

On CPU the benchmark uses one intra-op thread unless ``--threads`` says otherwise. With as
many threads as cores on a machine whose cores are busy with other work, every parallelised
operation waits at its barrier for a thread the system has descheduled: on 2 shared cores
that made the same edit 10× slower and batch 32 slower than batch 8 (more of its operations
are big enough to be parallelised). ``--threads 2`` shows that effect.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
METHODS = ["none", "ike", "ft", "rome", "memit"]
SUBJECTS = [
    ("Lake Tolvik", "Rome", "Paris"),
    ("Fort Corvin", "Prague", "Madrid"),
    ("Port Halden", "Oslo", "Lisbon"),
]


def setup(args, work: Path) -> str:
    """Django settings for the workers' code, a corpus for key statistics, and the model to use."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-not-a-secret")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("EDITING_STATS_DIR", str(work / "stats"))
    from tests.tiny_model import build_tiny_lm, corpus_sentences

    if not os.environ.get("EDITING_STATS_CORPUS"):
        corpus = work / "corpus.txt"
        sentences = corpus_sentences(seed=9, stories=2000)
        corpus.write_text("\n".join(" ".join(sentences[i : i + 4]) for i in range(0, len(sentences), 4)))
        os.environ["EDITING_STATS_CORPUS"] = str(corpus)
    import django

    django.setup()
    if args.model:
        return args.model
    print("building a tiny GPT-2 (4 layers, 64 wide) for the benchmark…", flush=True)
    return str(build_tiny_lm(work / "tiny", steps=60))


def edit_requests():
    from workers.editing.requests import parse_edit_request

    return [
        parse_edit_request(
            {
                "case_id": f"bench{i}",
                "requested_rewrite": {
                    "prompt": "{} is located in",
                    "subject": subject,
                    "target_new": {"str": new},
                    "target_true": {"str": true},
                },
            }
        )
        for i, (subject, new, true) in enumerate(SUBJECTS)
    ]


def time_edits(lm, repeats: int) -> dict[str, float]:
    """Median seconds per edit and method; each round edits once with every method in turn."""
    from workers.editing.base import edit_applied
    from workers.editing.passages import hparams_for

    requests = edit_requests()
    hparams = {method: hparams_for(lm, method) for method in METHODS}
    for method, hp in hparams.items():
        with edit_applied(lm, method, requests[:1], hp):  # warm-up: statistics, context prefixes
            pass
    runs: dict[str, list[float]] = {method: [] for method in METHODS}
    for i in range(repeats):
        for method, hp in hparams.items():
            start = time.perf_counter()
            with edit_applied(lm, method, [requests[i % len(requests)]], hp):
                _sync(lm)
            runs[method].append(time.perf_counter() - start)
    return {method: statistics.median(seconds) for method, seconds in runs.items()}


def time_generation(lm, batch_sizes: list[int], new_tokens: int, rounds: int = 3) -> dict[int, float]:
    """Best tokens per second per batch size; each round runs one batch of every size in turn."""
    from workers.lm.generation import GenerationRequest, Sampling, generate_texts

    prompts = ["The teacher walked to the river.", "Lake Tolvik is located in", "A young girl painted"]
    batches = {
        size: [
            GenerationRequest(
                prompts[i % len(prompts)], seed=i, sampling=Sampling(top_p=0.9), max_new_tokens=new_tokens
            )
            for i in range(size)
        ]
        for size in batch_sizes
    }
    generate_texts(lm, batches[batch_sizes[0]][:1], batch_size=1)  # warm-up
    rates = dict.fromkeys(batch_sizes, 0.0)
    for _ in range(rounds):  # the best round: shared machines add noise, never speed
        for size, requests in batches.items():
            start = time.perf_counter()
            outputs = generate_texts(lm, requests, batch_size=size, min_new_tokens=new_tokens)
            _sync(lm)
            rate = sum(o.new_tokens for o in outputs) / (time.perf_counter() - start)
            rates[size] = max(rates[size], rate)
    return rates


def _sync(lm) -> None:
    import torch

    if lm.device.type == "cuda":
        torch.cuda.synchronize()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", help="a MODEL_REGISTRY name, a directory or a cached hub id")
    parser.add_argument("--device", help="cuda or cpu (default: cuda when present)")
    parser.add_argument(
        "--threads", type=int, default=1, help="intra-op threads on CPU (default 1: see above)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed edits per method (median reported)")
    parser.add_argument("--new-tokens", type=int, default=48)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-workers-") as work:
        run(args, Path(work))


def run(args, work: Path) -> None:
    model = setup(args, work)

    import torch

    from workers.lm.loading import load_lm

    lm = load_lm(model, device=args.device)
    if lm.device.type == "cpu":
        torch.set_num_threads(args.threads)
    where = (
        torch.cuda.get_device_name(lm.device)
        if lm.device.type == "cuda"
        else f"CPU, {torch.get_num_threads()} intra-op thread(s) on {os.cpu_count()} cores"
    )
    print(f"model {lm.name} ({lm.num_layers} layers, {lm.dtype}) on {where}")
    print(_load_average("at the start"))

    print("\nseconds per edit (apply, then restore), median of", args.repeats, "interleaved rounds")
    seconds = time_edits(lm, args.repeats)
    for method, value in seconds.items():
        print(f"  {method:<6} {value:8.3f} s")
    print(f"  ROME / MEMIT: {seconds['rome'] / seconds['memit']:.2f}")

    rates = time_generation(lm, [1, 8, 32], args.new_tokens, rounds=args.repeats)
    print(
        f"\ngenerated tokens per second ({args.new_tokens} new tokens a row, p = 0.9, best of {args.repeats})"
    )
    for batch, rate in rates.items():
        print(f"  batch {batch:>2}  {rate:10.1f} tok/s   ×{rate / rates[1]:.1f} of batch 1")
    print(_load_average("at the end"))


def _load_average(when: str) -> str:
    """The machine's load next to the figures: a load above the core count makes them slower."""
    one, five, _ = os.getloadavg()
    return f"load average {when}: {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


if __name__ == "__main__":
    main()
