"""Annotator competence and aggregated labels (issue 28, first part), through the pages:
a claim study with three reliable annotators and one who answers at random; the reports
estimate the spammer's competence lower, the participants page shows it and sorts by it,
the dashboard lists the tables and the SQLite export has each item's aggregated label."""

from __future__ import annotations

import io
import re
import sqlite3
from collections.abc import Iterator

import pytest
from django.core.management import call_command

from annotation.models import Participant
from annotation.services.analysis.adjudication import adjudicate
from annotation.services.authoring.studies import load_study_file
from annotation.services.exports.export import export_study
from annotation.services.pseudonyms import participant_pseudonym
from scoring.models import Report
from scoring.services import compute_study_reports
from tests.conftest import claim_study_file
from tests.factories import AnsweredResponseFactory, researcher_user
from tests.helpers.competence import ITEMS, RELIABLE, SPAMMER, competence_study, slip, spam, truth
from tests.helpers.module_data import rows_for_the_module

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("module_owner_logged_in")]
MACE_TITLE = 'title="MACE: how likely an answer is informed, not guessed"'


@pytest.fixture(scope="module")
def module_rows(django_db_setup, django_db_blocker) -> Iterator[tuple[int, int]]:
    """Rita and her study with its answers and reports, written once for the module
    (tests/helpers/module_data.py): the primary keys of both."""
    with rows_for_the_module(django_db_blocker):
        owner = researcher_user("rita", password="pw")
        yield owner.pk, competence_study(owner).pk


def pseudonym_of(study, name: str) -> str:
    return participant_pseudonym(study, Participant.objects.get(platform_worker_id=name))


def test_the_spammer_is_estimated_less_competent_by_both_models(module_study):
    pooled = {
        (r.metric, r.group["annotator"]): r.value
        for r in Report.objects.filter(study=module_study, population="all", metric__startswith="competence.")
        if set(r.group) == {"annotator"}
    }
    spammer = pseudonym_of(module_study, SPAMMER)
    for model in ("mace", "dawid_skene"):
        reliable = [pooled[(f"competence.{model}", pseudonym_of(module_study, name))] for name in RELIABLE]
        assert pooled[(f"competence.{model}", spammer)] < min(reliable) - 0.2
    labels = Report.objects.filter(
        study=module_study,
        population="passed",
        metric="competence.label",
        group__question="label",
        group__model="mace",
    )
    assert {r.group["item"]: r.details["label"] for r in labels} == {f"c{i}": truth(i) for i in range(ITEMS)}
    agreement = Report.objects.get(
        study=module_study,
        population="passed",
        metric="competence.majority_agreement",
        group={"question": "label", "level": "nominal", "model": "mace"},
    )
    # where cy's slip is the spammer's answer the vote is two against two: no majority
    ties = sum(1 for i in range(0, ITEMS, 3) if slip(i) == spam(i))
    assert ties and agreement.value == 1.0 and agreement.n == ITEMS - ties


def test_participants_page_shows_and_sorts_by_competence(module_study, client):
    url = f"/research/s/{module_study.slug}/participants/"
    plain = client.get(url).content.decode()
    assert 'id="competence-header"' in plain
    order = re.findall(r'<tr id="participant-([^"]+)"', client.get(url + "?sort=competence").content.decode())
    public = {
        name: Participant.objects.get(platform_worker_id=name).public_id for name in (*RELIABLE, SPAMMER)
    }
    assert order[0] == public[SPAMMER]
    highest_first = client.get(url + "?sort=-competence").content.decode()
    assert re.findall(r'<tr id="participant-([^"]+)"', highest_first)[-1] == public[SPAMMER]
    # the competence cell of the spammer, and the flag link beside it as on the plain page
    row = highest_first.split(f'<tr id="participant-{public[SPAMMER]}">')[1].split("</tr>")[0]
    spammer_mace = Report.objects.get(
        study=module_study,
        population="all",
        metric="competence.mace",
        group={"annotator": pseudonym_of(module_study, SPAMMER)},
    ).value
    assert f'<span class="competence-mace" {MACE_TITLE}>{spammer_mace:.2f}</span>' in row
    assert f"/research/s/{module_study.slug}/participants/{public[SPAMMER]}/?mark=flag" in row


def test_the_api_gives_each_participant_the_competence_the_page_shows(module_study, client):
    rows = client.get(f"/api/v1/studies/{module_study.slug}/participants/").json()["results"]
    by_pseudonym = {row["pseudonym"]: row["competence"] for row in rows}
    spammer = by_pseudonym[pseudonym_of(module_study, SPAMMER)]
    stored = {
        model: Report.objects.get(
            study=module_study,
            population="all",
            metric=f"competence.{model}",
            group={"annotator": pseudonym_of(module_study, SPAMMER)},
        ).value
        for model in ("mace", "dawid_skene")
    }
    assert spammer["mace"] == pytest.approx(stored["mace"]) and spammer["answers"] > 0
    assert spammer["dawid_skene"] == pytest.approx(stored["dawid_skene"])
    assert all(by_pseudonym[pseudonym_of(module_study, name)]["mace"] > spammer["mace"] for name in RELIABLE)
    public_id = Participant.objects.get(platform_worker_id=SPAMMER).public_id
    detail = client.get(f"/api/v1/studies/{module_study.slug}/participants/{public_id}/").json()
    assert detail["competence"] == spammer


def test_without_reports_the_api_says_competence_is_unknown(module_owner, client):
    from tests.factories import StudyFactory

    study = StudyFactory(owner=module_owner)
    rows = client.get(f"/api/v1/studies/{study.slug}/participants/").json()["results"]
    assert all(row["competence"] is None for row in rows)


def test_dashboard_lists_competence_and_aggregated_labels(module_study, client):
    url = f"/research/s/{module_study.slug}/dashboard/"
    competence = (
        "Annotator competence, all categorical questions",
        "Annotator competence per question",
        "Aggregated labels against the majority vote and the adjudicated answers",
    )
    everyone = client.get(url).content.decode()
    assert all(title in everyone for title in competence)
    assert "Aggregated label per item" not in everyone  # labels come from the answers that count
    passed = client.get(url + "?population=passed").content.decode()
    assert all(title in passed for title in (*competence, "Aggregated label per item"))


def test_sqlite_export_has_the_aggregated_label_per_item(module_study, tmp_path):
    export_study(module_study, fmt="sqlite", path=tmp_path / "x.sqlite")
    database = sqlite3.connect(tmp_path / "x.sqlite")
    rows = database.execute(
        "SELECT item, label, posterior, answers FROM aggregated_labels "
        "WHERE question = 'label' AND model = 'dawid_skene' ORDER BY item"
    ).fetchall()
    assert {item: label for item, label, _, _ in rows} == {f"c{i}": truth(i) for i in range(ITEMS)}
    assert all(0.5 < posterior <= 1.0 and answers == 4 for _, _, posterior, answers in rows)


def test_aggregates_are_compared_with_adjudicated_answers(module_study, module_owner, tmp_path):
    tied = next(i for i in range(0, ITEMS, 3) if slip(i) == spam(i))
    item = module_study.items.get(external_id=f"c{tied}")
    adjudicate(
        study=module_study,
        item=item,
        answer={"label": truth(tied), "evidence": [0]},
        note="",
        user=module_owner,
    )
    compute_study_reports(module_study)
    for model in ("mace", "dawid_skene"):
        row = Report.objects.get(
            study=module_study,
            population="passed",
            metric="competence.adjudicated_agreement",
            group={"question": "label", "level": "nominal", "model": model},
        )
        assert (row.value, row.n) == (1.0, 1)
    export_study(module_study, fmt="sqlite", path=tmp_path / "x.sqlite")
    database = sqlite3.connect(tmp_path / "x.sqlite")
    found = database.execute(
        "SELECT adjudicated, majority FROM aggregated_labels WHERE item = ? AND question = 'label'",
        (f"c{tied}",),
    ).fetchall()
    assert found == [(truth(tied), None), (truth(tied), None)]  # both models; no majority on a tie


def test_participant_page_shows_their_competence(module_study, client):
    spammer = Participant.objects.get(platform_worker_id=SPAMMER)
    page = client.get(f"/research/s/{module_study.slug}/participants/{spammer.public_id}/").content.decode()
    mace = Report.objects.get(
        study=module_study,
        population="all",
        metric="competence.mace",
        group={"annotator": pseudonym_of(module_study, SPAMMER)},
    ).value
    assert f'<span class="competence-mace" {MACE_TITLE}>{mace:.2f}</span>' in page.split('id="competence"')[1]


def test_a_single_annotators_competence_is_shown_as_not_identifiable_everywhere(client, tmp_path):
    """Adversarial review 3, T11: the only annotator of a study got MACE 0.45 and Dawid–Skene
    0.99999999999, numbers that read like findings. Now every place says it cannot be
    estimated, and why."""
    owner = researcher_user("solo-owner", password="pw")
    client.force_login(owner)
    study = load_study_file(claim_study_file(slug="c-one-annot", items=ITEMS), owner=owner).study
    specs = [
        {"participant": "only", "item": f"c{i}", "answer": {"label": truth(i), "evidence": [0]}}
        for i in range(ITEMS)
    ]
    AnsweredResponseFactory.from_specs(study, specs)
    call_command("computereports", study.slug, stdout=io.StringIO())
    reason = "not identifiable: one annotator only"

    stored = Report.objects.filter(study=study, metric__in=("competence.mace", "competence.dawid_skene"))
    assert stored.exists() and all(r.value is None and r.details["reason"].startswith(reason) for r in stored)
    for metric in ("competence.mace", "competence.dawid_skene"):
        api = client.get(f"/api/v1/studies/{study.slug}/reports/", {"metric": metric}).json()
        figures = api.get("results", api)
        assert figures and all(f["value"] is None for f in figures)
        assert all(f["details"]["reason"].startswith(reason) for f in figures)

    participants = client.get(f"/api/v1/studies/{study.slug}/participants/").json()["results"]
    competence = participants[0]["competence"]
    assert competence["mace"] is None and competence["dawid_skene"] is None
    assert competence["not_identifiable"].startswith(reason) and competence["answers"] >= ITEMS
    page = client.get(f"/research/s/{study.slug}/participants/").content.decode()
    assert reason in page and "0.45" not in page
    public_id = Participant.objects.get(platform_worker_id="only").public_id
    assert reason in client.get(f"/research/s/{study.slug}/participants/{public_id}/").content.decode()
    assert reason in client.get(f"/research/s/{study.slug}/dashboard/").content.decode()

    export_study(study, fmt="sqlite", path=tmp_path / "one.sqlite")
    exported = sqlite3.connect(tmp_path / "one.sqlite").execute(
        "SELECT value, details FROM reports WHERE metric = 'competence.dawid_skene'"
    )
    assert all(value is None and reason in details for value, details in exported.fetchall())
