"""An adaptive study's stopping rule while the study is live: the reports job stores the
rule's interval now (``adaptive.stopping_interval``), the overview and the dashboard show it,
and a rule naming what the study does not have is refused by name (docs/formats.md,
"Adaptive collection")."""

from __future__ import annotations

import pytest

from annotation.errors import InputError
from annotation.models import Study
from annotation.services.authoring.studies import load_study_file
from scoring.models import Report
from scoring.services import compute_study_reports
from tests.conftest import claim_study_file
from tests.helpers.adaptive import ITEMS, answer_all, likert_study_file

pytestmark = pytest.mark.django_db

NOT_MET = {"question": "quality", "systems": ["A", "B"], "width": 0.1}


def stored_interval(study: Study) -> Report:
    return Report.objects.get(study=study, metric="adaptive.stopping_interval", population="passed")


def test_the_rules_interval_now_is_stored_counted_and_shown_while_the_study_is_live(
    client, researcher, enrolled
):
    study = load_study_file(likert_study_file(NOT_MET), owner=researcher).study
    overview = f"/research/s/{study.slug}/"
    assert "now: not computed yet" in client.get(overview).content.decode()
    answer_all(study, enrolled, {"A": [5, 6], "B": [5, 4]})  # A 5.5, B 4.5 on average: 1.0 apart
    compute_study_reports(study)
    first = stored_interval(study)
    assert first.group == {"question": "quality", "system": "A", "over": "B"}
    assert first.value == pytest.approx(1.0) and first.n == ITEMS * 5
    assert first.ci_low < 1.0 < first.ci_high and first.ci_high - first.ci_low > 0.1
    details = first.details
    assert (details["n_first"], details["n_second"], details["looks"]) == (50, 50, 1)
    assert details["met"] is False and details["rule"] == "width <= 0.1" and details["alpha"] == 0.05
    compute_study_reports(study)  # the next look
    second = stored_interval(study)
    assert second.details["looks"] == 2 and second.ci_low == pytest.approx(first.ci_low)
    study.refresh_from_db()
    assert study.status == Study.Status.LIVE
    page = client.get(overview).content.decode()
    now = f"now: 1.000 in [{second.ci_low:.3f}, {second.ci_high:.3f}], 50 answers of A and 50 of B, 2 looks"
    assert now in page, page
    dashboard = client.get(f"/research/s/{study.slug}/dashboard/").content.decode()
    assert "Stopping rule: the difference now, with its confidence sequence" in dashboard


def test_before_both_systems_have_answers_the_figure_says_why_it_is_empty(client, researcher, enrolled):
    study = load_study_file(likert_study_file(NOT_MET), owner=researcher).study
    compute_study_reports(study)
    empty = stored_interval(study)
    assert empty.value is None and empty.details["looks"] == 0 and "no answers" in empty.details["reason"]
    assert "now: not measurable yet" in client.get(f"/research/s/{study.slug}/").content.decode()


def test_a_uniform_study_and_an_adaptive_one_without_a_rule_store_no_interval(enrolled):
    study = load_study_file(likert_study_file(None)).study
    compute_study_reports(study)
    assert not Report.objects.filter(metric="adaptive.stopping_interval").exists()


@pytest.mark.parametrize(
    ("make", "field", "words"),
    [
        # a claim study's label is nominal: no mean to compare
        (
            lambda stop: claim_study_file(config={"assignment": "adaptive", "adaptive": {"stop": stop}}),
            "config.adaptive.stop.question",
            "'quality' is not a question on a scale of this study (it has none)",
        ),
        (
            lambda stop: likert_study_file({**stop, "question": "clarity"}),
            "config.adaptive.stop.question",
            "'clarity' is not a question on a scale of this study (its questions on a scale: quality)",
        ),
        (
            lambda stop: likert_study_file({**stop, "systems": ["A", "C"]}),
            "config.adaptive.stop.systems",
            "No item has the system 'C' (the items' provenance.system values: A, B)",
        ),
    ],
)
def test_a_rule_naming_what_the_study_does_not_have_is_refused_by_name(make, field, words):
    with pytest.raises(InputError) as refused:
        load_study_file(make(NOT_MET))
    assert words in refused.value.errors[field][0], refused.value.errors
    assert not Study.objects.exists()


def test_a_patched_rule_naming_a_system_no_item_has_is_refused_over_http(client, researcher):
    study = load_study_file({**likert_study_file(None), "status": "draft"}, owner=researcher).study
    config = {
        **study.config,
        "adaptive": {**study.config["adaptive"], "stop": {**NOT_MET, "systems": ["A", "Z"]}},
    }
    answer = client.patch(
        f"/api/v1/studies/{study.slug}/", {"config": config}, content_type="application/json"
    )
    assert answer.status_code == 400
    assert "No item has the system 'Z'" in answer.json()["config.adaptive.stop.systems"][0]
    study.refresh_from_db()
    assert study.config["adaptive"]["stop"] is None
