"""MEND's editor for the tests' tiny model: edit requests about its landmarks, and the recipe.

Twelve landmarks are edited in training, each towards every city it is not in (84 requests,
a fifth held out); four landmarks, one in each of four cities, are never edited in training
(``RESERVED``): the test edits those with the trained editor, facts it has never seen edited.
The editor is trained once per recipe into the tests' model cache (``tests/tiny_models.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.tiny_model import CITIES, FACT_TEMPLATES, LANDMARKS

RESERVED = ("Port Ilse", "Mount Quen", "Fort Dravo", "Lake Umber")
LAYERS = [2, 3]
SETTINGS = {
    "modules": ("mlp_in", "mlp_out"),
    "rank": 1920,
    "hidden": 1,
    "steps": 1000,
    "lr": 1e-4,
    "edit_lr": 1e-4,
    "edit_weight": 0.1,
    "locality_weight": 1.0,
    "grad_clip": 100.0,
    "held_out_share": 0.2,
    "seed": 0,
}


def landmark_record(subject: str, new: str) -> dict:
    """A CounterFact-shaped request: paraphrases from the other templates, the landmark's
    sibling (same city) as the neighbourhood."""
    true = LANDMARKS[subject]
    siblings = [s for s, c in LANDMARKS.items() if c == true and s != subject]
    prompts = [t.split(" {c}")[0].format(s=subject) for t in FACT_TEMPLATES if t.startswith("{s}")]
    return {
        "case_id": f"{subject.lower().replace(' ', '-')}-{new.lower()}",
        "requested_rewrite": {
            "prompt": "{} is located in",
            "subject": subject,
            "target_new": {"str": new},
            "target_true": {"str": true},
        },
        "paraphrase_prompts": prompts[1:],
        "neighborhood_prompts": [p for s in siblings for p in (f"{s} is located in", f"{s} can be found in")],
    }


def training_records() -> list[dict]:
    return [
        landmark_record(subject, city)
        for subject, true in LANDMARKS.items()
        if subject not in RESERVED
        for city in CITIES
        if city != true
    ]


def reserved_records() -> list[dict]:
    """One edit per reserved landmark, to a city two places further in ``CITIES``."""
    return [landmark_record(s, CITIES[(CITIES.index(LANDMARKS[s]) + 2) % len(CITIES)]) for s in RESERVED]


def write_requests(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def build_tiny_mend(directory: Path) -> Path:
    """Train the editor for the tiny model into ``directory`` (empty), as ``train_mend`` would."""
    import os
    import tempfile

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")
    os.environ.setdefault("SECRET_KEY", "tests-only-not-a-secret")
    import django

    django.setup()
    from tests.tiny_model import deterministic_torch
    from tests.tiny_models import TINY, built_model
    from workers.editing.mend import MendSettings
    from workers.editing.mend_training import train_mend
    from workers.lm.loading import load_lm

    lm = load_lm(TINY, registry={TINY: {"path": str(built_model(TINY)), "dtype": "float32"}})
    with tempfile.TemporaryDirectory() as scratch, deterministic_torch(SETTINGS["seed"]):
        data = write_requests(Path(scratch) / "tiny-mend-requests.jsonl", training_records())
        train_mend(lm, data=data, output=directory, layers=LAYERS, settings=MendSettings(**SETTINGS))
    return directory
