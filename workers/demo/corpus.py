"""The demo corpus: human-written passages in plain-text files, one file per category."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from workers.generation.continuations import CorpusDocument

CORPUS_DIR = Path(__file__).resolve().parent
CATEGORY_FILES = {"news": "news.txt", "stories": "stories.txt"}
_HEADER = re.compile(r"^=== ([a-z0-9-]+) ===$", re.MULTILINE)


def parse_corpus_file(text: str, category: str) -> list[CorpusDocument]:
    """Documents separated by lines ``=== <id> ===``; lines starting with # before the
    first document are comments."""
    parts = _HEADER.split(text)[1:]
    return [
        CorpusDocument(id=doc_id, text=" ".join(body.split()), category=category)
        for doc_id, body in zip(parts[0::2], parts[1::2], strict=True)
    ]


@cache
def demo_corpus() -> tuple[CorpusDocument, ...]:
    """Every document of every category, in file order."""
    documents: list[CorpusDocument] = []
    for category, name in CATEGORY_FILES.items():
        documents.extend(parse_corpus_file((CORPUS_DIR / name).read_text(encoding="utf-8"), category))
    return tuple(documents)
