"""Time per page (the expected time shown, answers under the minimum flagged but kept) and
the instructions' worked examples and FAQ, on the consent and instructions pages."""

import json
import re
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.models import Assignment, Response
from annotation.services.authoring.studies import load_study_file
from tests.helpers.flow import start, task_action

pytestmark = pytest.mark.django_db
CHOICE = {"choice": "response_1"}


def pairwise_study(example_study_file, **fields):
    data = example_study_file("simulation-pairwise")
    data.update(fields)
    return load_study_file(data).study


def test_an_answer_under_the_minimum_is_kept_and_flagged(client, example_study_file):
    study = pairwise_study(example_study_file, min_seconds_per_page=30)
    html = start(client, study.slug)
    assert client.post(task_action(html), CHOICE).status_code == 302
    quick = Response.objects.get()
    assert quick.too_fast is True and quick.duration_seconds < 30
    html = client.get(f"/s/{study.slug}/task/").content.decode()
    Assignment.objects.filter(status="assigned").update(shown_at=timezone.now() - timedelta(seconds=45))
    client.post(task_action(html), CHOICE)
    slow = Response.objects.exclude(pk=quick.pk).get()
    assert slow.too_fast is False and slow.duration_seconds >= 45


def test_without_a_minimum_nothing_is_flagged(client, example_study_file):
    study = pairwise_study(example_study_file)
    client.post(task_action(start(client, study.slug)), CHOICE)
    assert Response.objects.get().too_fast is False


def test_imported_answers_are_flagged_the_same_way(tmp_path, example_study_file):
    study = pairwise_study(example_study_file, min_seconds_per_page=30)
    lines = [
        {"participant": "a", "item": "bike-chain", "answer": CHOICE,
         "shown_at": "2024-05-01T10:00:00Z", "answered_at": "2024-05-01T10:00:05Z"},
        {"participant": "a", "item": "flat-rent-buy", "answer": CHOICE,
         "shown_at": "2024-05-01T10:01:00Z", "answered_at": "2024-05-01T10:02:00Z"},
    ]  # fmt: skip
    path = tmp_path / "timed.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    call_command("importresponses", study.slug, str(path), stdout=StringIO())
    flags = dict(Response.objects.values_list("item__external_id", "too_fast"))
    assert flags == {"bike-chain": True, "flat-rent-buy": False}


def test_the_expected_time_is_shown_before_and_on_each_page(client, example_study_file):
    study = pairwise_study(example_study_file, expected_seconds_per_page=150)
    consent = client.get(f"/s/{study.slug}/", follow=True).content.decode()
    assert "3 pages, each about 2 minutes" in consent
    page = client.post(f"/s/{study.slug}/consent/", follow=True).content.decode()
    assert "about 2 minutes per page" in page


def test_consent_and_instructions_show_worked_examples_read_only_with_reasons(client, example_study_file):
    data = example_study_file("ranking")
    study = load_study_file(data).study
    for url in (f"/s/{study.slug}/", f"/s/{study.slug}/instructions/"):
        html = client.get(url, follow=True).content.decode()
        example = html[html.index('class="worked-examples"') : html.index('class="faq"')]
        assert data["examples"][0]["payload"]["fact"] in example
        assert "<strong>MOST consistent: B.</strong>" in example  # the explanation's Markdown
        radios = re.findall(r"<input [^>]*>", example)
        assert radios and all("disabled" in radio for radio in radios)
        checked = [re.search(r'name="([\w-]+)" value="(\w)"', r).groups() for r in radios if "checked" in r]
        assert sorted(checked) == [
            ("consistency-least", "A"),
            ("consistency-most", "B"),
            ("fluency-least", "C"),
            ("fluency-most", "A"),
        ]
        assert data["faq"][0]["question"] in html
        assert "task-form" not in example


@pytest.mark.parametrize("kind", ["likert", "plausibility", "simulation-pairwise"])
def test_every_survey_kind_renders_its_worked_example(client, example_study_file, kind):
    data = example_study_file(kind)
    study = load_study_file(data).study
    html = client.get(f"/s/{study.slug}/instructions/").content.decode()
    example = html[html.index('class="worked-examples"') :]
    assert "Our answer, and why" in example
    assert example.count(" checked") == sum(
        len(answer) if isinstance(answer, dict) else 1 for answer in data["examples"][0]["answer"].values()
    )
