"""Competence with its uncertainty, through ``computereports`` and HTTP on PostgreSQL (issue 37;
UX review 3, U14: a random clicker at 0.63 was listed above a consistent annotator at 0.44).

A claim study: three consistent annotators on 20 items, a random clicker on 12 and a sparse
participant on 3. Every figure has a 95% interval (bootstrap over items), sorting goes by the
interval's lower end, so the clicker ranks below the consistent annotators, and the sparse
participant gets "too few answers" instead of a number. A questionnaire with a 7-point scale
is aggregated by the median, never by a nominal model."""

from __future__ import annotations

import io
import json
import random
import re
import sqlite3
from collections.abc import Iterator

import pytest
from django.core.management import call_command

from annotation.models import Participant, Study
from annotation.services.authoring.answer_imports import import_responses
from annotation.services.authoring.studies import load_study_file
from annotation.services.exports.export import export_study
from annotation.services.pseudonyms import participant_pseudonym
from scoring.models import Report
from tests.conftest import claim_study_file
from tests.factories import AnsweredResponseFactory, researcher_user
from tests.helpers.module_data import rows_for_the_module

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("module_owner_logged_in")]
LABELS = ("supports", "contradicts", "neutral")
ITEMS = 20
CONSISTENT = ("ann", "bob", "cy")
CLICKER, SPARSE = "clicker", "sparse"
# three claims: three answers to the label, nine to the evidence (one per sentence)
TOO_FEW = (
    "too few answers: 3 on items others also answered, at least 10 are needed; "
    "too few answers: 9 on items others also answered, at least 10 are needed"
)


def truth(index: int) -> str:
    return LABELS[index % 3]


def claim_answers() -> list[dict]:
    """The consistent three slip now and then (cy more often); the clicker answers at random
    (seeded); the sparse participant answers three items right."""
    rng = random.Random(11)
    specs = []
    for index in range(ITEMS):
        for number, name in enumerate(CONSISTENT):
            slips = index % (7 - 2 * number) == 3  # ann: 3 of 20, bob: 4, cy: 7
            label = LABELS[(index + 1) % 3] if slips else truth(index)
            specs.append(
                {"participant": name, "item": f"c{index}", "answer": {"label": label, "evidence": [0]}}
            )
    for index in range(12):
        label = rng.choice(LABELS)
        specs.append(
            {"participant": CLICKER, "item": f"c{index}", "answer": {"label": label, "evidence": [1]}}
        )
    for index in range(3):
        specs.append(
            {"participant": SPARSE, "item": f"c{index}", "answer": {"label": truth(index), "evidence": [0]}}
        )
    return specs


@pytest.fixture(scope="module")
def module_rows(django_db_setup, django_db_blocker) -> Iterator[tuple[int, int]]:
    with rows_for_the_module(django_db_blocker):
        owner = researcher_user("ivo", password="pw")
        study = load_study_file(
            claim_study_file(slug="c-intervals", items=ITEMS, annotations_per_item=5), owner=owner
        ).study
        AnsweredResponseFactory.from_specs(study, claim_answers())
        call_command("computereports", study.slug, stdout=io.StringIO())
        yield owner.pk, study.pk


def public(name: str) -> str:
    return Participant.objects.get(platform_worker_id=name).public_id


def api_rows(client, study, **query) -> list[dict]:
    response = client.get(f"/api/v1/studies/{study.slug}/participants/", query)
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_every_competence_has_an_interval_and_the_clicker_ranks_below_the_consistent(module_study, client):
    by_name = {row["participant"]: row["competence"] for row in api_rows(client, module_study)}
    for name in (*CONSISTENT, CLICKER):
        found = by_name[public(name)]
        for measure in ("mace", "dawid_skene"):
            assert found[f"{measure}_low"] <= found[measure] <= found[f"{measure}_high"]
    clicker = by_name[public(CLICKER)]
    assert all(clicker["mace_low"] < by_name[public(name)]["mace_low"] for name in CONSISTENT)
    # the stored pooled rows carry the same interval, with its method
    stored = Report.objects.get(
        study=module_study,
        population="all",
        metric="competence.mace",
        group={
            "annotator": participant_pseudonym(
                module_study, Participant.objects.get(platform_worker_id=CLICKER)
            )
        },
    )
    assert (stored.ci_low, stored.ci_high) == (clicker["mace_low"], clicker["mace_high"])
    assert stored.details["ci_method"] == "percentile bootstrap over items"


def test_the_exports_reports_table_carries_the_intervals(module_study, tmp_path):
    export_study(module_study, fmt="sqlite", path=tmp_path / "c.sqlite")
    rows = sqlite3.connect(tmp_path / "c.sqlite").execute(
        "SELECT value, ci_low, ci_high, details FROM reports WHERE metric = 'competence.mace' "
        "AND population = 'all' AND \"group\" NOT LIKE '%question%'"
    )
    found = rows.fetchall()
    assert len(found) == 5  # the consistent three, the clicker, and the sparse one
    with_figure = [(value, low, high) for value, low, high, _ in found if value is not None]
    assert len(with_figure) == 4 and all(low <= value <= high for value, low, high in with_figure)
    assert [json.loads(details)["reason"] for value, _, _, details in found if value is None] == [TOO_FEW]


def test_a_sparse_participant_has_too_few_answers_not_a_number(module_study, client):
    sparse = next(
        row["competence"] for row in api_rows(client, module_study) if row["participant"] == public(SPARSE)
    )
    assert sparse["mace"] is None and sparse["dawid_skene"] is None and sparse["mace_low"] is None
    assert sparse["not_identifiable"] == TOO_FEW
    page = client.get(f"/research/s/{module_study.slug}/participants/").content.decode()
    row = page.split(f'<tr id="participant-{public(SPARSE)}">')[1].split("</tr>")[0]
    assert TOO_FEW in row
    own = client.get(f"/research/s/{module_study.slug}/participants/{public(SPARSE)}/").content.decode()
    assert TOO_FEW in own.split('id="competence"')[1].split("</div>")[0]


def test_the_api_and_the_page_sort_by_the_intervals_lower_end(module_study, client):
    by_name = {row["participant"]: row["competence"] for row in api_rows(client, module_study)}
    lows = {who: c["mace_low"] for who, c in by_name.items() if c["mace_low"] is not None}
    highest_first = [row["participant"] for row in api_rows(client, module_study, sort="-competence")]
    assert highest_first == [*sorted(lows, key=lambda who: -lows[who]), public(SPARSE)]
    lowest_first = [row["participant"] for row in api_rows(client, module_study, sort="competence")]
    assert lowest_first == [*sorted(lows, key=lambda who: lows[who]), public(SPARSE)]
    assert lowest_first[0] == public(CLICKER)
    page = client.get(f"/research/s/{module_study.slug}/participants/?sort=-competence").content.decode()
    assert re.findall(r'<tr id="participant-([^"]+)"', page) == highest_first
    clicker = by_name[public(CLICKER)]
    row = page.split(f'<tr id="participant-{public(CLICKER)}">')[1].split("</tr>")[0]
    assert f"[{clicker['mace_low']:.2f}–{clicker['mace_high']:.2f}]" in row


def test_an_unknown_sort_is_a_400_naming_it(module_study, client):
    response = client.get(f"/api/v1/studies/{module_study.slug}/participants/", {"sort": "best"})
    assert response.status_code == 400 and "sort" in response.json()


SCALE_QUESTIONS = [
    {"id": "quality", "type": "scale", "points": 7, "text": "Quality?"},
    {"id": "faithful", "type": "choice", "options": ["yes", "no"], "text": "Faithful?"},
]
SCALE_ITEMS = 16
RATERS = ("ann", "bob", "cat", "dan")


def scale_answers() -> dict[tuple[str, str], dict]:
    """Each item's true quality 1..7; the raters answer it ±1 (dan: at random), seeded."""
    rng = random.Random(5)
    answers = {}
    for index in range(SCALE_ITEMS):
        quality = 1 + index % 7
        for who in RATERS:
            value = rng.randint(1, 7) if who == "dan" else min(7, max(1, quality + rng.choice((-1, 0, 0, 1))))
            answers[(who, f"q{index}")] = {"quality": value, "faithful": rng.choice(("yes", "no"))}
    return answers


@pytest.fixture(scope="module")
def scale_rows(django_db_setup, django_db_blocker) -> Iterator[tuple[int, int, dict]]:
    with rows_for_the_module(django_db_blocker):
        owner = researcher_user("una", password="pw")
        data = {
            "slug": "q-seven",
            "title": "seven points",
            "kind": "questionnaire",
            "status": "live",
            "annotations_per_item": 4,
            "config": {"questions": SCALE_QUESTIONS},
            "items": [
                {
                    "external_id": f"q{i}",
                    "payload": {"passages": [{"id": "only", "text": "A text.", "system": "s"}]},
                }
                for i in range(SCALE_ITEMS)
            ],
        }
        study = load_study_file(data, owner=owner).study
        answers = scale_answers()
        lines = [
            json.dumps({"participant": who, "item": item, "answer": a}) for (who, item), a in answers.items()
        ]
        import_responses(study, lines, source=Participant.Source.LAB)
        call_command("computereports", study.slug, stdout=io.StringIO())
        yield owner.pk, study.pk, answers


def test_a_seven_point_scale_is_aggregated_by_its_median_not_a_nominal_model(scale_rows, client, tmp_path):
    _, pk, answers = scale_rows
    study = Study.objects.get(pk=pk)
    labels = Report.objects.filter(study=study, population="passed", metric="competence.label")
    models = {(r.group["question"], r.group["model"]) for r in labels}
    assert models == {("quality", "median"), ("faithful", "mace"), ("faithful", "dawid_skene")}
    quality = {r.group["item"]: r.details["label"] for r in labels if r.group["question"] == "quality"}
    for index in range(SCALE_ITEMS):
        given = sorted(answers[(who, f"q{index}")]["quality"] for who in RATERS)
        assert quality[f"q{index}"] == given[1]  # the lower of the two middle answers
    fitted = Report.objects.filter(
        study=study, metric__in=("competence.mace", "competence.dawid_skene"), group__question="quality"
    )
    assert not fitted.exists()
    export_study(study, fmt="sqlite", path=tmp_path / "q.sqlite")
    exported = sqlite3.connect(tmp_path / "q.sqlite").execute(
        "SELECT DISTINCT model FROM aggregated_labels WHERE question = 'quality'"
    )
    assert exported.fetchall() == [("median",)]
    # each rater's competence on the scale: correlation with the others' median, with its interval
    client.force_login(study.owner)
    rows = api_rows(client, study)
    ordinal = {row["participant"]: row["competence"] for row in rows}
    dan = ordinal[public("dan")]
    for who in ("ann", "bob", "cat"):
        mine = ordinal[public(who)]
        assert mine["median_correlation_low"] <= mine["median_correlation"] <= mine["median_correlation_high"]
        assert mine["median_correlation"] > dan["median_correlation"]
