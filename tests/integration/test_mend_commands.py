"""MEND through the commands: train_mend (a job), edit_model and edit_and_generate with an editor."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Item, Job, Study
from tests import tiny_mend
from tests.lm_fixtures import RECORDS

pytestmark = pytest.mark.django_db


@pytest.fixture
def mend_requests_file(tmp_path):
    """Six requests about the tiny model's landmarks (one held out), enough for a short run."""
    path = tmp_path / "mend-requests.jsonl"
    return tiny_mend.write_requests(path, tiny_mend.training_records()[:6])


def train(requests_file, output, **options) -> dict:
    out = StringIO()
    call_command(
        "train_mend",
        model="tiny-gpt2",
        data=str(requests_file),
        output=str(output),
        stdout=out,
        stderr=StringIO(),
        json=True,
        **{"steps": 4, "lr": 1e-4, "layers": "2,3", **options},
    )
    return json.loads(out.getvalue().strip().splitlines()[-1])


def test_train_mend_runs_a_job_that_saves_the_editor_and_its_definition(
    worker_settings, mend_requests_file, tmp_path
):
    result = train(mend_requests_file, tmp_path / "editor", seed=3)
    job = Job.objects.get(kind="train_mend")
    assert job.status == Job.Status.DONE and job.study is None and job.progress_total == 4
    assert (
        job.parameters["layers"] == [2, 3] and job.parameters["rank"] == 1920
    )  # the job's defaults fill the rest
    definition = json.loads((tmp_path / "editor" / "definition.json").read_text())
    assert (definition["model"], definition["layers"], definition["settings"]["seed"]) == (
        "tiny-gpt2",
        [2, 3],
        3,
    )
    assert definition["data"]["requests"] == 6 and len(definition["data"]["held_out"]) == 1
    assert definition["held_out"] == result["held_out"] and definition["held_out"]["requests"] == 1
    assert (tmp_path / "editor" / "networks.safetensors").is_file()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"layers": "2,x"}, r"--layers: a comma-separated list"),
        ({"steps": 0}, r"parameters\.steps: .*greater than or equal to 1"),
        ({"modules": "mlp_mid"}, r"parameters\.modules"),
        ({"held_out_share": 0.9}, r"parameters\.held_out_share"),
    ],
)
def test_train_mend_errors_name_the_option_and_create_nothing(
    worker_settings, mend_requests_file, tmp_path, options, message
):
    with pytest.raises(CommandError, match=message):
        train(mend_requests_file, tmp_path / "editor", **options)
    assert not Job.objects.exists() and not (tmp_path / "editor").exists()


def test_train_mend_refuses_bad_data_and_a_used_output_before_any_job(
    worker_settings, mend_requests_file, tmp_path
):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"case_id": 1, "requested_rewrite": {"prompt": "no slot", "subject": "x"}}\n')
    with pytest.raises(CommandError, match=r"requested_rewrite\.prompt"):
        train(bad, tmp_path / "editor")
    with pytest.raises(CommandError, match=r"data: .*no such file"):
        train(tmp_path / "missing.jsonl", tmp_path / "editor")
    used = tmp_path / "used"
    used.mkdir()
    (used / "something").write_text("")
    with pytest.raises(CommandError, match=r"output: .*not an empty directory"):
        train(mend_requests_file, used)
    assert not Job.objects.exists()


def test_a_layer_the_model_lacks_fails_the_job_naming_layers(worker_settings, mend_requests_file, tmp_path):
    with pytest.raises(CommandError, match=r"failed: layers: Layer 7 does not exist"):
        train(mend_requests_file, tmp_path / "editor", layers="2,7")
    assert not (tmp_path / "editor").exists()


def test_edit_model_with_a_mend_editor_saves_the_edit(worker_settings, tiny_mend_dir, tmp_path):
    request = tmp_path / "request.json"
    request.write_text(json.dumps(tiny_mend.reserved_records()[0]))
    output = tmp_path / "edited"
    call_command(
        "edit_model",
        model="tiny-gpt2",
        method="mend",
        request=str(request),
        output=str(output),
        hparams=str(tiny_mend_dir),
        stdout=StringIO(),
    )
    about = json.loads((output / "edit.json").read_text())
    assert (about["method"], about["system"]) == ("mend", "MEND")
    assert about["hparams"] == {
        "method": "mend",
        "version": 1,
        "file": tiny_mend_dir.name,
        "editor": str(tiny_mend_dir),
    }
    assert set(about["details"]["delta_norms"]) == {
        f"transformer.h.{layer}.mlp.{m}.weight" for layer in tiny_mend.LAYERS for m in ("c_fc", "c_proj")
    }


def test_edit_model_without_an_editor_says_to_train_one(worker_settings, tmp_path):
    request = tmp_path / "request.json"
    request.write_text(json.dumps(RECORDS[0]))
    with pytest.raises(CommandError, match=r"--hparams: .*run train_mend"):
        call_command(
            "edit_model", model="tiny-gpt2", method="mend", request=str(request), output=str(tmp_path / "out")
        )


def test_edit_and_generate_writes_mend_passages_from_an_editor_in_the_hparams_dir(
    worker_settings, tiny_mend_dir, tmp_path
):
    hparams = tmp_path / "hparams"
    (hparams / "mend").mkdir(parents=True)
    (hparams / "mend" / "tiny-editor").symlink_to(tiny_mend_dir)
    (hparams / "mend" / "tiny-gpt2.json").write_text('{"version": 1, "editor": "tiny-editor"}')
    requests = tmp_path / "requests.jsonl"
    requests.write_text(json.dumps(RECORDS[0]) + "\n")
    call_command(
        "edit_and_generate",
        requests=str(requests),
        model="tiny-gpt2",
        methods="none,mend",
        study="leme-mend",
        kind="likert",
        max_new_tokens=16,
        hparams_dir=str(hparams),
        stdout=StringIO(),
        stderr=StringIO(),
    )
    item = Item.objects.get(
        study=Study.objects.get(slug="leme-mend"), external_id="tolvik:tiny-gpt2:mend:likert"
    )
    provenance = item.provenance
    assert (provenance["system"], provenance["method"]) == ("MEND", "mend")
    assert provenance["edit"]["hparams"] == {"file": "tiny-gpt2.json", "version": 1}
    assert provenance["edit"]["details"]["layers"] == tiny_mend.LAYERS
