"""The demo's trigram model: a proper distribution, nucleus sampling, seeded, no recitation."""

import random

from workers.demo.corpus import demo_corpus, parse_corpus_file
from workers.generation.ngram import NgramModel, TrainingDocument, nucleus_sample, tokenize

DOCS = [
    TrainingDocument("a", "The cat sat on the mat. The cat ate the fish. The dog sat on the step."),
    TrainingDocument("b", "A dog ran to the park. The dog sat by the gate. A cat ran home."),
]


def test_next_word_distribution_is_sorted_and_sums_to_one():
    model = NgramModel(DOCS)
    ranked = list(model.ranked_next_words(tokenize("The cat")))
    probabilities = [p for _, p in ranked]
    assert abs(sum(probabilities) - 1) < 1e-9
    assert probabilities == sorted(probabilities, reverse=True)
    assert {word for word, _ in ranked[:2]} == {"sat", "ate"}  # the words seen after "The cat"


def test_nucleus_keeps_the_smallest_head_reaching_p():
    distribution = [("a", 0.5), ("b", 0.3), ("c", 0.2)]
    rng = random.Random(0)
    assert {nucleus_sample(distribution, 0.0, rng) for _ in range(50)} == {"a"}  # greedy
    assert {nucleus_sample(distribution, 0.8, rng) for _ in range(200)} == {"a", "b"}
    assert {nucleus_sample(distribution, 1.0, rng) for _ in range(400)} == {"a", "b", "c"}


def test_generation_is_seeded_and_ends_with_a_sentence():
    model = NgramModel(DOCS)
    first = model.generate("The dog ran home.", p=0.9, seed=5, max_new_tokens=40)
    assert first == model.generate("The dog ran home.", p=0.9, seed=5, max_new_tokens=40)
    assert first[-1] in ".!?"


def test_a_training_document_is_never_recited_when_continued():
    unique = TrainingDocument(
        "c",
        "Zorblat quimbers the vexing plover near Yandle. Yandle hums with quiet fog. The cat sat on the mat.",
    )
    model = NgramModel([*DOCS, unique])
    assert model.source_document(tokenize(unique.text)) == "c"
    for p in (0.0, 0.5, 1.0):
        continuation = model.generate(
            "Zorblat quimbers the vexing plover near", p=p, seed=3, max_new_tokens=60
        )
        assert not {"Yandle", "hums", "fog"} & set(tokenize(continuation))  # only document c has them
    other = model.generate("The dog sat on the", p=0.0, seed=3, max_new_tokens=12)  # no document left out
    assert other


def test_corpus_files_hold_enough_long_documents_in_both_categories():
    from annotation.text import split_sentences

    documents = demo_corpus()
    assert {d.category for d in documents} == {"news", "stories"}
    for category in ("news", "stories"):
        assert sum(d.category == category for d in documents) >= 20
    assert all(len(split_sentences(d.text)) >= 10 for d in documents)
    assert len({d.id for d in documents}) == len(documents)
    parsed = parse_corpus_file("# comment\n=== one ===\nFirst. Second.\n=== two ===\nThird.", "news")
    assert [(d.id, d.text) for d in parsed] == [("one", "First. Second."), ("two", "Third.")]
