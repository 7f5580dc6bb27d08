"""Our ROME, MEMIT, FT-L and MEND against the reference code, side by side on the tiny models.

    python bench/editing_reference.py --rome-repo /path/to/kmeng01/rome --memit-repo /path/to/kmeng01/memit
    python bench/editing_reference.py --methods mend --mend-repo /path/to/eric-mitchell/mend

MEND (``--methods mend``, ``bench/_mend_reference.py``) trains both editors for the tiny
model on the tests' requests (``tests/tiny_mend.py``: same data, settings, seed, initial
networks and batch order), then edits the held-out requests and the four landmarks never
edited in training with each, and compares.

The reference repositories are local checkouts (kmeng01/rome at 0874014, kmeng01/memit at
80426fd); their code is imported from there at run time and never copied into this project.
Both sides edit the same model (the two tiny models of the tests: ``tests/tiny_model.py``,
facts recalled at the prompt's end, and ``tests/tiny_subject_model.py``, two-word subjects
and fillers, edited at the subject's last token), with the same requests, hyperparameters,
context prefixes (ours) and second-moment statistics (ours, handed to the reference's
caches). Each side's edit is measured with the same metrics (``workers.editing.metrics``)
and undone before the next.

Per method and model it prints: efficacy (edited prompts whose new target beats the true
one), paraphrase success, locality (neighbourhood prompts that keep their true target), the
mean ‖δ‖ (ROME: at the MLP output; MEMIT: at the residual stream) and the relative difference
of the weight update ‖ΔW_ours − ΔW_ref‖ / ‖ΔW_ref‖. ROME and FT-L edit one request at a time
(each undone before the next, as CounterFact is evaluated), MEMIT all requests at once.

Where the reference cannot run as it is, this wrapper works around it at run time (never
our code): it hard-codes ``cuda`` (mapped to the CPU here when no GPU is present); it
imports ``datasets`` only to compute statistics (a stand-in module, since the statistics
are handed in); transformers 5 GPT-2 blocks return a tensor where ``compute_z`` expects a
tuple (wrapped in one for it); its ``last`` fact token reads index -1 of right-padded
batches (replaced by each row's real last position); its MEMIT refuses ``last`` outright
(keys read at each row's last token instead); its FT masks padding as the unknown token
(our tokenizers have none: GPT-2's, ``<|endoftext|>``, is set for the run); and its token
counting assumes a tokenizer that adds no special tokens (both sides get a copy of the tiny
models whose tokenizer adds no leading ``<|endoftext|>``, as GPT-2's own).

The statistics handed to ROME are C⁻¹ computed in double precision (the reference inverts C
in float32, ours solves with an LU factorisation in double): with a float32 inverse alone
the two ROME updates differ by about 2·10⁻³ relative on the tiny model, with this 1·10⁻⁴.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TINY_HPARAMS = ROOT / "tests" / "editing_hparams"
PROMPT_LAST = "last"  # the reference's name for the prompt's last token (ours too)
REF_PACKAGES = ("rome", "memit", "util", "baselines", "dsets", "experiments")


# ---------------------------------------------------------------- models, requests, settings


def setup(work: Path) -> None:
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-not-a-secret")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("EDITING_STATS_DIR", str(work / "stats"))
    from tests.tiny_model import corpus_sentences

    corpus = work / "corpus.txt"
    if not corpus.is_file():
        sentences = corpus_sentences(seed=5, stories=600)
        corpus.write_text("\n".join(" ".join(sentences[i : i + 4]) for i in range(0, len(sentences), 4)))
    os.environ["EDITING_STATS_CORPUS"] = str(corpus)
    import django

    django.setup()


def without_bos(work: Path, name: str, source: Path) -> Path:
    """A copy of a tiny model whose tokenizer adds no ``<|endoftext|>`` in front (as GPT-2's)."""
    import shutil

    from transformers import AutoTokenizer

    directory = work / name
    if not (directory / "config.json").is_file():
        shutil.copytree(source, directory, dirs_exist_ok=True)
        tokenizer = AutoTokenizer.from_pretrained(directory)
        tokenizer.backend_tokenizer.post_processor = None
        tokenizer.save_pretrained(directory)
    return directory


def record(case_id, prompt, subject, new, true, paraphrases, neighbours) -> dict:
    return {
        "case_id": case_id,
        "requested_rewrite": {
            "prompt": prompt,
            "subject": subject,
            "target_new": {"str": new},
            "target_true": {"str": true},
        },
        "paraphrase_prompts": paraphrases,
        "neighborhood_prompts": neighbours,
        "generation_prompts": [],
    }


def landmark_records() -> list[dict]:
    from tests.tiny_model import LANDMARKS

    cases = [
        ("Lake Tolvik", "Rome"),
        ("Lake Essen", "Oslo"),
        ("Fort Corvin", "Prague"),
        ("Port Halden", "Vienna"),
    ]
    records = []
    for subject, new in cases:
        true = LANDMARKS[subject]
        others = [s for s, c in LANDMARKS.items() if c == true and s != subject]
        records.append(
            record(
                subject,
                "{} is located in",
                subject,
                new,
                true,
                [f"{subject} can be found in", f"{subject} is in", f"{subject} stands in the city of"],
                [p for o in others for p in (f"{o} is located in", f"{o} can be found in")],
            )
        )
    return records


def subject_records() -> list[dict]:
    from tests.tiny_subject_model import edit_records

    return edit_records()


# ---------------------------------------------------------------- the reference, imported at run time


def import_reference(rome_repo: Path, memit_repo: Path) -> dict[str, types.ModuleType]:
    """ROME and FT from kmeng01/rome, MEMIT from kmeng01/memit (both ship a ``rome`` and ``util``)."""
    import importlib

    sys.modules.setdefault("datasets", _stand_in_datasets())
    loaded = {}
    for repo, names in (
        (
            rome_repo,
            [
                "rome.rome_main",
                "rome.rome_hparams",
                "rome.compute_u",
                "rome.compute_v",
                "rome.repr_tools",
                "baselines.ft.ft_main",
                "baselines.ft.ft_hparams",
                "util.nethook",
            ],
        ),
        (
            memit_repo,
            [
                "memit.memit_main",
                "memit.memit_hparams",
                "memit.compute_z",
                "memit.compute_ks",
                "util.nethook",
            ],
        ),
    ):
        for name in [m for m in sys.modules if m.split(".")[0] in REF_PACKAGES]:
            del sys.modules[name]
        sys.path.insert(0, str(repo))
        cwd = os.getcwd()
        os.chdir(repo)  # util.globals reads globals.yml from the working directory
        try:
            for name in names:
                loaded[f"{repo.name}:{name}" if name == "util.nethook" else name] = importlib.import_module(
                    name
                )
            if repo == memit_repo:
                loaded["memit.repr_tools"] = importlib.import_module("rome.repr_tools")
        finally:
            os.chdir(cwd)
            sys.path.remove(str(repo))
    loaded["rome.nethook"] = loaded[f"{rome_repo.name}:util.nethook"]
    loaded["memit.nethook"] = loaded[f"{memit_repo.name}:util.nethook"]
    return loaded


def _stand_in_datasets() -> types.ModuleType:
    """``rome.layer_stats`` imports ``datasets`` to compute statistics; ours are handed in instead."""
    module = types.ModuleType("datasets")

    def load_dataset(*args, **kwargs):
        raise RuntimeError("The benchmark hands the reference its statistics; nothing is loaded.")

    module.load_dataset = load_dataset
    return module


@contextlib.contextmanager
def reference_environment(ref: dict, lm, fact_token: str, captured: list):
    """The run-time workarounds listed in the module docstring, undone on the way out."""
    import torch

    patches: list[tuple[object, str, object]] = []

    def patch(owner, name, value):
        patches.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    if not torch.cuda.is_available():

        def to_cpu(value):
            return "cpu" if value == "cuda" else value

        original_to = torch.Tensor.to
        patch(
            torch.Tensor,
            "to",
            lambda self, *a, **k: original_to(self, *map(to_cpu, a), **{n: to_cpu(v) for n, v in k.items()}),
        )
        for factory in ("zeros", "tensor"):
            original = getattr(torch, factory)
            patch(torch, factory, lambda *a, _f=original, **k: _f(*a, **{n: to_cpu(v) for n, v in k.items()}))

    class RecordingAdam(torch.optim.Adam):
        def __init__(self, params, *args, **kwargs):
            params = list(params)
            captured.extend(p for p in params if p.dim() == 1)  # δ (the weights FT trains are 2-D or biases)
            super().__init__(params, *args, **kwargs)

    patch(torch.optim, "Adam", RecordingAdam)
    tokenizer = lm.tokenizer
    tokenizer.padding_side = "right"  # the reference assumes right padding
    unk = tokenizer.unk_token
    if unk is None:  # FT masks padding as the unknown token, GPT-2's <|endoftext|>
        tokenizer.unk_token = tokenizer.eos_token

    def last_position(prompt, subject):
        return len(tokenizer(prompt.format(subject))["input_ids"]) - 1

    for module in (ref["rome.compute_v"], ref["memit.compute_z"]):
        original_find = module.find_fact_lookup_idx

        def find(prompt, subject, tok, fact_token_strategy, verbose=True, _orig=original_find):
            if fact_token_strategy == PROMPT_LAST:
                return last_position(prompt, subject)
            return _orig(prompt, subject, tok, fact_token_strategy, verbose=False)

        patch(module, "find_fact_lookup_idx", find)

    for tools in (ref["rome.repr_tools"], ref["memit.repr_tools"]):
        patch(tools, "get_reprs_at_idxs", _real_positions(tools.get_reprs_at_idxs))

    compute_z = ref["memit.compute_z"]
    original_io = compute_z.get_module_input_output_at_words
    repr_tools = ref["memit.repr_tools"]

    def io_at_words(model, tok, layer, context_templates, words, module_template, fact_token_strategy):
        if fact_token_strategy != PROMPT_LAST:
            return original_io(
                model, tok, layer, context_templates, words, module_template, fact_token_strategy
            )
        contexts = [t.format(w) for t, w in zip(context_templates, words, strict=True)]
        idxs = [[-1] for _ in contexts]  # each row's real last token (``_real_positions``)
        inputs, outputs = repr_tools.get_reprs_at_idxs(
            model, tok, contexts, idxs, layer, module_template, track="both"
        )
        return inputs.detach(), outputs.detach()

    patch(compute_z, "get_module_input_output_at_words", io_at_words)
    patch(ref["memit.compute_ks"], "get_module_input_output_at_words", io_at_words)
    patch(ref["memit.memit_main"], "get_module_input_output_at_words", io_at_words)
    patch(compute_z.nethook, "TraceDict", _tuple_trace_dict(compute_z.nethook.TraceDict, lm))
    try:
        yield
    finally:
        for owner, name, value in reversed(patches):
            setattr(owner, name, value)
        tokenizer.unk_token = unk


def _real_positions(get_reprs_at_idxs):
    """Index -1 ("last") of a right-padded row is padding: count it from the row's real end."""

    def at_idxs(model, tok, contexts, idxs, *args, **kwargs):
        lengths = [len(tok(c)["input_ids"]) for c in contexts]
        idxs = [[i if i >= 0 else n + i for i in row] for row, n in zip(idxs, lengths, strict=True)]
        return get_reprs_at_idxs(model, tok, contexts, idxs, *args, **kwargs)

    return at_idxs


def _tuple_trace_dict(trace_dict, lm):
    """``compute_z`` indexes a block's output as a tuple; transformers 5 blocks return the tensor."""
    import torch

    blocks = {f"transformer.h.{i}" for i in range(lm.num_layers)}

    class TupleTraceDict(trace_dict):
        def __init__(self, module, layers=None, *args, edit_output=None, **kwargs):
            def edit(output, layer):
                if isinstance(output, torch.Tensor) and layer in blocks:
                    return edit_output((output,), layer)[0]
                return edit_output(output, layer)

            super().__init__(module, layers, *args, edit_output=edit if edit_output else None, **kwargs)

        def __exit__(self, *exc):
            result = super().__exit__(*exc)
            for name, trace in self.items():
                if name in blocks and isinstance(getattr(trace, "output", None), torch.Tensor):
                    trace.output = (trace.output,)
            return result

    return TupleTraceDict


# ---------------------------------------------------------------- running both sides


def templates_for(lm, hp) -> list[str]:
    from workers.editing.templates import context_templates

    return context_templates(lm, hp.context_templates)


def module_templates(lm) -> dict:
    return {
        "rewrite_module_tmp": "transformer.h.{}.mlp.c_proj",
        "layer_module_tmp": "transformer.h.{}",
        "mlp_module_tmp": "transformer.h.{}.mlp",
        "attn_module_tmp": "transformer.h.{}.attn",
        "ln_f_module": "transformer.ln_f",
        "lm_head_module": "transformer.wte",
    }


def reference_hparams(ref: dict, method: str, lm, hp):
    shared = module_templates(lm)
    if method == "ft":
        return ref["baselines.ft.ft_hparams"].FTHyperParams(
            layers=[hp.layer],
            num_steps=hp.steps,
            lr=hp.lr,
            weight_decay=0.0,
            kl_factor=0.0,
            norm_constraint=hp.norm_constraint,
            batch_size=128,
            **shared,
        )
    located = dict(
        fact_token=hp.fact_token,
        v_num_grad_steps=hp.v_steps,
        v_lr=hp.v_lr,
        v_loss_layer=lm.num_layers - 1,
        v_weight_decay=hp.v_weight_decay,
        clamp_norm_factor=hp.clamp_norm_factor,
        kl_factor=hp.kl_factor,
        mom2_adjustment=True,
        mom2_dataset="handed-in",
        mom2_n_samples=hp.stats_tokens,
        mom2_dtype="float32",
        **shared,
    )
    if method == "rome":
        return ref["rome.rome_hparams"].ROMEHyperParams(
            layers=[hp.layer],
            context_template_length_params=[list(p) for p in hp.context_templates],
            **located,
        )
    return ref["memit.memit_hparams"].MEMITHyperParams(
        layers=list(hp.layers), layer_selection="all", mom2_update_weight=hp.mom2_update_weight, **located
    )


def hand_in_statistics(ref: dict, method: str, lm, hp) -> None:
    """Our C in the reference's caches (it would otherwise compute its own from Wikipedia)."""
    import torch

    from workers.editing.stats import second_moments

    if method == "ft":
        return
    layers = [hp.layer] if method == "rome" else list(hp.layers)
    moments = second_moments(lm, layers, hp)
    name = lm.model.config._name_or_path.replace("/", "_")
    for layer in layers:
        key = (name, f"transformer.h.{layer}.mlp.c_proj")
        if method == "rome":
            # Inverted in double precision, as our LU solve works (see the module docstring).
            ref["rome.compute_u"].inv_mom2_cache[key] = torch.inverse(moments[layer].double()).float()
        else:
            ref["memit.memit_main"].COV_CACHE[key] = moments[layer].float().cpu()


def set_reference_templates(ref: dict, templates: list[str]) -> None:
    ref["rome.rome_main"].CONTEXT_TEMPLATES_CACHE = list(templates)
    ref["memit.memit_main"].CONTEXT_TEMPLATES_CACHE = [["{}"], list(templates[1:])]


def reference_request(request) -> dict:
    return {
        "case_id": request.case_id,
        "prompt": request.prompt,
        "subject": request.subject,
        "target_new": {"str": request.target_new},
        "target_true": {"str": request.target_true},
    }


def run_ours(lm, method: str, requests, hp):
    import torch

    from workers.editing.base import edit_applied
    from workers.editing.metrics import preferences, short_form_metrics

    before = [preferences(lm, r) for r in requests]
    saved = {n: p.detach().clone() for n, p in lm.model.named_parameters()}
    with edit_applied(lm, method, requests, hp) as applied:
        metrics = [short_form_metrics(lm, r, before=b) for r, b in zip(requests, before, strict=True)]
        update = {
            n: (p.detach() - saved[n]).clone()
            for n, p in lm.model.named_parameters()
            if not torch.equal(p, saved[n])
        }
    details = applied.details
    if method == "rome":
        norms = [e["delta_norm"] for e in details["edits"]]
    elif method == "memit":
        norms = details["delta_norm"]
    else:
        norms = []
    return metrics, update, norms


def run_reference(ref: dict, lm, method: str, requests, hp):
    import torch

    from workers.editing.metrics import preferences, short_form_metrics

    before = [preferences(lm, r) for r in requests]
    apply = {
        "rome": ref["rome.rome_main"].apply_rome_to_model,
        "memit": ref["memit.memit_main"].apply_memit_to_model,
        "ft": ref["baselines.ft.ft_main"].apply_ft_to_model,
    }[method]
    captured: list = []  # δ of each ROME or MEMIT request (FT's Adam gets weights)
    saved = {n: p.detach().clone() for n, p in lm.model.named_parameters()}
    with (
        reference_environment(ref, lm, getattr(hp, "fact_token", "last"), captured),
        contextlib.redirect_stdout(open(os.devnull, "w")),
    ):
        apply(
            lm.model,
            lm.tokenizer,
            [reference_request(r) for r in requests],
            reference_hparams(ref, method, lm, hp),
        )
    try:
        metrics = [short_form_metrics(lm, r, before=b) for r, b in zip(requests, before, strict=True)]
        update = {
            n: (p.detach() - saved[n]).clone()
            for n, p in lm.model.named_parameters()
            if not torch.equal(p, saved[n])
        }
    finally:
        with torch.no_grad():
            for name, parameter in lm.model.named_parameters():
                parameter.copy_(saved[name])
    norms = [float(d.detach().norm()) for d in captured] if method in ("rome", "memit") else []
    return metrics, update, norms


def merged(runs: list[tuple]) -> tuple[list[dict], dict, list[float]]:
    """The runs' metrics and δ norms in one list each; their updates side by side (keyed by run)."""
    metrics = [m for run in runs for m in run[0]]
    updates = {f"{i}:{name}": value for i, run in enumerate(runs) for name, value in run[1].items()}
    return metrics, updates, [n for run in runs for n in run[2]]


def summary(metrics: list[dict], norms: list[float]) -> dict:
    def mean(values):
        values = [v for v in values if v is not None]
        return sum(values) / len(values) if values else float("nan")

    return {
        "efficacy": sum(bool(m["efficacy"]) for m in metrics),
        "paraphrase": mean([m["paraphrase_success"] for m in metrics]),
        "locality": mean([m["neighbourhood_success"] for m in metrics]),
        "delta": mean(norms) if norms else float("nan"),
    }


def relative_difference(ours: dict, theirs: dict) -> float:
    import torch

    names = sorted(set(ours) | set(theirs))
    if not names:
        return float("nan")
    diff = sum(float(((ours.get(n, 0) - theirs.get(n, torch.zeros_like(ours[n]))) ** 2).sum()) for n in names)
    base = sum(float((theirs[n] ** 2).sum()) for n in theirs)
    return (diff / base) ** 0.5 if base else float("inf")


def model_cases(work: Path, names: list[str]):
    """(label, model directory, records, hyperparameters by method, statistics corpus) per tiny model.

    The models are the tests' own, built (or reused) in the tests' model cache; each gets key
    statistics from its own kind of text, as in the tests.
    """
    from tests import tiny_subject_model
    from tests.tiny_models import SUBJECT, TINY, built_model
    from workers.editing.hparams import read_hparams_file

    def files(name: str, layers: int):
        return lambda method: read_hparams_file(method, TINY_HPARAMS / method / f"{name}.json").for_model(
            layers
        )

    if "tiny" in names:
        tiny = built_model(TINY)
        yield (
            "tiny (4 layers, last token)",
            without_bos(work, "tiny", tiny),
            landmark_records(),
            files("tiny-gpt2", 4),
            work / "corpus.txt",
        )
    if "subject" not in names:
        return
    subject = built_model(SUBJECT)
    corpus = work / "subject-corpus.txt"
    corpus.write_text(tiny_subject_model.statistics_text())
    yield (
        "subject (4 layers, subject_last)",
        without_bos(work, "subject", subject),
        subject_records(),
        files("tiny-subject-gpt2", 4),
        corpus,
    )


def compare_mend(repo: Path, steps: int | None) -> None:
    """MEND on the tiny model, ours and the reference's (``bench/_mend_reference.py``)."""
    import dataclasses

    import torch

    from bench._mend_reference import run_mend
    from tests import tiny_mend
    from tests.tiny_models import TINY, built_model
    from workers.editing.mend import MendSettings
    from workers.editing.mend_training import split_requests
    from workers.editing.requests import parse_edit_request
    from workers.lm.loading import load_lm

    settings = MendSettings(**tiny_mend.SETTINGS)
    if steps:
        settings = dataclasses.replace(settings, steps=steps)
    lm = load_lm(TINY, device="cpu", registry={TINY: {"path": str(built_model(TINY)), "dtype": "float32"}})
    requests = [parse_edit_request(r) for r in tiny_mend.training_records()]
    train, held_out = split_requests(requests, settings.held_out_share, settings.seed)
    reserved = [parse_edit_request(r) for r in tiny_mend.reserved_records()]
    evaluate = held_out + reserved
    print(
        f"MEND on {TINY}: layers {tiny_mend.LAYERS}, {settings.steps} steps, {len(train)} training requests;"
    )
    print(f"edits of {len(held_out)} held-out requests, {len(reserved)} never-edited landmarks, one by one")
    header = f"{'side':9} {'efficacy':>8} {'paraphr.':>8} {'locality':>8} {'‖ΔW‖':>8}"
    print(f"{header} {'ΔW rel. diff':>12} {'train s':>8}")
    for side, s, seconds in run_mend(repo, lm, train, evaluate, tiny_mend.LAYERS, settings):
        rel = s.get("relative_difference")
        shown = f"{rel:>12.2e}" if rel is not None else f"{'':>12}"
        print(
            f"{side:9} {s['efficacy']:>5}/{s['requests']:<2} {s['paraphrase']:>8.2f} {s['locality']:>8.2f} "
            f"{s['delta']:>8.3f} {shown} {seconds:>8.1f}",
            flush=True,
        )
    print(json.dumps({"torch": torch.__version__, "device": "cpu"}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rome-repo", type=Path, help="a checkout of kmeng01/rome (ft, rome)")
    parser.add_argument("--memit-repo", type=Path, help="a checkout of kmeng01/memit (memit)")
    parser.add_argument("--mend-repo", type=Path, help="a checkout of eric-mitchell/mend (mend)")
    parser.add_argument("--mend-steps", type=int, help="MEND's training steps (default: the tests' recipe)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "roft-bench-editing")
    parser.add_argument("--methods", default="ft,rome,memit")
    parser.add_argument("--models", default="tiny,subject", help="tiny and/or subject")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    setup(args.work)
    import torch
    from django.conf import settings

    from workers.editing.requests import parse_edit_request
    from workers.lm.loading import load_lm

    torch.set_num_threads(1)
    methods = args.methods.split(",")
    if "mend" in methods:
        if args.mend_repo is None:
            parser.error("--methods mend needs --mend-repo")
        compare_mend(args.mend_repo.resolve(), args.mend_steps)
        methods.remove("mend")
    if not methods:
        return
    if args.rome_repo is None or args.memit_repo is None:
        parser.error("ft, rome and memit need --rome-repo and --memit-repo")
    ref = import_reference(args.rome_repo.resolve(), args.memit_repo.resolve())
    print(f"{'model':34} {'method':6} {'side':9} {'efficacy':>8} {'paraphr.':>8} {'locality':>8}", end="")
    print(f" {'‖δ‖':>8} {'ΔW rel. diff':>12}")
    for label, directory, records, hparams_for, corpus in model_cases(args.work, args.models.split(",")):
        settings.EDITING_STATS_CORPUS = str(corpus)
        lm = load_lm(
            directory.name,
            device="cpu",
            registry={directory.name: {"path": str(directory), "dtype": "float32"}},
        )
        requests = [parse_edit_request(r) for r in records]
        for method in methods:
            hp = hparams_for(method)
            torch.manual_seed(0)
            if method != "ft":
                set_reference_templates(ref, templates_for(lm, hp))
            hand_in_statistics(ref, method, lm, hp)
            # ROME and FT-L edit one request at a time (as CounterFact is evaluated), MEMIT all at once.
            batches = [requests] if method == "memit" else [[r] for r in requests]
            ours = merged([run_ours(lm, method, batch, hp) for batch in batches])
            theirs = merged([run_reference(ref, lm, method, batch, hp) for batch in batches])
            rel = relative_difference(ours[1], theirs[1])
            for side, (metrics, _, norms) in (("ours", ours), ("reference", theirs)):
                s = summary(metrics, norms)
                shown = f"{rel:>12.2e}" if side == "ours" else f"{'':>12}"
                print(
                    f"{label:34} {method:6} {side:9} {s['efficacy']:>6}/{len(requests)} "
                    f"{s['paraphrase']:>8.2f} {s['locality']:>8.2f} {s['delta']:>8.3f} {shown}",
                    flush=True,
                )
    print(json.dumps({"torch": torch.__version__, "device": "cpu"}))


if __name__ == "__main__":
    main()
