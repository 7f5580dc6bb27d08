"""Judges behind an OpenAI-compatible endpoint: ``judge`` jobs run in this process against a
stand-in endpoint the test starts (``tests.helpers.openai_standin``; nothing reaches the
network). A questionnaire study judged in both orders with k = 3; a rerun sends nothing and
a copy of the study is answered from the cache, byte for byte; a 429 storm (with a 500, a
timeout, a malformed reply and a refusal) ends with every item answered or recorded as failed,
and the next run asks only the failed ones again."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Job, JudgeEndpoint, JudgeExchange, ModelOutput, Participant, Response
from annotation.services.analysis.judges import store_endpoint_key
from annotation.services.jobs import JOB_KINDS, create_job
from roft_site.celery import app
from tests.factories import ItemFactory, StudyFactory
from tests.helpers.openai_standin import StandIn, first_allowed, prompt_of

pytestmark = pytest.mark.django_db

QUESTIONS = {
    "questions": [
        {"id": "clarity", "type": "scale", "points": 5, "labels": ["Unclear", "Clear"], "text": "How clear?"},
        {"id": "better", "type": "pick", "pick": "pairwise", "tie": True, "text": "Which summary is better?"},
    ]
}
PASSAGE = re.compile(r"^Passage ([A-Z]):\n(.*)$", re.MULTILINE)


def fair_or_biased(body: dict) -> str:
    """The stand-in judge: the passage that reads "crisp" is better, except on a page whose
    context says "biased", where it always answers A (position bias); a clarity of 4."""
    prompt = prompt_of(body)
    if "Which summary is better?" not in prompt.rsplit("Question:", 1)[-1]:
        return "4" if "How clear?" in prompt.rsplit("Question:", 1)[-1] else first_allowed(body)
    if "Context: biased" in prompt:
        return "A"
    letters = {text: letter for letter, text in PASSAGE.findall(prompt.rsplit("Now your turn:", 1)[-1])}
    return next(letter for text, letter in letters.items() if "crisp" in text)


def make_study(slug: str, owner=None, items: int = 4):
    study = StudyFactory(
        kind="questionnaire", slug=slug, config=QUESTIONS, instructions="Judge the summaries."
    )
    if owner is not None:
        study.owner = owner
        study.save(update_fields=["owner"])
    for n in range(items):
        ItemFactory(
            study=study,
            external_id=f"page-{n}",
            payload={
                "context": "biased" if n == 3 else f"note {n}",
                "passages": [
                    {"id": f"good-{n}", "text": f"A crisp summary of note {n}.", "system": "gpt-4o-mini"},
                    {"id": f"bad-{n}", "text": f"A muddled summary of note {n}.", "system": "rome"},
                ],
            },
        )
    return study


@pytest.fixture
def fast_calls(settings):
    settings.JUDGE_BACKOFF_S = 0.001
    settings.JUDGE_RETRY_AFTER_MAX_S = 0
    settings.JUDGE_TIMEOUT_S = (
        10.0  # a loaded machine's reply is never a timeout (the storm test sets its own)
    )
    settings.JUDGE_RETRIES = 2
    return settings


def run_judge(study, user, parameters: dict) -> Job:
    job = create_job(kind="judge", parameters=parameters, study=study, user=user)
    app.tasks[JOB_KINDS["judge"].task].apply(args=[job.pk])
    job.refresh_from_db()
    return job


def answers_by_page(study) -> dict:
    rows = ModelOutput.objects.filter(study=study).select_related("item", "response").order_by("item__pk")
    return {o.item.external_id: (o.raw, o.response.answer if o.response else None, o.error) for o in rows}


def test_a_questionnaire_is_judged_in_both_orders_k3_and_a_rerun_sends_nothing(fast_calls, django_user_model):
    alice = django_user_model.objects.create_user("alice", is_staff=True)
    study = make_study("judged", alice)
    with StandIn(fair_or_biased) as standin:
        store_endpoint_key(alice, base_url=standin.url + "/", key="sk-test-123")
        parameters = {"base_url": standin.url, "model": "gpt-4o", "samples": 3, "seed": 5}
        job = run_judge(study, alice, parameters)
        assert job.status == Job.Status.DONE, job.error
        result = job.result
        # 4 pages × 2 orders × 2 questions × 3 samples, each with the owner's key, seeds per sample.
        assert standin.count == 48 == result["estimate"]["calls"] == result["record"]["requests_sent"]
        assert set(standin.authorizations) == {"Bearer sk-test-123"}
        assert len({body["seed"] for body in standin.requests}) == 3
        assert (result["items"], result["created"], result["failed"], result["unparseable"]) == (4, 4, 0, 0)
        assert "sk-test-123" not in json.dumps(result) + json.dumps(job.parameters)

        answers = {page: answer for page, (_raw, answer, _error) in answers_by_page(study).items()}
        assert [answers[f"page-{n}"]["better"] for n in range(3)] == ["good-0", "good-1", "good-2"]
        assert answers["page-3"]["better"] == "tie"  # A in both orders: one vote each way, 3 to 3
        assert all(answer["clarity"] == 4 for answer in answers.values())
        biased = ModelOutput.objects.get(study=study, item__external_id="page-3").details
        fair = ModelOutput.objects.get(study=study, item__external_id="page-0").details
        assert biased["swap"] == {"clarity": True, "better": False} and biased["confidence"]["better"] == 0.5
        assert fair["swap"]["better"] is True and fair["confidence"] == {"clarity": 1.0, "better": 1.0}
        assert fair["orders"] == 2 and list(fair["votes"]["better"].values()) == [
            6
        ]  # in the first order's letters
        assert result["swap_consistency"]["rate"] == 0.875  # 7 of 8 question × page comparisons
        assert result["swap_consistency"]["questions"]["better"] == {
            "compared": 4,
            "consistent": 3,
            "rate": 0.75,
        }

        record = result["record"]
        assert record["models_returned"] == ["gpt-4o-2026-01-01"] and record["endpoint"] == standin.url
        assert record["seed"] == 5 and record["samples"] == 3 and record["temperature"] == 0.7
        assert "{material}" in record["prompt_template"] and len(record["prompt_template_sha256"]) == 64
        assert "self-preference" in result["warning"] and "gpt-4o-mini" in result["warning"]
        judge = Participant.objects.get(platform_worker_id=result["participant"])
        assert judge.definition["kind"] == "judge" and "sk-test" not in json.dumps(judge.definition)

        again = run_judge(study, alice, parameters)
        assert standin.count == 48 and again.result["created"] == again.result["items"] == 0

        copy = make_study("judged-copy", alice)  # the same pages: every request is in the cache
        replayed = run_judge(copy, alice, parameters)
        assert standin.count == 48, "a rerun sends nothing"
        assert replayed.result["created"] == 4 and replayed.result["record"]["cached_replies"] == 48
    assert answers_by_page(copy) == answers_by_page(study)  # raw replies and answers, byte for byte
    assert JudgeExchange.objects.count() == 48


def test_a_429_storm_ends_with_every_item_answered_or_failed_and_a_rerun_asks_only_those(
    fast_calls, django_user_model
):
    alice = django_user_model.objects.create_user("alice", is_staff=True)
    study = make_study("stormy", alice)
    parameters = {"samples": 1, "model": "judge-x"}
    fast_calls.JUDGE_TIMEOUT_S = 1.0  # the slow reply comes after 1.5 s; no other reply nears it
    with StandIn(fair_or_biased, slow_s=1.5) as standin:
        # page-0: three 429s on its first call (2 retries) → failed; page-1: two 429s, then
        # answered; page-2: a 500 then an answer, a timeout then an answer, then a malformed
        # reply → failed; page-3: a refusal → failed.
        standin.faults = ["429"] * 3 + ["429", "429", ""] + [""] * 3 + ["500", "", "slow", "", "malformed"]
        standin.faults += ["refuse"]
        job = run_judge(study, alice, {**parameters, "base_url": standin.url})
        assert job.status == Job.Status.DONE, job.error
        assert (job.result["created"], job.result["failed"], job.result["items"]) == (1, 3, 4)
        outputs = answers_by_page(study)
        assert outputs["page-1"][1] is not None and outputs["page-1"][2] == ""
        assert "status 429 after 3 tries" in outputs["page-0"][2]
        assert "malformed reply" in outputs["page-2"][2] and "refused" in outputs["page-3"][2]
        assert all(outputs[p][1] is None for p in ("page-0", "page-2", "page-3"))
        assert Response.objects.filter(study=study).count() == 1
        sent = standin.count
        page1_prompts = {prompt_of(body) for body in standin.requests if "note 1." in prompt_of(body)}

        rerun = run_judge(study, alice, {**parameters, "base_url": standin.url})
        assert (rerun.result["retried"], rerun.result["created"], rerun.result["failed"]) == (3, 3, 0)
        again = standin.requests[sent:]
        assert not {prompt_of(body) for body in again} & page1_prompts  # the answered page is not asked again
        assert rerun.result["record"]["cached_replies"] == 2  # page-2's two answered calls
    assert ModelOutput.objects.filter(study=study, response__isnull=False).count() == 4


def test_a_429_storm_that_never_ends_fails_every_item_yet_the_job_finishes(fast_calls, django_user_model):
    alice = django_user_model.objects.create_user("alice", is_staff=True)
    study = make_study("storm-only", alice, items=3)
    with StandIn() as standin:
        standin.faults = ["429"] * 100
        job = run_judge(study, alice, {"base_url": standin.url, "model": "m", "samples": 2})
        assert standin.count == 3 * 3  # each page's first call, tried 3 times, then the page is given up
    assert job.status == Job.Status.DONE and (job.result["failed"], job.result["created"]) == (3, 0)
    assert job.result["errors"] == {"failed": 3} and not Response.objects.filter(study=study).exists()
    assert JudgeExchange.objects.count() == 0


def test_a_job_above_its_token_cap_sends_nothing(fast_calls, django_user_model):
    alice = django_user_model.objects.create_user("alice", is_staff=True)
    study = make_study("capped", alice, items=2)
    with StandIn() as standin:
        job = run_judge(study, alice, {"base_url": standin.url, "model": "m", "token_cap": 50})
        assert standin.count == 0
    assert job.status == Job.Status.FAILED and "above the cap of 50" in job.error
    assert not ModelOutput.objects.filter(study=study).exists()


def test_the_judges_page_stores_a_key_unseen_shows_the_estimate_and_refuses_above_the_cap(
    client, django_user_model, django_capture_on_commit_callbacks
):
    alice = django_user_model.objects.create_user("alice", is_staff=True)
    bob = django_user_model.objects.create_user("bob", is_staff=True)
    study = make_study("paged", alice, items=2)
    page = f"/research/s/{study.slug}/judges/"
    client.force_login(alice)
    assert 'id="judges-link"' in client.get(f"/research/s/{study.slug}/").content.decode()
    stored = client.post(
        page + "key/", {"base_url": "http://judge.test/v1/", "api_key": "sk-secret-9"}, follow=True
    )
    html = stored.content.decode()
    assert "http://judge.test/v1" in html and "sk-secret-9" not in html and "never shown again" in html
    assert JudgeEndpoint.objects.get(user=alice).encrypted != b"sk-secret-9"
    bad = client.post(page + "key/", {"base_url": "ftp://x", "api_key": "k"}, follow=True).content.decode()
    assert "Nothing changed" in bad and "base_url" in bad

    asked = {"base_url": "http://judge.test/v1", "model": "gpt-4o", "samples": "3", "swap": "1"}
    refused = client.post(page + "start/", {**asked, "token_cap": "10"}, follow=True).content.decode()
    assert "above the cap of 10" in refused and not Job.objects.exists()
    confirm = client.post(page + "start/", asked).content.decode()
    # 2 pages × 2 orders × 2 questions × 3 samples; the passages' gpt-4o-mini is the judge's family.
    assert '<strong id="estimate-calls">24</strong>' in confirm and 'id="self-preference"' in confirm
    assert not Job.objects.exists()
    with django_capture_on_commit_callbacks() as queued:
        client.post(page + "start/", {**asked, "confirm": "yes"})
    job = Job.objects.get()
    assert (job.kind, job.created_by, job.parameters["samples"], job.parameters["swap"]) == (
        "judge",
        alice,
        3,
        True,
    )
    assert "sk-secret" not in json.dumps(job.parameters) and len(queued) == 1

    record = {"requests_sent": 24, "cached_replies": 0}
    result = {"created": 2, "failed": 0, "swap_consistency": {"rate": 0.75}, "record": record, "warning": ""}
    Job.objects.filter(pk=job.pk).update(status=Job.Status.DONE, result=result)
    assert (
        "2 answered, 0 failed · swap consistency 0.75 · 24 requests sent" in client.get(page).content.decode()
    )

    client.force_login(bob)
    assert client.get(page).status_code == 404


def test_the_judge_command_runs_a_job_with_the_owners_key(fast_calls, django_user_model):
    alice = django_user_model.objects.create_user("alice", is_staff=True)
    study = make_study("commanded", alice, items=1)
    out = StringIO()
    with StandIn() as standin:
        store_endpoint_key(alice, base_url=standin.url, key="sk-alice")
        call_command(
            "judge", study=study.slug, base_url=standin.url, model="m", samples=1, no_swap=True,
            owner="alice", stdout=out, stderr=StringIO(),
        )  # fmt: skip
        assert standin.count == 2 and set(standin.authorizations) == {
            "Bearer sk-alice"
        }  # two questions, one order
        with pytest.raises(CommandError, match="above the cap of 5"):
            call_command(
                "judge", study=study.slug, base_url=standin.url, model="n", token_cap=5, stderr=StringIO()
            )
        assert standin.count == 2
    assert "judge job" in out.getvalue() and '"created": 1' in out.getvalue()


def test_a_judge_answers_every_kind_a_local_rater_answers(fast_calls, django_user_model):
    """The same prompts and parsing as ``rate_llm``: each kind's items answered through the
    stand-in (its first allowed answer every time), and the kind's validation passes them."""
    from tests.rater_cases import CASES

    alice = django_user_model.objects.create_user("alice", is_staff=True)
    with StandIn() as standin:
        for kind, case in CASES.items():
            study = StudyFactory(kind=kind, slug=f"judge-{kind}", config=case.config, owner=alice)
            for n, payload in enumerate(case.payloads):
                ItemFactory(study=study, external_id=f"{kind}-{n}", payload=payload)
            job = run_judge(study, alice, {"base_url": standin.url, "model": "m", "samples": 1})
            assert job.status == Job.Status.DONE, (kind, job.error)
            result = job.result
            assert (result["created"], result["invalid"], result["failed"]) == (len(case.payloads), 0, 0), (
                kind,
                result,
            )
