"""Worker speed: MEND's training, seconds per edit per method, generated tokens per second by batch size.

    python bench/workers.py                      # the tests' tiny GPT-2 (built or read from its cache)
    python bench/workers.py --threads 1,2        # the same figures under each thread count, one process
    python bench/workers.py --model gpt2-xl      # a MODEL_REGISTRY name, a directory or a cached hub id
    python bench/workers.py --mend-steps 1000    # a longer MEND training (0: no MEND at all)

MEND needs an editor trained for the model before it can edit, so the bench first trains one
the way the ``train_mend`` job does (``workers.editing.mend_training.train_mend``, on the
device the other methods use), on the tiny model's edit requests in ``train_mend``'s data
format (``tests/tiny_mend.py``: made-up landmarks, 84 requests, a fifth held out): the tests'
recipe on the tiny model, the job's defaults on any other. It prints the training's seconds in
all and per step, then the held-out measurement's, and the load average; the editor it saved
is the one ``mend`` edits with in the interleaved rounds below.

Edits are applied and undone the way ``edit_and_generate`` does (statistics and context
prefixes are prepared once, before timing). Generation samples with p = 0.9 and a fixed
number of new tokens per row. Methods and batch sizes are measured interleaved (one edit of
each method per round, one batch of each size per round), so a change in the machine's load
hits all of them alike; compare the ratios (ROME against MEMIT, batch 8 and 32 against
batch 1) more than the absolute numbers. Each figure is printed with its range over rounds.

Why ROME costs no more than MEMIT: both spend nearly all their time optimising δ (``values``:
up to ``v_steps`` forward and backward passes over the prompt after each context prefix);
MEMIT then also reads keys and solves a least-squares system per layer. The printed δ steps
show the work each did. ROME 20× slower than MEMIT (issue 16: 25.3 s against 1.16 s) was
not the code: on CPU with as many intra-op threads as cores on a machine whose cores are
busy with other work, every parallelised operation waits at its barrier for a thread the
system has descheduled, so each of ROME's hundreds of small operations cost a scheduler
time slice. ``--threads 1,2`` shows that effect side by side. The same effect made batch 32
generate fewer tokens per second than batch 8 (its operations are big enough to be
parallelised, batch 8's mostly are not).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workers.editing.mend import MendSettings

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
METHODS = ["none", "ike", "ft", "rome", "memit"]
MEND = "mend"  # timed with the others once the bench has trained its editor (--mend-steps)
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
    from tests.tiny_model import corpus_sentences

    if not os.environ.get("EDITING_STATS_CORPUS"):
        corpus = work / "corpus.txt"
        sentences = corpus_sentences(seed=9, stories=2000)
        corpus.write_text("\n".join(" ".join(sentences[i : i + 4]) for i in range(0, len(sentences), 4)))
        os.environ["EDITING_STATS_CORPUS"] = str(corpus)
    import django

    django.setup()
    if args.model:
        return args.model
    from tests.tiny_models import TINY, built_model

    print("the tests' tiny GPT-2 (4 layers, 64 wide), built once into the tests' model cache", flush=True)
    return str(built_model(TINY))


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


@dataclass(frozen=True)
class MendTraining:
    """What training the bench's MEND editor took, and where the editor is."""

    editor: Path
    steps: int
    requests: int
    held_out: dict  # train_mend's held-out figures (efficacy, paraphrase_success, locality, …)
    layers: list[int]
    training_seconds: float  # train_mend's own clock: building the networks and the steps
    total_seconds: float  # the whole call: also tokenising, saving and the held-out edits


def mend_training_data(work: Path) -> Path:
    """Edit requests in ``train_mend``'s data format: the tiny model's (``tests/tiny_mend.py``)."""
    from tests.tiny_mend import training_records, write_requests

    return write_requests(work / "mend-requests.jsonl", training_records())


def mend_recipe(
    model: str | None, data: Path, output: Path, steps: int
) -> tuple[MendSettings, list[int] | None]:
    """(settings, layers): the tests' recipe for their tiny model, else the ``train_mend`` job's
    defaults for ``model`` (the last three layers)."""
    from workers.editing.mend import MendSettings  # imports torch: after setup()

    if not model:
        from tests.tiny_mend import LAYERS, SETTINGS

        return MendSettings(**(SETTINGS | {"steps": steps})), LAYERS
    from annotation.errors import checked
    from annotation.job_parameters import TrainMendParameters
    from workers.editing.mend_training import job_settings

    given = {"model": model, "requests": str(data), "output": str(output), "steps": steps}
    parameters = TrainMendParameters.from_validated(checked(TrainMendParameters.Serializer, given))
    return job_settings(parameters), None


def train_mend_editor(lm, model: str | None, steps: int, work: Path) -> MendTraining:
    """MEND's editor for ``lm``, trained into a new folder under ``work`` as the job trains it."""
    from workers.editing.mend_training import train_mend

    data = mend_training_data(work)
    output = Path(tempfile.mkdtemp(prefix="mend-editor-", dir=work))
    settings, layers = mend_recipe(model, data, output, steps)
    start = time.perf_counter()
    result = train_mend(lm, data=data, output=output, layers=layers, settings=settings)
    _sync(lm)
    total = time.perf_counter() - start
    definition = json.loads((output / "definition.json").read_text(encoding="utf-8"))
    return MendTraining(
        editor=output,
        steps=steps,
        requests=definition["data"]["requests"],
        held_out=result["held_out"],
        layers=definition["layers"],
        training_seconds=result["seconds"],
        total_seconds=total,
    )


def time_edits(
    lm, repeats: int, methods: list[str] = METHODS, mend_editor: Path | None = None
) -> tuple[dict[str, list[float]], dict[str, list[int]]]:
    """Seconds per edit (each round edits once with every method in turn) and δ steps per edit;
    ``mend`` joins the methods when ``mend_editor`` names a trained editor."""
    from workers.editing.base import edit_applied
    from workers.editing.passages import hparams_for

    requests = edit_requests()
    hparams = {method: hparams_for(lm, method) for method in methods}
    if mend_editor is not None:
        hparams[MEND] = hparams_for(lm, MEND, path=str(mend_editor))
    for method, hp in hparams.items():
        with edit_applied(lm, method, requests[:1], hp):  # warm-up: statistics, context prefixes
            pass
    runs: dict[str, list[float]] = {method: [] for method in hparams}
    steps: dict[str, list[int]] = {method: [] for method in hparams}
    for i in range(repeats):
        for method, hp in hparams.items():
            start = time.perf_counter()
            with edit_applied(lm, method, [requests[i % len(requests)]], hp) as applied:
                _sync(lm)
            runs[method].append(time.perf_counter() - start)
            steps[method].extend(_delta_steps(applied.details))
    return runs, steps


def _delta_steps(details: dict) -> list[int]:
    """The optimisation steps an edit took (ROME, MEMIT: δ's, per request; FT: the weights')."""
    if isinstance(details.get("edits"), list):
        return [edit["steps"] for edit in details["edits"] if "steps" in edit]
    steps = details.get("steps", [])
    return [steps] if isinstance(steps, int) else list(steps)


def time_generation(lm, batch_sizes: list[int], new_tokens: int, rounds: int = 3) -> dict[int, list[float]]:
    """Tokens per second per batch size and round; each round runs one batch of every size in turn."""
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
    rates: dict[int, list[float]] = {size: [] for size in batch_sizes}
    for _ in range(rounds):
        for size, requests in batches.items():
            start = time.perf_counter()
            outputs = generate_texts(lm, requests, batch_size=size, min_new_tokens=new_tokens)
            _sync(lm)
            rate = sum(o.new_tokens for o in outputs) / (time.perf_counter() - start)
            rates[size].append(rate)
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
        "--threads",
        default="1",
        help="intra-op thread counts on CPU, comma-separated, each measured in turn (default 1: see above)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed edits per method (median reported)")
    parser.add_argument("--new-tokens", type=int, default=48)
    parser.add_argument(
        "--mend-steps",
        type=int,
        default=200,
        help="training steps of MEND's editor, timed, then mend timed per edit (default 200; 0: no MEND)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-workers-") as work:
        run(args, Path(work))


def run(args, work: Path) -> None:
    model = setup(args, work)

    import torch

    from workers.lm.loading import load_lm

    lm = load_lm(model, device=args.device)
    thread_counts = [int(t) for t in args.threads.split(",")] if lm.device.type == "cpu" else [0]
    for threads in thread_counts:
        if threads:
            torch.set_num_threads(threads)
        where = (
            torch.cuda.get_device_name(lm.device)
            if lm.device.type == "cuda"
            else f"CPU, {torch.get_num_threads()} intra-op thread(s) on {os.cpu_count()} cores"
        )
        print(f"\nmodel {lm.name} ({lm.num_layers} layers, {lm.dtype}) on {where}")
        print(_load_average("at the start"))
        editor = None
        if args.mend_steps > 0:
            training = train_mend_editor(lm, args.model, args.mend_steps, work)
            report_mend_training(training)
            editor = training.editor
        report_edits(*time_edits(lm, args.repeats, mend_editor=editor), args.repeats)
        report_generation(time_generation(lm, [1, 8, 32], args.new_tokens, rounds=args.repeats), args)
        print(_load_average("at the end"))


def report_edits(seconds: dict[str, list[float]], steps: dict[str, list[int]], repeats: int) -> None:
    print(f"seconds per edit (apply, then restore): median [min–max] of {repeats} interleaved rounds")
    for method, values in seconds.items():
        work = f"   steps {min(steps[method])}–{max(steps[method])}" if steps[method] else ""
        spread = f"[{min(values):.3f}–{max(values):.3f}]"
        print(f"  {method:<6} {statistics.median(values):8.3f} s  {spread}{work}")
    ratios = [rome / memit for rome, memit in zip(seconds["rome"], seconds["memit"], strict=True)]
    print(
        f"  ROME / MEMIT: {statistics.median(seconds['rome']) / statistics.median(seconds['memit']):.2f}"
        f" (per round {min(ratios):.2f}–{max(ratios):.2f})"
    )


def report_mend_training(training: MendTraining) -> None:
    held, seconds = training.held_out, training.training_seconds
    layers = ", ".join(map(str, training.layers))
    print(
        f"MEND editor trained: {training.steps} steps on {training.requests} requests "
        f"({held['requests']} held out), layers {layers}"
    )
    print(f"  training {seconds:8.2f} s   {seconds / training.steps:.4f} s a step")
    figures = ", ".join(f"{key} {held[key]}" for key in ("efficacy", "paraphrase_success", "locality"))
    print(f"  saving and the held-out edits {training.total_seconds - seconds:.2f} s   ({figures})")
    print(_load_average("after training MEND"))


def report_generation(rates: dict[int, list[float]], args) -> None:
    print(
        f"generated tokens per second ({args.new_tokens} new tokens a row, p = 0.9): "
        f"median [min–max] of {args.repeats} interleaved rounds"
    )
    base = statistics.median(rates[1])
    for batch, values in rates.items():
        rate = statistics.median(values)
        print(
            f"  batch {batch:>2}  {rate:10.1f} tok/s  [{min(values):.1f}–{max(values):.1f}]"
            f"   ×{rate / base:.1f} of batch 1"
        )


def _load_average(when: str) -> str:
    """The machine's load next to the figures: a load above the core count makes them slower."""
    one, five, _ = os.getloadavg()
    return f"load average {when}: {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


if __name__ == "__main__":
    main()
