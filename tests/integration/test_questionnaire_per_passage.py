"""A question asked per passage (``per: "passage"``) on PostgreSQL, through the participant
pages, an import, the API, the exports, the reports and the plan: the answer is stored by
passage id whatever letter the passage was shown under, and every reader sees one
observation per (item, passage) with that passage's system (UX review 3, U1 and U2)."""

from __future__ import annotations

import csv
import importlib
import json
import re
import sqlite3
from pathlib import Path

import pytest
from django.apps import apps

from annotation.models import Participant, Response, Study
from annotation.services.authoring.answer_imports import import_responses
from annotation.services.authoring.studies import load_study_file
from annotation.services.exports.export import export_study
from annotation.services.participation.adaptive import StopRule
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response
from scoring.adaptive import stop_look
from scoring.data import DEFAULT_BY, load_study_data, one_snapshot
from scoring.models import Report
from scoring.planning import AgreementTarget, ComparisonTarget, plan_agreement, plan_comparison
from scoring.reports import report_for
from scoring.services import compute_study_reports
from tests.factories import researcher_user
from tests.helpers.flow import start, task_action
from tests.helpers.per_passage import SYSTEMS, consistent_answer, per_passage_file
from tests.helpers.questionnaire import questionnaire_file

pytestmark = pytest.mark.django_db
DOCS = Path(__file__).resolve().parents[2] / "docs" / "formats.md"


def test_the_page_asks_it_under_each_passage_and_stores_it_by_passage_id(client):
    study = load_study_file(per_passage_file(items=2)).study
    html = start(client, study.slug)
    cards = re.findall(r'<article class="passage-card">(.*?)</article>', html, re.S)
    assert [re.findall(r'name="(q-[\w-]+)"', card)[0] for card in cards] == ["q-fluency-A", "q-fluency-B"]
    assert "Passage A:" in cards[0] and "Passage B:" in cards[1]
    assert not re.search(r"\b(gpt-small|baseline)\b", html)  # systems stay on the server
    action = task_action(html)
    half = client.post(action, {"q-fluency-A": "5", "q-better": "A"})
    assert half.status_code == 400 and "please answer it for every passage" in half.content.decode()
    assert Response.objects.count() == 0
    assert client.post(action, {"q-fluency-A": "5", "q-fluency-B": "2", "q-better": "A"}).status_code == 302
    stored = Response.objects.get()
    shown_a, shown_b = stored.display_order["order"]
    # by passage id, never by letter: what was shown as A got 5, whichever passage it was
    assert stored.answer == {"fluency": {shown_a: 5, shown_b: 2}, "better": shown_a}
    assert stored.display_order["systems"] == SYSTEMS


def test_an_import_and_the_api_take_the_answer_by_passage_id(client):
    owner = researcher_user("owner")
    client.force_login(owner)
    assert (
        client.post("/api/v1/studies/", per_passage_file(), content_type="application/json").status_code
        == 201
    )
    made = Study.objects.get(slug="pair-fluency")
    assert made.config["questions"][0]["per"] == "passage"
    line = json.dumps(
        {"participant": "lab-1", "item": "pw0", "answer": {"fluency": {"b": 3, "a": 4}, "better": "b"}}
    )
    bad = json.dumps(
        {"participant": "lab-2", "item": "pw1", "answer": {"fluency": {"a": 4, "c": 1}, "better": "a"}}
    )
    with pytest.raises(Exception, match="“c” is not a passage of this page"):
        import_responses(made, [bad], source=Participant.Source.LAB)
    assert import_responses(made, [line], source=Participant.Source.LAB).created == 1
    listed = client.get("/api/v1/responses/", {"study": "pair-fluency"}).json()["results"]
    assert listed[0]["answer"] == {"fluency": {"a": 4, "b": 3}, "better": "b"}  # the file's order
    assert listed[0]["display_order"]["systems"] == SYSTEMS


@pytest.fixture
def answered(enrolled):
    """Four consistent workers on six items, answered through the kind's submit."""
    study = load_study_file(per_passage_file()).study
    for person in range(4):
        participant = enrolled(study)
        for _ in range(6):
            assignment = assign_next_item(participant=participant, study=study)
            n = int(assignment.item.external_id.removeprefix("pw"))
            submit_response(assignment=assignment, answer=consistent_answer(n, person))
    return study


def test_reports_exports_and_plan_read_each_passage_with_its_system(answered, tmp_path):
    compute_study_reports(answered)
    found = Report.objects.filter(study=answered, population="passed")
    means = {
        r.group["system"]: r.value
        for r in found.filter(metric="questionnaire.mean", group__question="fluency")
        if "system" in r.group
    }
    assert means["gpt-small"] == pytest.approx(4.5) and 1 <= means["baseline"] < 2
    difference = found.get(
        metric="questionnaire.difference",
        group={"question": "fluency", "system": "gpt-small", "over": "baseline"},
    )
    assert difference.details["design"] == "paired" and difference.details["pairs"] == 6  # within the page
    assert (
        found.get(
            metric="agreement.krippendorff_alpha", group={"question": "fluency", "level": "ordinal"}
        ).details["units"]
        == 12
    )  # (item, passage) units
    for system in SYSTEMS.values():  # agreement per system: each passage under its own system
        group = {"system": system, "question": "fluency", "level": "ordinal"}
        assert found.get(metric="agreement.krippendorff_alpha", group=group).details["units"] == 6

    export_study(answered, fmt="csv", path=tmp_path / "out.csv")
    with open(tmp_path / "out.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 24
    for row in rows:
        order = json.loads(row["display_order"])["order"]
        answer = json.loads(row["answer.fluency"])
        for letter, pid in zip("AB", order, strict=True):
            assert row[f"shown.{letter}.passage"] == pid
            assert row[f"shown.{letter}.system"] == SYSTEMS[pid]
            assert int(row[f"answer.fluency.{letter}"]) == answer[pid]
        assert row["answer.better.system"] == SYSTEMS[row["answer.better"]]
    export_study(answered, fmt="sqlite", path=tmp_path / "out.sqlite")
    with sqlite3.connect(tmp_path / "out.sqlite") as dump:
        read = 'SELECT "shown.A.system", "answer.fluency.A", "answer.better.system" FROM responses ORDER BY 1'
        found_rows = dump.execute(read).fetchall()
    assert {(system, type(value)) for system, value, _ in found_rows} == {
        ("baseline", int),
        ("gpt-small", int),
    }

    # the stopping rule and the adaptive priority read each passage with its system too
    builder = report_for("questionnaire")
    with one_snapshot():
        data = load_study_data(answered, builder, by=DEFAULT_BY).population("passed").humans().analysed()
    look = stop_look(data, StopRule("fluency", "gpt-small", "baseline", True, None, 0.05), builder)
    assert look is not None and look.counts == (24, 24) and look.items == (6, 6)
    assert look.estimate == pytest.approx(difference.value)
    keys = builder.priority_keys(data)
    assert sorted(set(keys)) == ["better", "fluency#a", "fluency#b"]  # a passage's ratings apart

    # the recipe docs/formats.md gives for pandas reads this file into per-system means
    pd = pytest.importorskip("pandas")
    recipe = re.search(r"```python\n(import pandas as pd\n.*?)```", DOCS.read_text(), re.S)
    assert recipe is not None
    scope = {"pd": pd}
    exec(recipe.group(1).replace('"study-export.csv"', repr(str(tmp_path / "out.csv"))), scope)  # noqa: S102
    from_docs = scope["per_passage"].groupby("system").fluency.mean().to_dict()
    assert from_docs == pytest.approx(means)
    export_study(answered, fmt="jsonl", path=tmp_path / "out.jsonl")
    first = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])
    assert isinstance(first["answer.fluency.A"], int) and first["shown.A.system"] in SYSTEMS.values()

    scale = plan_comparison(
        answered,
        ComparisonTarget("gpt-small", "baseline", "fluency", 0.5),
        items=[10],
        answers_per_item=[2],
        simulations=100,
    )
    assert scale.paired and scale.pilot_items == (6, 6) and scale.pilot_answers == 24  # pages, not ratings
    assert scale.both_on_a_page and scale.table[0].answers == 20  # 10 pages × 2 answers
    pick = plan_comparison(
        answered,
        ComparisonTarget("gpt-small", "baseline", "better", 0.2),
        items=[10],
        answers_per_item=[2],
        simulations=100,
    )
    assert pick.pick and pick.pilot_answers == 24 and pick.table[0].answers == 20
    assert pick.pilot_difference == pytest.approx((22 - 2) / 24)  # 22 picks of 24 for gpt-small
    width = plan_agreement(
        answered, AgreementTarget("fluency", 0.5), items=[10], answers_per_item=[2], simulations=100
    )
    assert (width.pilot_answers, width.pilot_values, width.pilot_items) == (
        24,
        48,
        12,
    )  # U2: each answer once


def test_a_study_file_written_before_keeps_its_meaning_and_old_responses_get_their_systems(enrolled):
    study = load_study_file(questionnaire_file(items=2)).study
    assert all("per" not in q for q in study.config["questions"])  # a question without per: as before
    person = enrolled(study)
    assignment = assign_next_item(participant=person, study=study)
    picked = assignment.item.payload["passages"][0]["id"]
    submit_response(assignment=assignment, answer={"better": picked, "fluency": 3, "issue": "no"})
    response = Response.objects.get()
    assert response.answer["fluency"] == 3  # one value for the page
    Response.objects.filter(pk=response.pk).update(display_order={"order": response.display_order["order"]})
    migration = importlib.import_module("annotation.migrations.0028_questionnaire_display_systems")
    migration.add_systems(apps, None)
    response.refresh_from_db()
    passages = assignment.item.payload["passages"]
    assert response.display_order == {
        "order": assignment.state["order"],
        "systems": {p["id"]: p["system"] for p in passages},
    }


def test_the_plan_page_offers_the_studys_questions_and_systems(client):
    owner = researcher_user("owner")
    study = load_study_file(per_passage_file(items=2), owner=owner).study
    client.force_login(owner)
    page = client.get(f"/research/s/{study.slug}/plan/").content.decode()
    assert '<option value="fluency">fluency: scale, per passage</option>' in page
    assert '<option value="better">better: pick, share of the picks (pairwise)</option>' in page
    assert '<option value="reason">' not in page  # free text: nothing to plan
    for name in ("first", "second"):
        assert re.search(
            rf'<select name="{name}"[^>]*>\s*<option value="" selected>—</option>\s*'
            r'<option value="baseline">baseline</option>\s*<option value="gpt-small">',
            page,
        )
