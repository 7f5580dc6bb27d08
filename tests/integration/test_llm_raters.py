"""LLM raters and simulators on the tiny model: ``rate_llm`` jobs on a real Celery worker
(queue ``gpu``, Redis, PostgreSQL) answer a study of every kind they support, as a
``model`` participant whose answers passed the kind's validation; k-shot examples come
from people's answers to other items; a rerun adds nothing. ``simulate`` gives one
participant per simulator; free generation that names no allowed answer is counted."""

from __future__ import annotations

import hashlib
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Item, Job, ModelOutput, Participant, Response, Study
from annotation.services.analysis.model_answers import ModelAnswersResult, human_examples
from annotation.services.jobs import start_job
from tests.celery_worker import redis_worker_on
from tests.factories import AnsweredResponseFactory, ItemFactory, StudyFactory
from tests.helpers.jobs import wait_for_done
from tests.lm_fixtures import TINY
from tests.rater_cases import CASES
from workers.raters.llm import prompt_item

INSTRUCTIONS = "Read the page, then answer each question as you see it."
PARAMETERS = {"model": TINY, "shots": 2, "seed": 3}


def make_study(kind: str) -> Study:
    case = CASES[kind]
    study = StudyFactory(kind=kind, slug=f"llm-{kind}", config=case.config, instructions=INSTRUCTIONS)
    for n, (payload, (answer, state)) in enumerate(zip(case.payloads, case.human, strict=True)):
        item = ItemFactory(study=study, external_id=f"{kind}-{n}", payload=payload)
        AnsweredResponseFactory(
            study=study, item=item, participant=f"h{n}", answer=answer, display_order=state
        )
    ItemFactory(study=study, external_id=f"{kind}-check", payload=case.payloads[0], attention_check=True)
    return study


def started(studies) -> list[Job]:
    """A rate_llm job for each study, all started before waiting for any (each done)."""
    jobs = [start_job(kind="rate_llm", parameters=PARAMETERS, study=s) for s in studies]
    return [wait_for_done(job) for job in jobs]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_rate_llm_jobs_answer_every_kind_on_the_gpu_queue_and_a_rerun_adds_nothing(worker_settings):
    studies = {kind: make_study(kind) for kind in CASES}
    with redis_worker_on(["gpu"]):
        jobs = started(studies.values())
        for job in jobs:
            assert job.result["created"] == 3 and job.result["items"] == 3, job.result
            assert job.result["unparseable"] == job.result["invalid"] == 0
            assert job.result.keys() == ModelAnswersResult().summary().keys()  # raters and simulators alike
            assert job.progress_done == job.progress_total == 3
        counts = Response.objects.count()
        again = started(studies.values())
    assert all(job.result["created"] == job.result["items"] == 0 for job in again)
    assert Response.objects.count() == counts and ModelOutput.objects.count() == 3 * len(CASES)

    for kind, study in studies.items():
        rater = (
            Participant.objects.filter(responses__study=study, source=Participant.Source.MODEL)
            .distinct()
            .get()
        )
        assert rater.definition["kind"] == ("simulator" if kind == "simulation" else "llm")
        assert rater.definition["shots"] == 2 and rater.definition["model"] == TINY
        responses = Response.objects.filter(study=study, participant=rater).select_related(
            "item", "assignment"
        )
        assert sorted(r.item.external_id for r in responses) == [f"{kind}-{n}" for n in range(3)]
        examples = human_examples(study)
        for response in responses:
            # the stored answer is one the kind accepts on the page state the model saw
            item = response.item
            assert study.task_kind.validate_answer(item, response.answer, state=response.assignment.state)
            output = response.model_output
            assert output.details["examples"] and item.external_id not in output.details["examples"]
            rebuilt = prompt_item(
                study.task_kind, study, item, examples, seed=PARAMETERS["seed"], shots=PARAMETERS["shots"]
            )
            digests = [hashlib.sha256(p.encode()).hexdigest()[:16] for p in rebuilt.prompts]
            assert digests == output.details["prompt_sha256"]
            assert all(INSTRUCTIONS in p and "Example 1:" in p for p in rebuilt.prompts)
            if kind == "simulation":
                hidden = {**item.payload, "model_followup_answer": "yes"}
                flipped = {**item.payload, "model_followup_answer": "no"}
                item.payload = hidden
                first = prompt_item(
                    study.task_kind, study, item, examples, seed=PARAMETERS["seed"], shots=PARAMETERS["shots"]
                )
                item.payload = flipped
                second = prompt_item(
                    study.task_kind, study, item, examples, seed=PARAMETERS["seed"], shots=PARAMETERS["shots"]
                )
                assert first.prompts == second.prompts == rebuilt.prompts


@pytest.mark.django_db
def test_simulate_gives_one_participant_per_simulator_and_counts_what_it_cannot_parse(worker_settings):
    worker_settings.MODEL_REGISTRY = {
        **worker_settings.MODEL_REGISTRY,
        "tiny-b": worker_settings.MODEL_REGISTRY[TINY],
    }
    study = make_study("simulation")
    out = StringIO()
    call_command("simulate", study=study.slug, simulator=f"{TINY},tiny-b", stdout=out, stderr=StringIO())
    raters = Participant.objects.filter(source=Participant.Source.MODEL, definition__kind="simulator")
    assert sorted(r.definition["model"] for r in raters) == sorted([TINY, "tiny-b"])
    assert all(Response.objects.filter(participant=r, study=study).count() == 3 for r in raters)

    claim = make_study("claim")
    call_command("rate_llm", study=claim.slug, model=TINY, scoring="generate", stdout=out, stderr=StringIO())
    job = Job.objects.filter(kind="rate_llm", study=claim).get()
    result = job.result
    failed = ModelOutput.objects.filter(study=claim).exclude(error="")
    assert result["unparseable"] + result["invalid"] == failed.count() >= 1
    assert result["created"] + failed.count() == 3
    assert Response.objects.filter(study=claim, participant__source="model").count() == result["created"]
    assert all(output.raw.startswith("label: ") for output in failed)

    with pytest.raises(CommandError, match="simulation studies"):
        call_command("simulate", study=claim.slug, simulator=TINY, stdout=out)
    game = StudyFactory(kind="boundary", slug="llm-game")
    with pytest.raises(CommandError, match="cannot answer boundary items"):
        call_command("rate_llm", study=game.slug, model=TINY, stdout=out)
    assert Item.objects.filter(study=claim).count() == 4 and Job.objects.filter(study=game).count() == 0
