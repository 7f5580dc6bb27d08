"""edit_and_generate and edit_model on the tiny model: items of every kind, refusals before any job
(the claim study's items and a rerun: tests/integration/test_edit_and_generate_claims.py)."""

from __future__ import annotations

import json
import random
from io import StringIO

import pytest
import torch
from django.core.management import CommandError, call_command

from annotation.models import Item, Job, Study
from tests.lm_fixtures import HPARAMS_DIR, RECORDS

pytestmark = pytest.mark.django_db


@pytest.fixture
def requests_file(tmp_path):
    path = tmp_path / "requests.jsonl"
    path.write_text("\n".join(json.dumps(record) for record in RECORDS[:2]))
    return path


def edit_and_generate(requests_file, **options):
    err = StringIO()
    defaults = {
        "model": "tiny-gpt2",
        "methods": "none,ike,rome",
        "study": "leme-claims",
        "max_new_tokens": 24,
    }
    call_command(
        "edit_and_generate",
        requests=str(requests_file),
        stdout=StringIO(),
        stderr=err,
        **{**defaults, **options},
    )
    return err.getvalue()


def test_a_new_method_adds_only_its_own_items(worker_settings, requests_file):
    edit_and_generate(requests_file, kind="claim", methods="none")
    before = set(Item.objects.values_list("external_id", flat=True))
    edit_and_generate(requests_file, methods="none,ft")
    added = set(Item.objects.values_list("external_id", flat=True)) - before
    assert added and all(":ft:" in external_id for external_id in added)
    assert Job.objects.order_by("pk").last().result["edits"] == 2  # ft on each request, none skipped


def test_a_likert_study_needs_its_kind_and_bad_requests_write_nothing(
    worker_settings, requests_file, tmp_path
):
    with pytest.raises(CommandError, match="give --kind"):
        edit_and_generate(requests_file, study="nowhere")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**RECORDS[0], "requested_rewrite": {"subject": "x"}}))
    with pytest.raises(CommandError, match=r"line 1: requested_rewrite\.prompt"):
        edit_and_generate(bad, kind="claim")
    assert not Study.objects.exists() and not Job.objects.exists()


def test_a_misspelled_key_in_the_hparams_dir_is_refused_before_any_job(
    worker_settings, requests_file, tmp_path
):
    values = json.loads((HPARAMS_DIR / "rome" / "tiny-gpt2.json").read_text())
    (tmp_path / "rome").mkdir()
    (tmp_path / "rome" / "tiny-gpt2.json").write_text(json.dumps({**values, "v_step": 5}))
    with pytest.raises(CommandError, match=r"--hparams-dir: .*Unknown rome hyperparameter 'v_step'"):
        edit_and_generate(requests_file, kind="claim", hparams_dir=str(tmp_path))
    assert not Study.objects.exists() and not Job.objects.exists()


def test_the_job_refuses_a_kind_other_than_the_studys(worker_settings, requests_file, make_claim_study):
    study = make_claim_study(slug="other")
    with pytest.raises(CommandError, match="is a 'claim' study, not 'likert'"):
        edit_and_generate(requests_file, study=study.slug, kind="likert")


def test_edit_model_saves_an_edited_model_that_loads_with_from_pretrained(worker_settings, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    request = tmp_path / "request.json"
    request.write_text(json.dumps(RECORDS[0]))
    output = tmp_path / "edited"
    out = StringIO()
    call_command(
        "edit_model", model="tiny-gpt2", method="rome", request=str(request), output=str(output), stdout=out
    )
    tokenizer = AutoTokenizer.from_pretrained(output, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(output, local_files_only=True)
    with torch.no_grad():
        logits = model(**tokenizer("Lake Tolvik is located in", return_tensors="pt")).logits[0, -1]
    assert tokenizer.decode([int(logits.argmax())]).strip() == "Rome"
    about = json.loads((output / "edit.json").read_text())
    assert about["method"] == "rome" and about["metrics"]["efficacy"] is True
    assert about["request"]["requested_rewrite"]["subject"] == "Lake Tolvik"
    with pytest.raises(CommandError, match="not an empty directory"):
        call_command("edit_model", model="tiny-gpt2", method="ft", request=str(request), output=str(output))


def test_edit_model_refuses_a_misspelled_hyperparameter_before_editing(worker_settings, tmp_path):
    request = tmp_path / "request.json"
    request.write_text(json.dumps(RECORDS[0]))
    values = json.loads((HPARAMS_DIR / "rome" / "tiny-gpt2.json").read_text())
    hparams = tmp_path / "rome.json"
    hparams.write_text(json.dumps({**values, "clamp_norm_factr": 1.0}))
    output = tmp_path / "edited"
    with pytest.raises(CommandError, match=r"--hparams: .*Unknown rome hyperparameter 'clamp_norm_factr'"):
        call_command(
            "edit_model",
            model="tiny-gpt2",
            method="rome",
            request=str(request),
            output=str(output),
            hparams=str(hparams),
        )
    assert not output.exists()


def test_likert_items_are_accepted_by_the_likert_kind(worker_settings, requests_file):
    edit_and_generate(requests_file, kind="likert", study="leme-likert", methods="none,rome")
    study = Study.objects.get(slug="leme-likert")
    items = {i.external_id: i for i in Item.objects.filter(study=study, provenance__source_id="tolvik")}
    assert set(items) == {
        "tolvik:tiny-gpt2:none:likert",
        "tolvik:tiny-gpt2:rome:likert",
        "tolvik:human:likert",
    }
    rome = items["tolvik:tiny-gpt2:rome:likert"]
    assert rome.payload["new_fact"] == "Lake Tolvik is located in Rome."
    assert rome.payload["related_entity"] == "Port Ilse" and rome.payload["related_passage"]
    kind = study.task_kind
    ratings = {q["id"]: 4 for q in study.config["questions"]}
    assert kind.validate_answer(rome, {"ratings": ratings}) == {"ratings": ratings}


def test_ranking_items_gather_every_system_and_are_accepted_by_the_ranking_kind(
    worker_settings, requests_file
):
    edit_and_generate(requests_file, kind="ranking", study="rome-ranking", methods="none,ike,rome")
    study = Study.objects.get(slug="rome-ranking")
    item = Item.objects.get(study=study, provenance__source_id="tolvik")
    systems = sorted(p["system"] for p in item.payload["passages"])
    assert systems == ["IKE", "ROME", "human", "tiny-gpt2"]
    kind = study.task_kind
    shown = kind.prepare_assignment(item, random.Random(1))["shown"]
    answer = {
        "shown": shown,
        "choices": {c: {"most": shown[0], "least": shown[1]} for c in ("consistency", "fluency")},
    }
    assert kind.import_answer(item, answer)[0]["choices"]["fluency"]["most"] == shown[0]


def test_a_ranking_page_short_of_systems_is_refused_before_any_edit(worker_settings, tmp_path):
    """Two methods and no human passage make 2 systems for a study that shows 3."""
    record = {key: value for key, value in RECORDS[1].items() if key != "human"}
    path = tmp_path / "short.jsonl"
    path.write_text(json.dumps(record))
    with pytest.raises(CommandError, match="The study shows 3 passages per page; this item has 2"):
        edit_and_generate(path, kind="ranking", study="short-ranking", methods="none,rome")
    job = Job.objects.get(kind="edit_and_generate")
    assert job.progress_done == 0 and "request" in job.error
    assert not Item.objects.exists()
