"""Fixtures for the worker tests: the tiny models, their registry entries and settings, edit requests.

The models are trained once per recipe and kept in a cache shared by later runs
(``tests/tiny_models.py``); a missing or outdated one is rebuilt by the same code. Nothing
is downloaded.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests import tiny_model, tiny_subject_model
from tests.tiny_models import MEND_EDITOR, SIM, SUBJECT, TINY, built_model

SIM_SECOND = "tiny-sim-gpt2-b"  # the simulatability model under a second name: a second follow-up generator
HPARAMS_DIR = Path(__file__).resolve().parent / "editing_hparams"


def model_dir(name: str) -> Path:
    """The cached folder of tiny model ``name``, for a test that is about to load it."""
    import torch

    # Tiny tensors on shared cores: one thread wastes least. ROFT_TEST_TORCH_THREADS runs the
    # tests under another count, to check their margins survive a different summation order.
    torch.set_num_threads(int(os.environ.get("ROFT_TEST_TORCH_THREADS", "1")))
    return built_model(name)


@pytest.fixture(scope="session")
def tiny_lm_dir() -> Path:
    """A directory holding the tiny model and its tokenizer (``from_pretrained`` loads it)."""
    return model_dir(TINY)


@pytest.fixture(scope="session")
def tiny_mend_dir(tiny_lm_dir) -> Path:
    """MEND's editor trained for the tiny model (``tests/tiny_mend.py``), cached like the models."""
    return model_dir(MEND_EDITOR)


@pytest.fixture(scope="session")
def subject_lm():
    """The second tiny model (multi-token subjects, facts at the subject), loaded once."""
    from workers.lm.loading import load_lm

    directory = model_dir(SUBJECT)
    return load_lm(SUBJECT, registry={SUBJECT: {"path": str(directory), "dtype": "float32"}})


@pytest.fixture(scope="session")
def tiny_sim_registry() -> dict:
    """Registry entries for the simulatability tiny model, under two names (two generators)."""
    directory = model_dir(SIM)
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


def worker_setting_values(tiny_registry, stats_corpus, stats_dir) -> dict:
    """The settings a GPU worker would have, pointing at the tiny model and its files."""
    return {
        "MODEL_REGISTRY": tiny_registry,
        "EDITING_HPARAMS_DIR": str(HPARAMS_DIR),
        "EDITING_STATS_CORPUS": str(stats_corpus),
        "EDITING_STATS_DIR": stats_dir,
    }


@pytest.fixture
def worker_settings(settings, tiny_registry, stats_corpus, stats_dir):
    """The test's settings with ``worker_setting_values``."""
    for name, value in worker_setting_values(tiny_registry, stats_corpus, stats_dir).items():
        setattr(settings, name, value)
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
