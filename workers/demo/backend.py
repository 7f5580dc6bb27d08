"""The ``demo`` continuation backend: trigram models trained on the demo corpus.

There is one model per category and one over the whole corpus. A prefix that opens a
corpus document is continued by its category's model (news stays news), with that
document's own counts left out (see ``workers.generation.ngram``); any other prefix by
the whole-corpus model.

Importing this module registers it (``workers.apps`` does so at start-up), so the RoFT
passage pipeline, the demo builder and any command that loads generators by name can
use ``load_backend("demo")``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from workers.generation.backend import Continuation, ContinuationRequest, register_backend
from workers.generation.continuations import CorpusDocument
from workers.generation.ngram import ORDER, NgramModel, TrainingDocument, tokenize

from .corpus import demo_corpus

MODEL_NAME = "demo-trigram"
VOCABULARY = 1000


class NgramBackend:
    """Continues prefixes with ``NgramModel``s; one request at a time (each takes milliseconds)."""

    name = "demo"

    def __init__(self, documents: Sequence[CorpusDocument], *, vocabulary: int = VOCABULARY):
        self.whole = _train(documents, vocabulary)
        self.by_category = {
            category: _train([d for d in documents if d.category == category], vocabulary)
            for category in sorted({d.category for d in documents})
        }
        self.category_of = {document.id: document.category for document in documents}

    def continue_texts(self, requests: Sequence[ContinuationRequest]) -> list[Continuation]:
        return [self._continue(request) for request in requests]

    def model_for(self, prefix: str) -> NgramModel:
        source = self.whole.source_document(tokenize(prefix))
        return self.by_category[self.category_of[source]] if source else self.whole

    def _continue(self, request: ContinuationRequest) -> Continuation:
        model = self.model_for(request.prefix)
        text = model.generate(
            request.prefix, p=request.p, seed=request.seed, max_new_tokens=request.max_new_tokens
        )
        decoding = {"order": ORDER, "smoothing": "witten-bell", "vocabulary": model.vocabulary}
        return Continuation(text=text, model=MODEL_NAME, decoding=decoding, seed=request.seed)


def _train(documents: Sequence[CorpusDocument], vocabulary: int) -> NgramModel:
    return NgramModel([TrainingDocument(d.id, d.text) for d in documents], vocabulary=vocabulary)


@cache
def demo_backend() -> NgramBackend:
    """Trained once per process on the demo corpus (a fraction of a second)."""
    return NgramBackend(demo_corpus())


register_backend("demo", demo_backend)
