"""The demo's boundary studies: built by the real generator through the pipeline, idempotent."""

from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Item, Study
from annotation.text import split_sentences
from workers.demo.backend import MODEL_NAME, NgramBackend
from workers.demo.corpus import demo_corpus
from workers.demo.game import ATTENTION_CHECK, LENGTH, P_VALUES, attention_items
from workers.generation.backend import load_backend

pytestmark = pytest.mark.django_db
CATEGORY_OF = {"roft-news": "news", "roft-stories": "stories"}


def test_loaddemogame_builds_both_categories_from_the_generator_and_is_idempotent():
    out = StringIO()
    call_command("loaddemogame", stdout=out)
    studies = {study.slug: study for study in Study.objects.filter(kind="boundary")}
    assert set(studies) == {"roft-news", "roft-stories"}
    assert all(study.public and study.status == "live" for study in studies.values())
    documents = {document.id: document for document in demo_corpus()}
    passages = Item.objects.filter(study__in=studies.values(), is_attention_check=False)
    assert passages.count() >= 40
    machine_items = 0
    for item in passages:
        payload = item.payload
        source = documents[item.provenance["source_id"]]
        original = split_sentences(source.text)
        boundary, sentences = payload["boundary"], payload["sentences"]
        assert len(sentences) == LENGTH and 1 <= boundary <= LENGTH
        assert payload["category"] == source.category == CATEGORY_OF[item.study.slug]
        assert sentences[:boundary] == original[:boundary]  # the human part is the document's own
        if boundary < LENGTH:
            machine_items += 1
            assert payload["model"] == MODEL_NAME and payload["p"] in P_VALUES
            assert not set(sentences[boundary:]) & set(original)  # never the document's own sentences
            assert item.provenance["decoding"]["top_p"] == payload["p"]
    assert machine_items >= 30
    checks = Item.objects.filter(is_attention_check=True)
    assert checks.count() == 4 and all(c.gold == {"guess": len(c.payload["sentences"])} for c in checks)
    for study in studies.values():  # N7: a check is as long as the ordinary passages
        assert sentence_counts(study.items.filter(is_attention_check=True)) == sentence_counts(
            study.items.filter(is_attention_check=False)
        )
    before = {item.external_id: item.payload for item in Item.objects.all()}
    again = StringIO()
    call_command("loaddemogame", stdout=again)
    assert "0 new, 0 updated" in again.getvalue()
    assert {item.external_id: item.payload for item in Item.objects.all()} == before


def sentence_counts(items) -> set[int]:
    return {len(item.payload["sentences"]) for item in items}


def test_attention_checks_are_as_long_as_the_ordinary_passages_they_hide_among():
    """N7: every check had 6 sentences and every passage 10, so "1 of 6 sentences shown"
    gave a check away before any reveal; a check's length is now drawn from the passages'."""
    lengths = [8, 10, 12, 10, 9]
    checks = attention_items("news", lengths, count=12)
    assert {len(check["payload"]["sentences"]) for check in checks} <= set(lengths)
    assert len({len(check["payload"]["sentences"]) for check in checks}) > 1
    for check in checks:
        length = len(check["payload"]["sentences"])
        assert check["payload"]["sentences"] == ATTENTION_CHECK[:length]
        assert check["payload"]["boundary"] == check["gold"]["guess"] == length
    assert attention_items("news", lengths, count=12) == checks  # seeded: a rebuild changes nothing


def test_the_example_boundary_file_hides_its_checks_by_length(example_study_file):
    items = example_study_file("boundary")["items"]
    checks = [item for item in items if item.get("attention_check")]
    ordinary = [item for item in items if not item.get("attention_check")]
    assert checks and ordinary
    assert {len(item["payload"]["sentences"]) for item in checks} == {
        len(item["payload"]["sentences"]) for item in ordinary
    }


def test_the_demo_generator_is_registered_by_name():
    backend = load_backend("demo")
    assert isinstance(backend, NgramBackend)
    stories = backend.by_category["stories"]
    assert backend.model_for(documents_first_sentences("stories")) is stories


def documents_first_sentences(category: str) -> str:
    document = next(d for d in demo_corpus() if d.category == category)
    return " ".join(split_sentences(document.text)[:2])


def test_the_example_study_file_loads(example_study_file):
    from annotation.services.authoring.studies import load_study_file

    data = example_study_file("boundary")
    study = load_study_file(data).study
    assert study.kind == "boundary" and study.items.count() == len(data["items"])
    assert study.items.filter(is_attention_check=True).count() == 1
