"""``plan --judge-answers``: the hybrid question, from a pilot with humans on some items and
a judge on all of them: the human answers a width or a power needs beside N judge answers,
fewer than humans alone need; bad input names the field."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Study
from scoring.planning import HybridTarget, plan_hybrid
from scoring.services import compute_study_reports
from tests.helpers.hybrid import hybrid_study

pytestmark = pytest.mark.django_db


def plan(*args: str) -> str:
    out = StringIO()
    call_command("plan", "hybrid", "--question", "fluent", *args, stdout=out)
    return out.getvalue()


def test_the_hybrid_plan_answers_in_human_answers_and_says_what_the_judge_saves(owner):
    study, judge = hybrid_study(owner)
    text = plan("--judge-answers", "2000", "--width", "0.3")
    hybrid, alone = (int(n.replace(",", "")) for n in re.findall(r"([\d,]+) human answers", text)[1:3])
    assert hybrid < alone and "The judge saves" in text and judge.platform_worker_id in text
    # the same numbers as the pilot's fit scaled by stats.ppi (one pairing rule: the reports')
    found = plan_hybrid(study, HybridTarget("fluent", 2000, width=0.3))
    assert (found.needed.hybrid, found.needed.humans_only) == (hybrid, alone)
    compute_study_reports(study)  # the reports' own PPI figure is the pilot's fit
    from scoring.models import Report

    row = Report.objects.get(
        study=study, population="passed", metric="hybrid.mean",
        group={"question": "fluent", "system": "all systems", "rater": judge.platform_worker_id},
    )  # fmt: skip
    assert row.value == pytest.approx(found.pilot.estimate)
    power = plan("--judge-answers", "2000", "--compare", "A", "B", "--difference", "0.5")
    assert "a difference of 0.5 between A and B" in power and "human answers" in power


def test_bad_hybrid_targets_name_the_field(owner):
    hybrid_study(owner)
    with pytest.raises(CommandError, match="--judge-answers"):
        plan("--judge-answers", "0", "--width", "0.3")
    with pytest.raises(CommandError, match="--width"):
        plan("--width", "0.3")
    with pytest.raises(CommandError, match="--width"):
        plan("--judge-answers", "100", "--width", "-1")
    with pytest.raises(CommandError, match="--question"):
        call_command("plan", "hybrid", "--question", "nope", "--judge-answers", "10", "--width", "1")
    assert Study.objects.count() == 1


def test_a_pilot_without_a_judge_is_refused(owner):
    hybrid_study(owner)
    from annotation.models import Response

    Response.objects.filter(participant__source="model").delete()
    with pytest.raises(CommandError, match="--judge-answers: The pilot needs a model rater"):
        plan("--judge-answers", "100", "--width", "0.3")


def test_the_plan_page_answers_the_hybrid_question_where_the_study_has_a_judge(client, owner):
    study, _ = hybrid_study(owner)
    client.force_login(owner)
    url = f"/research/s/{study.slug}/plan/"
    page = client.get(url).content.decode()
    assert 'id="plan-judged"' in page and 'name="judge_answers"' in page
    shown = client.get(url, {"question": "fluent", "judge_answers": "2000", "width": "0.3"}).content.decode()
    found = plan_hybrid(study, HybridTarget("fluent", 2000, width=0.3))  # the command's function
    assert f'id="plan-hybrid-humans">{found.needed.hybrid}<' in shown
    assert f'id="plan-humans-only">{found.needed.humans_only}<' in shown
    assert f"The judge saves {round(100 * found.saving)}%" in shown
    bad = client.get(url, {"question": "fluent", "judge_answers": "0", "width": "0.3"}).content.decode()
    assert "judge answers" in bad.lower() and 'id="plan-hybrid"' not in bad
    alone = client.get(url, {"question": "fluent", "width": "0.3"}).content.decode()
    assert "planned beside judge answers" in alone
    from annotation.models import Response

    Response.objects.filter(participant__source="model").delete()  # no judge: no hybrid fields
    assert 'name="judge_answers"' not in client.get(url).content.decode()
