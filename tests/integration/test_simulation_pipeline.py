"""The counterfactual-simulatability chain on a tiny model trained in the prompts' layout:
explanations, follow-ups from two generators, the explaining model's answers, and the
simulation items built from them, through a real Celery worker on the gpu queue; the
plausibility study from the same explanations, by command."""

from __future__ import annotations

import json
import random
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from annotation.models import FollowUp, Item, Job, ModelExplanation, Participant, Response, Study
from annotation.services.authoring.studies import ensure_study
from annotation.services.jobs import start_job
from scoring.models import Report
from scoring.services import compute_study_reports
from tests.celery_worker import redis_worker_on
from tests.factories import AnsweredResponseFactory
from tests.helpers.flow import start, task_action
from tests.helpers.jobs import wait_for_done
from tests.lm_fixtures import SIM, SIM_SECOND
from workers.raters.llm import prompt_item
from workers.simulatability.parsing import block_of

QUESTIONS = [
    {"id": "crow-fly", "question": "Can a crow fly?", "answer": "yes"},
    {"id": "trout-climb", "question": "Can a trout climb trees?", "answer": "no"},
    {"id": "zorp-swim", "question": "Can a zorp swim?"},  # the tiny model states no answer about a zorp
    {"id": "koala-swim", "question": "Can a koala swim?"},
]
CHAIN = {
    "explainer": SIM,
    "modes": ["cot", "posthoc"],
    "generators": [SIM, SIM_SECOND],
    "n": 3,
    "seed": 7,
    "batch_size": 16,
    "max_new_tokens": 36,
    "followup_max_new_tokens": 20,
}


@pytest.fixture
def sim_settings(settings, tiny_sim_registry):
    settings.MODEL_REGISTRY = tiny_sim_registry
    return settings


@pytest.fixture
def questions_file(tmp_path):
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(json.dumps(q) for q in QUESTIONS))
    return str(path)


def _run(kind: str, study, parameters: dict) -> Job:
    return wait_for_done(start_job(kind=kind, parameters=parameters, study=study))


def _pages(study: Study) -> list[str]:
    """Every page of the study as one participant sees it (answering 'not helpful' to go on)."""
    Study.objects.filter(pk=study.pk).update(
        status="live", items_per_session=study.items.count(), annotations_per_item=1
    )
    client = Client()
    html = start(client, study.slug)
    pages = []
    while 'name="choice"' in html:
        pages.append(html)
        html = client.post(task_action(html), {"choice": "not_helpful"}, follow=True).content.decode()
    return pages


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_chain_builds_simulation_items_on_the_gpu_queue_and_a_rerun_adds_nothing(
    sim_settings, questions_file
):
    study = ensure_study(slug="sim-chain", kind="simulation")
    parameters = {"questions": questions_file, **CHAIN}
    with redis_worker_on(["gpu"]):
        job = _run("build_simulation_study", study, parameters)
        records = (ModelExplanation.objects.count(), FollowUp.objects.count())
        again = _run("build_simulation_study", study, parameters)
        simulated = _run("rate_llm", study, {"model": SIM_SECOND, "seed": 7})  # the simulate step

    explained = job.result["explain"]
    assert explained["explanations"] == ModelExplanation.objects.count() == 8
    unparseable = ModelExplanation.objects.filter(answer="")
    assert explained["unparseable"] == unparseable.count() >= 2  # the zorp, in both modes
    assert all(e.raw_text and e.problem for e in unparseable)  # kept raw, with the reason
    assert {e.question_id for e in unparseable} >= {"zorp-swim"}

    followups = FollowUp.objects.all()
    counts = job.result["counterfactuals"]
    assert counts["written"] == followups.count() == 3 * 2 * (8 - unparseable.count())
    assert sum(counts[s] for s in ("kept", "duplicate", "near_duplicate", "unparseable")) == counts["written"]
    assert set(followups.values_list("generator", flat=True)) == {SIM, SIM_SECOND}
    assert counts["duplicate"] + counts["near_duplicate"] > 0  # sampled from a tiny world: repeats happen
    assert job.result["answer_followups"]["followups"] == counts["kept"]

    items = list(Item.objects.filter(study=study))
    usable = followups.filter(status="kept", answer_status="parsed")
    assert job.result["added"] == len(items) == usable.count() > 0
    for item in items:
        provenance = item.provenance
        assert provenance["explainer"] == SIM and provenance["mode"] in ("cot", "posthoc")
        assert provenance["generator"] in (SIM, SIM_SECOND)
        assert provenance["system"] == f"{SIM}/{provenance['mode']}"
        assert provenance["prompts"] == {
            "explain": "explain-yes_no@1",
            "followups": "followups-yes_no@1",
            "answer": "explain-yes_no@1",
        }
        assert provenance["decoding"]["followups"]["top_p"] == 0.95
        assert provenance["decoding"]["explain"]["do_sample"] is False
        assert isinstance(provenance["seed"], int)
        assert item.payload["model_followup_answer"] in ("yes", "no")

    assert again.result["added"] == 0 and again.result["already_present"] == len(items)
    assert again.result["explain"]["written"] == again.result["counterfactuals"]["written"] == 0
    assert again.result["answer_followups"]["answered"] == 0
    assert (ModelExplanation.objects.count(), FollowUp.objects.count()) == records
    assert Item.objects.filter(study=study).count() == len(items)

    # The simulator answered every item from the page's text, as a model participant.
    assert simulated.result["created"] == len(items) and simulated.result["unparseable"] == 0
    simulator = Participant.objects.get(source="model", definition__kind="simulator")
    assert simulator.definition["model"] == SIM_SECOND
    assert Response.objects.filter(study=study, participant=simulator).count() == len(items)
    for item in items:
        prompt = prompt_item(study.task_kind, study, item, [], seed=7, shots=0).prompts[0]
        assert item.payload["followup_question"] in prompt and item.payload["model_explanation"] in prompt
        hidden = {
            **item.payload,
            "model_followup_answer": "no" if item.payload["model_followup_answer"] == "yes" else "yes",
        }
        item.payload = hidden
        assert prompt_item(study.task_kind, study, item, [], seed=7, shots=0).prompts[0] == prompt

    pages = _pages(study)
    assert len(pages) == len(items)
    answers = {block_of(f.answer_raw) for f in usable}
    for html in pages:
        assert "model_followup_answer" not in html and SIM not in html
        shown = [a for a in answers if a in html]
        # the model's own reply to a follow-up never shows, unless it reads word for word like the
        # starter's explanation (which is shown, and which the tiny model often repeats)
        assert all(any(a in e.explanation for e in ModelExplanation.objects.all()) for a in shown)

    # Once people answer too, the reports give the simulator's precision beside theirs.
    _reports_equal_a_computation_by_hand(study, simulator)


def _reports_equal_a_computation_by_hand(study: Study, simulator: Participant) -> None:
    """Two people answer the built items (seeded); the reports' precision per mode, for the
    people and for the simulator, equals the computation by hand on the stored answers."""
    items = list(Item.objects.filter(study=study).order_by("pk"))  # as stored, not as the test changed them
    rng = random.Random(11)
    people = {
        who: {item.pk: rng.choice(["yes", "no", "yes", "not_helpful"]) for item in items}
        for who in ("p1", "p2")
    }
    AnsweredResponseFactory.from_specs(
        study,
        [
            {"participant": who, "item": item.external_id, "answer": {"choice": choices[item.pk]}}
            for who, choices in people.items()
            for item in items
        ],
    )
    compute_study_reports(study)
    rows = Report.objects.filter(study=study, population="all", metric="simulation.precision", version=None)
    simulated = dict(Response.objects.filter(participant=simulator).values_list("item_id", "answer__choice"))
    for mode in sorted({item.provenance["mode"] for item in items}):
        for rater, judgements in (
            ("human", list(people.values())),
            (simulator.platform_worker_id, [simulated]),
        ):
            found = rows.get(group={"mode": mode, "rater": rater})
            expected = _pooled_precision(items, judgements, mode)
            assert (found.value, found.n) == pytest.approx(expected)


def _pooled_precision(items: list[Item], judgements: list[dict[int, str]], mode: str) -> tuple[float, int]:
    """Per explanation of ``mode``, the share of the committed judgements (not "not
    helpful") equal to the explaining model's own follow-up answer, every rater's pooled;
    the mean over the explanations that have one, and their number."""
    hits: dict[str, list[bool]] = {}
    for item in items:
        if item.provenance["mode"] != mode:
            continue
        for choices in judgements:
            choice = choices.get(item.pk)
            if choice not in (None, "not_helpful"):
                hits.setdefault(item.payload["explanation_id"], []).append(
                    choice == item.payload["model_followup_answer"]
                )
    return sum(sum(h) / len(h) for h in hits.values()) / len(hits), len(hits)


@pytest.mark.django_db
def test_the_plausibility_study_gets_one_item_per_question_with_gold(sim_settings, questions_file):
    def run() -> str:
        out = StringIO()
        call_command(
            "build_plausibility_study",
            questions=questions_file,
            explainer=SIM,
            study="sim-plausibility",
            max_new_tokens=36,
            stdout=out,
            stderr=StringIO(),
        )
        return out.getvalue()

    run()
    study = Study.objects.get(slug="sim-plausibility")
    parsed = ModelExplanation.objects.exclude(answer="")
    with_gold = {e.question_id for e in parsed if e.question.get("answer")}
    items = {item.provenance["question_id"]: item for item in study.items.all()}
    assert set(items) == with_gold and with_gold <= {"crow-fly", "trout-climb"} and with_gold
    item = items[sorted(with_gold)[0]]
    assert item.payload["answer"] in ("Yes", "No")
    assert {e["id"] for e in item.payload["explanations"]} == set(item.provenance["modes"])
    out = run()
    assert '"added": 0' in out and study.items.count() == len(items)


@pytest.mark.django_db
def test_the_steps_run_as_jobs_of_their_own_and_the_command_then_only_builds_items(
    sim_settings, tmp_path, django_capture_on_commit_callbacks
):
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(QUESTIONS[0]))
    steps = {"questions": str(path), "explainer": SIM, "modes": ["cot"], "max_new_tokens": 36}
    chain = {**steps, "generators": [SIM], "n": 2, "followup_max_new_tokens": 20}
    with django_capture_on_commit_callbacks(execute=True):
        jobs = [
            start_job(kind="explain", parameters=steps),
            start_job(kind="counterfactuals", parameters=chain),
            start_job(kind="answer_followups", parameters=steps),
        ]
    for job in jobs:
        job.refresh_from_db()
        assert job.status == "done", job.error
    explained, written, answered = (job.result for job in jobs)
    assert explained["written"] == 1 and written["written"] == 2
    assert answered["answered"] == written["kept"]

    out, err = StringIO(), StringIO()
    call_command(
        "build_simulation_study",
        questions=str(path),
        explainer=SIM,
        modes="cot",
        generators=SIM,
        n=2,
        study="sim-steps",
        max_new_tokens=36,
        followup_max_new_tokens=20,
        stdout=out,
        stderr=err,
    )
    result = Job.objects.get(kind="build_simulation_study").result
    assert result["explain"]["written"] == result["counterfactuals"]["written"] == 0
    assert result["answer_followups"]["answered"] == 0
    assert result["added"] == Item.objects.filter(study__slug="sim-steps").count()
    assert "build_simulation_study for sim-steps" in err.getvalue()  # the progress bar
