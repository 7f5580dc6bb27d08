"""generate_continuations: RoFT passages from a corpus into a boundary study, by command and by job."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation import kinds
from annotation.models import Item, Job, Study
from annotation.text import split_sentences
from tests.tiny_model import documents

pytestmark = pytest.mark.django_db
LENGTH = 4


@pytest.fixture
def boundary_kind():
    """The game's kind: every generated item is validated by it when written."""
    return kinds.get_kind("boundary")


@pytest.fixture
def corpus(tmp_path):
    lines = [
        {"id": f"doc{i}", "text": text, "category": "stories" if i % 2 else "news"}
        for i, text in enumerate(documents(8, sentences=LENGTH + 2, seed=3))
    ]
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    return path, {line["id"]: line for line in lines}


def run(corpus_path, **options):
    out, err = StringIO(), StringIO()
    call_command(
        "generate_continuations",
        corpus=str(corpus_path),
        model="tiny-gpt2",
        study="roft-tiny",
        sentences=LENGTH,
        p="0.9,1.0",
        seed=4,
        all_human_share=0.25,
        stdout=out,
        stderr=err,
        **options,
    )
    return out.getvalue(), err.getvalue()


def test_passages_have_their_boundary_and_sentence_count(worker_settings, boundary_kind, corpus):
    path, docs = corpus
    out, err = run(path)
    study = Study.objects.get(slug="roft-tiny")
    assert study.kind == "boundary" and study.status == "draft"
    items = list(Item.objects.filter(study=study))
    assert len(items) >= 4, out
    for item in items:
        payload, provenance = item.payload, item.provenance
        human = payload["boundary"]
        source = split_sentences(docs[provenance["source_id"]]["text"])
        assert len(payload["sentences"]) == LENGTH and 1 <= human <= LENGTH
        assert payload["sentences"][:human] == source[:human]
        if human < LENGTH:
            assert payload["sentences"][human:] != source[human:LENGTH]  # the machine took over
            assert payload["p"] in (0.9, 1.0) and provenance["decoding"]["top_p"] == payload["p"]
        assert payload["category"] == docs[provenance["source_id"]]["category"]
        assert payload["model"] == provenance["model"] == "tiny-gpt2"
        assert isinstance(provenance["seed"], int) and provenance["seed"] == payload["seed"]
    job = Job.objects.get(kind="continuations")
    assert job.status == "done" and job.result["added"] == len(items)
    assert job.progress_done == job.progress_total == 8
    assert "passages for roft-tiny" in err  # the progress bar


def test_running_again_adds_nothing_and_generates_nothing(worker_settings, boundary_kind, corpus):
    path, _ = corpus
    run(path)
    count = Item.objects.count()
    run(path)
    assert Item.objects.count() == count
    second = Job.objects.filter(kind="continuations").order_by("pk").last()
    assert second.result["added"] == 0 and second.result["already_present"] == count


def test_a_bad_corpus_line_is_named_and_nothing_is_made(worker_settings, boundary_kind, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "text": "One. Two.", "category": "news"}\n{"id": "b", "text": ""}\n')
    with pytest.raises(CommandError, match="line 2: text"):
        run(path)
    assert not Study.objects.exists() and not Job.objects.exists()


def test_the_same_work_runs_as_a_queued_job(
    worker_settings, boundary_kind, corpus, django_capture_on_commit_callbacks
):
    from annotation.services.authoring.studies import ensure_study
    from annotation.services.jobs import start_job

    path, _ = corpus
    study = ensure_study(slug="roft-job", kind="boundary")
    parameters = {"corpus": str(path), "model": "tiny-gpt2", "sentences": LENGTH, "p": [1.0], "seed": 4}
    with django_capture_on_commit_callbacks(execute=True):
        job = start_job(kind="continuations", parameters=parameters, study=study)
    job.refresh_from_db()
    assert job.status == "done", job.error
    assert job.result["added"] == study.items.count() > 0
