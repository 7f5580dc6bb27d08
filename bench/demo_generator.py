"""How fast the demo's trigram generator trains and writes, and how long the demo game's
items take to build (no database). Prints figures:

    .venv/bin/python bench/demo_generator.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import django

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")
os.environ.setdefault("SECRET_KEY", "bench-only")
django.setup()

from workers.demo.backend import NgramBackend  # noqa: E402 - after django.setup()
from workers.demo.corpus import demo_corpus  # noqa: E402
from workers.demo.game import DEMO_STUDIES, build_items  # noqa: E402

TOKENS = 2000


def main() -> None:
    documents = demo_corpus()
    words = sum(len(document.text.split()) for document in documents)
    started = time.perf_counter()
    backend = NgramBackend(documents)
    print(
        f"corpus: {len(documents)} documents, {words} words; trained in {time.perf_counter() - started:.2f}s"
    )
    prefix = documents[0].text[:200]
    model = backend.model_for(prefix)
    for p in (0.0, 0.5, 0.9, 1.0):
        started = time.perf_counter()
        model.generate(prefix, p=p, seed=1, max_new_tokens=TOKENS)
        elapsed = time.perf_counter() - started
        print(f"p={p:.1f}: {TOKENS / elapsed:,.0f} tokens/s")
    for spec in DEMO_STUDIES:
        chosen = [document for document in documents if document.category == spec.category]
        started = time.perf_counter()
        items = build_items(chosen)
        elapsed = time.perf_counter() - started
        print(f"{spec.slug}: {len(items)} items from {len(chosen)} documents in {elapsed:.2f}s")


if __name__ == "__main__":
    main()
