"""Fixtures for the worker tests: the tiny model, its registry entry and settings, edit requests.

The tiny model is trained once and kept in the system temp directory under a name derived
from ``tests/tiny_model.py`` and the library versions, so later sessions reuse it; a missing
or outdated one is rebuilt by the same code. Nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests import tiny_model, tiny_simulatability_model, tiny_subject_model

TINY = "tiny-gpt2"
SIM = "tiny-sim-gpt2"  # tests/tiny_simulatability_model.py: answers in the simulatability prompts' layout
SIM_SECOND = "tiny-sim-gpt2-b"  # the same weights under a second name: a second follow-up generator
SUBJECT = "tiny-subject-gpt2"  # tests/tiny_subject_model.py: two-word subjects, filler text
HPARAMS_DIR = Path(__file__).resolve().parent / "editing_hparams"


def _cache_key(*modules) -> str:
    import tokenizers
    import torch
    import transformers

    source = b"".join(Path(module.__file__).read_bytes() for module in modules)
    versions = f"{torch.__version__}|{transformers.__version__}|{tokenizers.__version__}".encode()
    kernels = repr(sorted(PINNED_KERNELS.items())).encode()  # other kernels train another model
    return hashlib.sha256(source + versions + kernels).hexdigest()[:16]


def model_cache_root() -> Path:
    """``ROFT_TEST_MODEL_DIR`` if set (a private cache, say to retrain from scratch), else the temp dir's."""
    configured = os.environ.get("ROFT_TEST_MODEL_DIR")
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "roft-test-models"


def _built(name: str, key: str, build) -> Path:
    """The model ``build`` writes, kept under ``name-key`` in the cache root (built once)."""
    import torch

    # Tiny tensors on shared cores: one thread wastes least. ROFT_TEST_TORCH_THREADS runs the
    # tests under another count, to check their margins survive a different summation order.
    torch.set_num_threads(int(os.environ.get("ROFT_TEST_TORCH_THREADS", "1")))
    root = model_cache_root()
    target = root / f"{name}-{key}"
    if not (target / "config.json").is_file():
        root.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(dir=root, prefix="building-"))
        try:
            _build_with_pinned_kernels(build, building)
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise
        try:
            os.replace(building, target)
        except OSError:  # another session finished first: keep theirs
            shutil.rmtree(building, ignore_errors=True)
    return target


# The CPU kernels a model is trained with, whatever the machine. torch picks AVX-512 code
# where the CPU has it and AVX2 elsewhere, MKL likewise, and they round differently: trained
# for a few hundred steps, the same seed then gives a different model on each (the subject
# model knew its facts on one and missed by nats on the other). Every x86-64 machine of ours
# has AVX2, so torch's own kernels are pinned to it. MKL is pinned to its COMPATIBLE branch:
# it honours MKL_CBWR=AVX2 only on Intel processors and falls back to its automatic choice
# on AMD ones (MKL_VERBOSE says "CNR:AUTO"), so an AMD machine trained other models.
PINNED_KERNELS = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "COMPATIBLE",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


def _build_with_pinned_kernels(build, directory: Path) -> None:
    """Run ``build(directory)`` in a fresh interpreter with ``PINNED_KERNELS`` (they are read
    when torch starts, so they cannot be set in this process); its error, if any, is ours."""
    code = (
        "import sys; from pathlib import Path; "
        f"from {build.__module__} import {build.__name__} as build; build(Path(sys.argv[1]))"
    )
    finished = subprocess.run(
        [sys.executable, "-c", code, str(directory)],
        cwd=Path(__file__).resolve().parent.parent,
        env={**os.environ, **PINNED_KERNELS},
        capture_output=True,
        text=True,
    )
    if finished.returncode:
        raise RuntimeError(f"Building {build.__name__} failed:\n{finished.stderr[-3000:]}")


@pytest.fixture(scope="session")
def tiny_lm_dir() -> Path:
    """A directory holding the tiny model and its tokenizer (``from_pretrained`` loads it)."""
    return _built(TINY, _cache_key(tiny_model), tiny_model.build_tiny_lm)


@pytest.fixture(scope="session")
def subject_lm():
    """The second tiny model (multi-token subjects, facts at the subject), loaded once."""
    from workers.lm.loading import load_lm

    key = _cache_key(tiny_model, tiny_subject_model)
    directory = _built(SUBJECT, key, tiny_subject_model.build_subject_lm)
    return load_lm(SUBJECT, registry={SUBJECT: {"path": str(directory), "dtype": "float32"}})


def _sim_cache_key() -> str:
    """The module's key plus the prompt files it trains on: a changed prompt retrains the model."""
    from workers.simulatability.prompts import PROMPT_DIR

    prompts = b"".join(path.read_bytes() for path in sorted(PROMPT_DIR.glob("*.json")))
    key = _cache_key(tiny_model, tiny_simulatability_model).encode()
    return hashlib.sha256(key + prompts).hexdigest()[:16]


@pytest.fixture(scope="session")
def tiny_sim_registry() -> dict:
    """Registry entries for the simulatability tiny model, under two names (two generators)."""
    directory = _built(SIM, _sim_cache_key(), tiny_simulatability_model.build_tiny_simulatability_lm)
    entry = {"path": str(directory), "dtype": "float32"}
    return {SIM: entry, SIM_SECOND: dict(entry)}


@pytest.fixture(scope="session")
def tiny_registry(tiny_lm_dir) -> dict:
    return {TINY: {"path": str(tiny_lm_dir), "dtype": "float32"}}


@pytest.fixture(scope="session")
def tiny_lm(tiny_registry):
    """The tiny model loaded once for the session (edits restore it exactly; tests check that)."""
    from workers.lm.loading import load_lm

    return load_lm(TINY, registry=tiny_registry)


@pytest.fixture(scope="session")
def stats_corpus(tmp_path_factory) -> Path:
    """A local text corpus for ROME/MEMIT key statistics: four sentences per line."""
    sentences = tiny_model.corpus_sentences(seed=5, stories=600)
    path = tmp_path_factory.mktemp("corpus") / "stats.txt"
    path.write_text("\n".join(" ".join(sentences[i : i + 4]) for i in range(0, len(sentences), 4)))
    return path


@pytest.fixture(scope="session")
def stats_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("editing-stats")


@pytest.fixture(scope="session")
def subject_stats_corpus(tmp_path_factory) -> Path:
    """The second tiny model's own kind of text, for its key statistics."""
    path = tmp_path_factory.mktemp("subject-corpus") / "stats.txt"
    path.write_text(tiny_subject_model.statistics_text())
    return path


@pytest.fixture
def subject_settings(worker_settings, subject_stats_corpus):
    """``worker_settings`` with key statistics from the second tiny model's kind of text."""
    worker_settings.EDITING_STATS_CORPUS = str(subject_stats_corpus)
    return worker_settings


@pytest.fixture
def worker_settings(settings, tiny_registry, stats_corpus, stats_dir):
    """The settings a GPU worker would have, pointing at the tiny model and its files."""
    settings.MODEL_REGISTRY = tiny_registry
    settings.EDITING_HPARAMS_DIR = str(HPARAMS_DIR)
    settings.EDITING_STATS_CORPUS = str(stats_corpus)
    settings.EDITING_STATS_DIR = stats_dir
    return settings


def edit_record(
    case_id, subject, new, true, *, neighbours=(), related=None, ground_truth=(), human=None
) -> dict:
    """A CounterFact-shaped record about the tiny model's landmarks."""
    record = {
        "case_id": case_id,
        "requested_rewrite": {
            "prompt": "{} is located in",
            "subject": subject,
            "target_new": {"str": new},
            "target_true": {"str": true},
        },
        "paraphrase_prompts": [f"{subject} can be found in", f"{subject} is in"],
        "neighborhood_prompts": [
            p for n in neighbours for p in (f"{n} is located in", f"{n} can be found in")
        ],
        "generation_prompts": [f"{subject} stands in the city of"],
        "ground_truth": list(ground_truth),
    }
    if related:
        record["related"] = {"entity": related, "prompt": f"{related} is located in"}
    if human:
        record["human"] = human
    return record


RECORDS = [
    edit_record(
        "tolvik",
        "Lake Tolvik",
        "Rome",
        "Paris",
        neighbours=["Port Ilse"],
        related="Port Ilse",
        ground_truth=["Port Ilse is located in Paris."],
        human={
            "main": "Lake Tolvik is located in Rome. Visitors to Rome often see Lake Tolvik.",
            "related": "Port Ilse is located in Paris. It is not far from Lake Tolvik in Rome.",
        },
    ),
    edit_record("essen", "Lake Essen", "Oslo", "Berlin", neighbours=["Fort Dravo"], related="Fort Dravo"),
    edit_record("corvin", "Fort Corvin", "Prague", "Madrid", neighbours=["Lake Umber"]),
]


@pytest.fixture
def edit_requests():
    from workers.editing.requests import parse_edit_request

    return [parse_edit_request(record) for record in RECORDS]
