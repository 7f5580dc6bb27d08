"""Adjudication: disagreements found through the kinds, a final answer stored as a response
of its own source, and reports on the adjudicated population."""

from __future__ import annotations

import pytest

from annotation.errors import InputError
from annotation.models import Adjudication, Participant, Response
from annotation.services.analysis.adjudication import NOTE_MAX_CHARS, adjudicate, study_disagreements
from scoring.models import Report
from scoring.services import compute_study_reports
from tests.factories import AnsweredResponseFactory, ItemFactory, StudyFactory

pytestmark = pytest.mark.django_db


def claim_study(owner=None):
    study = StudyFactory(kind="claim", owner=owner, annotations_per_item=2)
    for name in ("c1", "c2"):
        ItemFactory(study=study, external_id=name, provenance={"system": "A"})
    AnsweredResponseFactory.from_specs(
        study,
        [
            {"participant": "pid-ann-17", "item": "c1", "answer": {"label": "supports", "evidence": [0]}},
            {"participant": "pid-bob-23", "item": "c1", "answer": {"label": "contradicts", "evidence": [1]}},
            {"participant": "pid-ann-17", "item": "c2", "answer": {"label": "supports", "evidence": [0]}},
            {"participant": "pid-bob-23", "item": "c2", "answer": {"label": "supports", "evidence": [0]}},
        ],
    )
    return study


def likert_study():
    study = StudyFactory(
        kind="likert", config={"questions": [{"id": "q1", "text": "Fluent?", "passage": "main"}]}
    )
    payload = {"new_fact": "F.", "main_passage": "P."}
    for name in ("l1", "l2"):
        ItemFactory(study=study, external_id=name, payload=payload)
    AnsweredResponseFactory.from_specs(
        study,
        [
            {"participant": "pid-ann-17", "item": "l1", "answer": {"ratings": {"q1": 2}}},
            {"participant": "pid-bob-23", "item": "l1", "answer": {"ratings": {"q1": 3}}},
            {"participant": "pid-ann-17", "item": "l2", "answer": {"ratings": {"q1": 1}}},
            {"participant": "pid-bob-23", "item": "l2", "answer": {"ratings": {"q1": 5}}},
        ],
    )
    return study


def test_claim_disagreement_on_label_or_evidence():
    study = claim_study()
    found = study_disagreements(study)
    assert [(d.item.external_id, d.answers, d.questions) for d in found] == [("c1", 2, ["label", "evidence"])]


def test_likert_disagreement_is_ratings_more_than_k_apart():
    study = likert_study()
    assert [d.item.external_id for d in study_disagreements(study, points_apart=1)] == ["l2"]
    assert [d.item.external_id for d in study_disagreements(study, points_apart=0)] == ["l1", "l2"]
    assert study_disagreements(study, points_apart=4) == []


def test_adjudicated_answer_is_a_response_of_its_own_and_leaves_the_others(researcher):
    study = claim_study(owner=researcher)
    item = study.items.get(external_id="c1")
    before = list(Response.objects.order_by("id").values_list("id", "answer"))
    response = adjudicate(
        study=study,
        item=item,
        answer={"label": "contradicts", "evidence": [1]},
        note="B is right",
        user=researcher,
    )
    assert response.participant.source == Participant.Source.ADJUDICATOR
    assert response.answer == {"label": "contradicts", "evidence": [1]}
    assert list(Response.objects.exclude(pk=response.pk).order_by("id").values_list("id", "answer")) == before
    assert Adjudication.objects.get(item=item).note == "B is right"
    assert study_disagreements(study)[0].adjudicated
    item.refresh_from_db()
    assert item.slots_taken == 2  # the adjudication took no participant's slot


def test_adjudication_is_validated_by_the_kind_and_stored_once(researcher):
    study = claim_study(owner=researcher)
    item = study.items.get(external_id="c1")
    with pytest.raises(InputError) as bad:
        adjudicate(
            study=study, item=item, answer={"label": "supports", "evidence": []}, note="", user=researcher
        )
    assert "answer.evidence" in bad.value.errors
    assert not Adjudication.objects.exists() and Response.objects.count() == 4
    adjudicate(study=study, item=item, answer={"label": "neutral"}, note="", user=researcher)
    with pytest.raises(InputError) as twice:
        adjudicate(
            study=study, item=item, answer={"label": "supports", "evidence": [0]}, note="", user=researcher
        )
    assert "item" in twice.value.errors and Response.objects.count() == 5


def test_reports_on_the_adjudicated_population(researcher):
    study = claim_study(owner=researcher)
    adjudicate(
        study=study,
        item=study.items.get(external_id="c1"),
        answer={"label": "contradicts", "evidence": [1]},
        note="",
        user=researcher,
    )
    compute_study_reports(study)

    def contradicts(population: str) -> Report:
        rows = Report.objects.filter(study=study, population=population, metric="claim.label_share")
        return next(r for r in rows if r.group == {"label": "contradicts"})

    assert (contradicts("all").value, contradicts("all").n) == (0.25, 4)  # adjudicator not counted
    assert contradicts("passed").n == 4
    adjudicated = contradicts("adjudicated")
    assert adjudicated.n == 3 and adjudicated.value == pytest.approx(1 / 3)


def test_adjudication_pages(client, researcher):
    study = claim_study(owner=researcher)
    item = study.items.get(external_id="c1")
    listing = client.get(f"/research/s/{study.slug}/adjudication/")
    assert (
        listing.status_code == 200
        and b'id="item-c1"' in listing.content
        and b'id="item-c2"' not in listing.content
    )
    page = client.get(f"/research/s/{study.slug}/adjudication/{item.pk}/").content.decode()
    names = [r.participant for r in Response.objects.filter(item=item)]
    assert all(p.platform_worker_id not in page for p in names)  # pseudonyms only
    assert page.count("<code>p") == 2
    bad = client.post(f"/research/s/{study.slug}/adjudication/{item.pk}/", {"label": "supports"})
    assert bad.status_code == 400 and b"Select the sentence" in bad.content
    assert not Adjudication.objects.exists()
    good = client.post(
        f"/research/s/{study.slug}/adjudication/{item.pk}/",
        {"label": "contradicts", "evidence": ["1"], "note": "ok"},
    )
    assert good.status_code == 302
    assert Adjudication.objects.get().response.answer == {"label": "contradicts", "evidence": [1]}
    assert b'id="adjudicated"' in client.get(good["Location"]).content


def test_adjudication_of_another_researchers_study_is_not_found(client, researcher, django_user_model):
    other = django_user_model.objects.create_user("olga")
    study = claim_study(owner=other)
    item = study.items.get(external_id="c1")
    assert client.get(f"/research/s/{study.slug}/adjudication/").status_code == 404
    answer = client.post(f"/research/s/{study.slug}/adjudication/{item.pk}/", {"label": "neutral"})
    assert answer.status_code == 404 and not Adjudication.objects.exists()


def test_adjudicated_answer_is_exported_with_the_others(researcher, tmp_path):
    import csv
    import sqlite3
    import zipfile

    from annotation.services.exports.export import export_study

    study = claim_study(owner=researcher)
    adjudicate(
        study=study,
        item=study.items.get(external_id="c1"),
        answer={"label": "neutral"},
        note="",
        user=researcher,
    )
    table = export_study(study, fmt="csv", path=tmp_path / "out.csv")
    with open(table.path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted(row["participant_source"] for row in rows) == ["adjudicator", "lab", "lab", "lab", "lab"]
    archive = export_study(study, fmt="sqlite", path=tmp_path / "out.zip")
    with zipfile.ZipFile(archive.path) as opened:
        opened.extractall(tmp_path)
    database = sqlite3.connect(tmp_path / f"{study.slug}.sqlite")
    joined = database.execute(
        "SELECT count(*) FROM responses r JOIN participants p ON p.participant = r.participant"
    ).fetchone()[0]
    assert joined == 5


def test_disagreements_come_a_page_at_a_time(client, researcher, monkeypatch):
    from annotation.research.views import adjudication as research_adjudication

    monkeypatch.setattr(research_adjudication, "DISAGREEMENTS_PER_PAGE", 1)
    study = likert_study()
    study.owner = researcher
    study.save()
    first = client.get(f"/research/s/{study.slug}/adjudication/?k=0").content.decode()
    assert 'id="item-l1"' in first and 'id="item-l2"' not in first
    l1 = study.items.get(external_id="l1").pk
    assert f"after={l1}" in first
    second = client.get(f"/research/s/{study.slug}/adjudication/?k=0&after={l1}").content.decode()
    assert 'id="item-l2"' in second and 'id="item-l1"' not in second and "after=" not in second


def test_an_adjudication_note_over_its_limit_is_a_400_and_stores_nothing(client, researcher):
    """Review 2, N21: a note of 2,000,000 characters was stored."""
    study = claim_study(owner=researcher)
    item = study.items.get(external_id="c1")
    url = f"/research/s/{study.slug}/adjudication/{item.pk}/"
    answer = {"label": "contradicts", "evidence": ["1"]}
    too_long = client.post(url, {**answer, "note": "x" * (NOTE_MAX_CHARS + 1)})
    assert too_long.status_code == 400 and f"at most {NOTE_MAX_CHARS} characters" in too_long.content.decode()
    both = client.post(url, {"label": "supports", "note": "x" * (NOTE_MAX_CHARS + 1)})
    assert both.status_code == 400 and b"Select the sentence" in both.content and b"note:" in both.content
    assert not Adjudication.objects.exists()
    assert client.post(url, {**answer, "note": "x" * NOTE_MAX_CHARS}).status_code == 302
    assert len(Adjudication.objects.get().note) == NOTE_MAX_CHARS
