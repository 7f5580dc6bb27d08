"""Review finding 11 (adversarial review): job parameters that are paths on the workers are
confined to the configured folders (refused before anything is queued, with a 400 naming the
field), and a failed job shows researchers a short message: the traceback is for admins and the
logs only."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Job
from tests.conftest import claim_study_file
from tests.factories import researcher_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice_with_a_study(client, django_user_model):
    user = researcher_user("alice", password="pw-alice-1")
    client.force_login(user)
    study_file = claim_study_file(slug="alice-boundary")
    assert client.post("/api/v1/studies/", study_file, content_type="application/json").status_code == 201
    return user


def start(client, **parameters):
    body = {"kind": "continuations", "study": "alice-boundary", "parameters": parameters}
    return client.post("/api/v1/jobs/", body, content_type="application/json")


@pytest.mark.parametrize(
    ("parameters", "field"),
    [
        ({"corpus": "/etc/passwd", "model": "demo"}, "parameters.corpus"),
        ({"corpus": "/srv/corpora/../../etc/passwd", "model": "demo"}, "parameters.corpus"),
        ({"corpus": "corpora/news.jsonl", "model": "demo"}, "parameters.corpus"),
        ({"corpus": "/srv/corpora/news.jsonl", "model": "/home/bob/private-model"}, "parameters.model"),
        ({"corpus": "/srv/corpora/news.jsonl", "model": "../models/x"}, "parameters.model"),
        ({"corpus": "/srv/corpora/news.jsonl", "model": "/models/../etc"}, "parameters.model"),
    ],
)
def test_a_worker_path_outside_the_configured_folders_is_refused_before_queueing(
    client, alice_with_a_study, settings, parameters, field, django_capture_on_commit_callbacks
):
    settings.ROFT_CORPUS_ROOTS = ["/srv/corpora"]
    settings.ROFT_MODEL_ROOTS = ["/models"]
    with django_capture_on_commit_callbacks() as queued:
        answer = start(client, **parameters)
    assert answer.status_code == 400, answer.content
    assert "folders" in " ".join(answer.json()[field]), answer.json()
    assert not Job.objects.exists() and not queued


def test_paths_inside_the_folders_and_model_names_are_accepted(
    client, alice_with_a_study, settings, django_capture_on_commit_callbacks
):
    settings.ROFT_CORPUS_ROOTS = ["/srv/corpora"]
    settings.ROFT_MODEL_ROOTS = ["/models"]
    with django_capture_on_commit_callbacks() as queued:
        by_path = start(client, corpus="/srv/corpora/alice/news.jsonl", model="/models/shared/gpt2-xl")
        by_name = start(client, corpus="/srv/corpora/alice/news.jsonl", model="gpt2-xl")
    assert (by_path.status_code, by_name.status_code) == (201, 201), (by_path.content, by_name.content)
    assert Job.objects.count() == len(queued) == 2


def test_a_failed_job_shows_researchers_a_short_message_and_admins_the_traceback(
    client, alice_with_a_study, settings, tmp_path, django_user_model, django_capture_on_commit_callbacks
):
    settings.ROFT_CORPUS_ROOTS = [str(tmp_path)]
    missing = tmp_path / "alice" / "missing.jsonl"  # in alice's own folder
    with django_capture_on_commit_callbacks(execute=True):
        answer = start(client, corpus=str(missing), model="demo")
    assert answer.status_code == 201, answer.content
    job = Job.objects.get()
    assert job.status == "failed" and "no such file" in job.error

    shown = client.get(f"/api/v1/jobs/{job.pk}/").json()["error"]
    assert shown == job.error and "Traceback" not in shown and ".py" not in shown and "\n" not in shown
    page = client.get("/research/jobs/").content.decode()
    assert "no such file" in page and "Traceback" not in page and "study_passages.py" not in page

    assert "Traceback" in job.traceback and "study_passages.py" in job.traceback
    client.force_login(django_user_model.objects.create_superuser("root", "", "pw-root-1"))
    admin_page = client.get(f"/admin/annotation/job/{job.pk}/change/").content.decode()
    assert "study_passages.py" in admin_page


def test_relative_model_names_resolve_only_inside_the_model_folders(settings, tmp_path, monkeypatch):
    """N16: a relative name such as ``annotation`` loaded the worker's own folder of that name
    (relative to its working directory), and the error showed the checkout's absolute path;
    a missing folder answered differently, so names probed the worker's files."""
    from workers.lm.loading import load_lm
    from workers.lm.registry import ModelNotFound, resolve_model
    from workers.trained_raters.model import encoder_path

    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)  # the worker runs in its checkout: annotation/ and docs/ are there
    models = tmp_path / "models"
    (models / "team" / "tiny").mkdir(parents=True)
    settings.ROFT_MODEL_ROOTS = [str(models)]
    settings.MODEL_REGISTRY = {}

    assert resolve_model("team/tiny").source == str(models / "team" / "tiny")  # inside a root
    messages = []
    for name in ("annotation", "docs/examples", "nonexistent-dir-xyz"):
        assert resolve_model(name).source == name  # a hub id for the cache, not ./annotation
        with pytest.raises(ModelNotFound) as refused:
            load_lm(name)
        with pytest.raises(ModelNotFound) as refused_encoder:
            encoder_path(name)
        for message in (str(refused.value), str(refused_encoder.value)):
            assert str(root) not in message and "/work" not in message, message
        messages.append(str(refused.value).replace(name, "NAME"))
    assert len(set(messages)) == 1, messages  # an existing folder reads like a missing one


def test_a_hyperparameter_folder_is_a_path_inside_the_model_folders_never_a_name(
    client, alice_with_a_study, settings
):
    settings.ROFT_MODEL_ROOTS = ["/models"]
    settings.ROFT_CORPUS_ROOTS = ["/srv/corpora"]
    body = {
        "kind": "edit_and_generate",
        "study": "alice-boundary",
        "parameters": {
            "requests": "/srv/corpora/r.jsonl",
            "model": "gpt2",
            "hparams_dir": "tests/editing_hparams",
        },
    }
    answer = client.post("/api/v1/jobs/", body, content_type="application/json")
    assert answer.status_code == 400 and "parameters.hparams_dir" in answer.json(), answer.content
    assert not Job.objects.exists()


def test_a_failed_jobs_message_cuts_the_workers_absolute_paths():
    from workers.tasks.base import short_error

    error = OSError(
        "Can't load tokenizer from '/srv/worker/checkout/annotation' (see /root/.cache/hf/x.json)"
    )
    shown = short_error(error)
    assert "/srv/worker" not in shown and "/root" not in shown
    assert "…/annotation" in shown and "…/x.json" in shown
