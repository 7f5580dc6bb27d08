"""Machine raters (participants with source ``model``) never count among the humans: the
kinds' means, shares, tests and progress are the humans' alone, while the rows that compare
machines with humans (``agreement.machine_*``) still see them. On PostgreSQL, through
``computereports --json``, with the answers stored through the services."""

import pytest

from tests.factories import AnsweredResponseFactory, ItemFactory, StudyFactory
from tests.helpers.reports import computereports_json, report_row, simulation_study

pytestmark = pytest.mark.django_db

HUMANS = ("h1", "h2")
ITEMS = [f"{system}-{case}" for system in ("ROME", "FT") for case in range(3)]


def _answers(study, answer_of) -> None:
    """Every item answered by both humans and by the judge (a machine rater)."""
    rows = [
        {
            "participant": rater,
            "item": item,
            "answer": answer_of(rater, item),
            "source": "model" if rater == "judge" else "lab",
        }
        for rater in (*HUMANS, "judge")
        for item in ITEMS
    ]
    AnsweredResponseFactory.from_specs(study, rows)


def _items(study, payload: dict | None = None) -> None:
    specs = [{"external_id": item, "provenance": {"system": item.split("-")[0]}} for item in ITEMS]
    if payload is not None:
        specs = [{**spec, "payload": payload} for spec in specs]
    ItemFactory.from_specs(study, specs)


def test_likert_means_and_progress_are_the_humans_and_the_judge_is_compared_apart(researcher, client):
    questions = [{"id": "edit", "text": "…", "passage": "main"}]
    study = StudyFactory(
        kind="likert",
        slug="humans-6",
        owner=researcher,
        annotations_per_item=3,
        config={"questions": questions},
    )
    _items(study, {"new_fact": "f", "old_facts": [], "main_passage": "p"})
    _answers(study, lambda rater, item: {"ratings": {"edit": 1 if rater == "judge" else 6}})
    rows = computereports_json(study)

    overall = report_row(rows, "likert.mean", question="edit")
    assert (overall["value"], overall["n"]) == (6.0, 2 * len(ITEMS))
    for system in ("ROME", "FT"):
        assert report_row(rows, "likert.mean", question="edit", system=system)["value"] == 6.0
    responses = report_row(rows, "progress.responses")
    assert (responses["value"], responses["details"]["machine_responses"]) == (2 * len(ITEMS), len(ITEMS))
    participants = report_row(rows, "progress.participants")
    assert (participants["value"], participants["details"]["machine_raters"]) == (2, 1)
    # three answers per item were asked for: two humans do not complete an item, the judge never does
    assert report_row(rows, "progress.items_complete")["value"] == 0
    # the judge is still compared with the humans, by name
    scope = {"question": "edit", "level": "ordinal"}
    judge = report_row(rows, "agreement.machine_alpha", **scope, rater="judge", against="humans")
    assert judge["details"]["pairs"] == 2 * len(ITEMS)
    ceiling = report_row(rows, "agreement.machine_alpha", **scope, rater="humans", against="humans")
    assert ceiling["details"]["pairs"] == len(ITEMS)
    assert report_row(rows, "agreement.percent", **scope)["n"] == len(ITEMS)  # one human pair per item
    # the dashboard's counts add up: the judge's answers are named apart
    html = client.get(f"/research/s/{study.slug}/dashboard/").content.decode()
    assert f"from {3 * len(ITEMS)} responses ({len(ITEMS)} of machine raters, counted apart)" in html
    assert f"{2 * len(ITEMS)} answers to items; 1 machine rater ({len(ITEMS)} answers) counted apart" in html


def test_claim_label_shares_evidence_and_test_are_the_humans():
    study = StudyFactory(kind="claim", slug="humans-support", annotations_per_item=2)
    _items(study)

    def answer(rater, item):
        if rater == "judge":
            return {"label": "contradicts", "evidence": [2]}
        return {"label": "supports", "evidence": [0]}

    _answers(study, answer)
    rows = computereports_json(study)

    assert report_row(rows, "claim.label_share", label="supports")["value"] == 1.0
    contradicts = report_row(rows, "claim.label_share", label="contradicts")
    assert (contradicts["value"], contradicts["n"]) == (0.0, 2 * len(ITEMS))
    assert report_row(rows, "claim.label_share", system="FT", label="supports")["value"] == 1.0
    assert report_row(rows, "claim.evidence_f1")["value"] == 1.0  # the humans marked the same sentence
    assert report_row(rows, "claim.chi_square")["n"] == 2 * len(ITEMS)
    assert report_row(rows, "progress.items_complete")["value"] == len(ITEMS)
    scope = {"question": "label", "level": "nominal"}
    judge = report_row(rows, "agreement.machine_alpha", **scope, rater="judge", against="humans")
    assert judge["details"]["pairs"] == 2 * len(ITEMS)
    assert report_row(rows, "agreement.percent", **scope)["value"] == 1.0


def test_each_simulator_has_its_own_precision_beside_the_humans():
    study = simulation_study()  # humans h1, h2 and the simulator gpt
    rows = [
        {"participant": "llama", "item": item, "answer": {"choice": "no"}, "source": "model"}
        for item in ("e1-0", "e1-1", "e1-2", "e2-0", "e2-1", "e2-2")
    ]
    AnsweredResponseFactory.from_specs(study, rows)
    found = computereports_json(study)

    def precision(system: str, rater: str) -> float:
        return report_row(found, "simulation.precision", system=system, rater=rater)["value"]

    for system in ("GPT-4", "GPT-3"):  # the model answered yes, yes, no for each explanation
        assert precision(system, "llama") == pytest.approx(1 / 3)
    assert precision("GPT-4", "gpt") == pytest.approx(1.0)
    assert precision("GPT-4", "human") == pytest.approx(3 / 4)
    raters = {r["group"]["rater"] for r in found if r["metric"] == "simulation.precision"}
    assert raters == {"human", "gpt", "llama"}
    # h1 and h2 committed on four of their six GPT-4 judgements; the simulators always commit
    assert report_row(found, "simulation.simulatable_rate", system="GPT-4")["value"] == pytest.approx(4 / 6)
    assert report_row(found, "progress.participants")["details"]["machine_raters"] == 2
