"""Review finding N5 (adversarial review 2): the files under the worker folders belong to the
researcher whose folder holds them. Bob built his study's items from alice's question file, ran
alice's trained rater on his study and trained a rater into alice's folder, because the path
check knew the folders (``ROFT_*_ROOTS``) but no owner inside them.

Now a researcher's job reads only ``<root>/<username>/`` and ``<root>/shared/`` and writes only
into its own folder; anything else is a 400 naming the field that reads the same whether the
other file exists or not (the disk is never looked at). Admins keep full access, and so does
the operator's command when it names no researcher."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from rest_framework import serializers

from annotation.models import Job
from annotation.services.authoring.studies import load_study_file
from annotation.services.jobs import JobParameters, register_job_kind
from tests.conftest import claim_study_file
from tests.factories import researcher_user
from tests.helpers.module_data import fetched_by_key, rows_for_the_module
from workers.lm.registry import in_model_roots, resolve_model
from workers.tasks.base import job_task

pytestmark = pytest.mark.django_db

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


@dataclass(frozen=True, kw_only=True)
class ModelParameters(JobParameters):
    model: str

    class Serializer(serializers.Serializer):
        model = serializers.CharField()


register_job_kind(
    "test-resolve-model",
    task="tests.resolve_model_task",
    parameters=ModelParameters,
    worker_paths={"model": "model"},
)


@job_task("tests.resolve_model_task")
def resolve_model_task(job, parameters: ModelParameters, progress):
    """Where a worker finds the job's relative model name (no model is loaded)."""
    name = parameters.model
    return {"inside": in_model_roots(name), "source": resolve_model(name).source}


@pytest.fixture
def roots(settings, tmp_path):
    """Two roots laid out per researcher, with alice's real files in them."""
    corpora, models = tmp_path / "corpora", tmp_path / "models"
    questions = (EXAMPLES / "simulation-questions.jsonl").read_text()
    for folder in ("alice", "bob", "shared"):
        (corpora / folder).mkdir(parents=True)
        (models / folder).mkdir(parents=True)
    (corpora / "alice" / "secret-questions.jsonl").write_text(questions)
    (corpora / "shared" / "questions.jsonl").write_text(questions)
    (models / "alice" / "label-20261125T171242Z-977f5c").mkdir()
    (models / "alice" / "tuned").mkdir()
    settings.ROFT_CORPUS_ROOTS = [str(corpora)]
    settings.ROFT_MODEL_ROOTS = [str(models)]
    settings.MODEL_REGISTRY = {"tiny-sim": {"path": str(models / "registry" / "tiny-sim")}}
    return {"corpora": corpora, "models": models}


@pytest.fixture(scope="module")
def module_researchers(django_db_setup, django_db_blocker) -> Iterator[dict[str, int]]:
    """Alice and bob, each with a claim study and a simulation study, and an admin, written
    once for the module (tests/helpers/module_data.py): each test's own transaction rolls
    back the jobs it makes. Their primary keys by name."""
    with rows_for_the_module(django_db_blocker):
        made = {name: researcher_user(name, password=f"pw-{name}-1") for name in ("alice", "bob")}
        made["admin"] = get_user_model().objects.create_superuser("admin", "", "pw-admin-1")
        simulation = json.loads((EXAMPLES / "simulation.json").read_text())
        simulation.pop("qualification")  # its exam is beside the point here
        for name in ("alice", "bob"):
            load_study_file(claim_study_file(slug=f"{name[0]}-claims", items=4), owner=made[name])
            load_study_file(copy.deepcopy(simulation) | {"slug": f"{name[0]}-sim"}, owner=made[name])
        yield {name: user.pk for name, user in made.items()}


@pytest.fixture
def two_researchers_with_studies(module_researchers, django_user_model):
    """The module's users by name, fetched afresh for the test."""
    return fetched_by_key(django_user_model, module_researchers)


@pytest.fixture
def start(client, two_researchers_with_studies, django_capture_on_commit_callbacks):
    """POST /api/v1/jobs/ as a user; returns the answer and whether anything was queued."""

    def post(username: str, kind: str, study: str | None, **parameters):
        client.force_login(two_researchers_with_studies[username])
        body = {"kind": kind, "study": study, "parameters": parameters}
        with django_capture_on_commit_callbacks() as queued:
            answer = client.post("/api/v1/jobs/", body, content_type="application/json")
        assert (answer.status_code == 201) == bool(queued), answer.content
        return answer

    return post


def build(start, username: str, study: str, questions: str):
    return start(
        username,
        "build_simulation_study",
        study,
        questions=questions,
        explainer="tiny-sim",
        generators=["tiny-sim"],
    )


def test_bob_cannot_build_his_study_from_alices_question_file_and_cannot_tell_it_exists(start, roots):
    existing = build(start, "bob", "b-sim", str(roots["corpora"] / "alice" / "secret-questions.jsonl"))
    missing = build(start, "bob", "b-sim", str(roots["corpora"] / "alice" / "nope.jsonl"))
    assert existing.status_code == missing.status_code == 400
    assert existing.json() == missing.json()  # the same answer for a real file and a missing one
    assert list(existing.json()) == ["parameters.questions"], existing.json()
    message = existing.json()["parameters.questions"][0]
    assert f"{roots['corpora']}/bob/" in message and "alice" not in message
    assert not Job.objects.exists()


def test_alice_builds_from_her_own_file_and_anyone_from_the_shared_folder(start, roots):
    assert (
        build(start, "alice", "a-sim", str(roots["corpora"] / "alice" / "secret-questions.jsonl")).status_code
        == 201
    )
    assert (
        build(start, "bob", "b-sim", str(roots["corpora"] / "shared" / "questions.jsonl")).status_code == 201
    )
    assert build(start, "bob", "b-sim", str(roots["corpora"] / "bob" / "q.jsonl")).status_code == 201
    assert Job.objects.filter(kind="build_simulation_study").count() == 3


def test_bob_cannot_rate_with_alices_trained_rater_and_alice_can(start, roots):
    rater = roots["models"] / "alice" / "label-20261125T171242Z-977f5c"
    existing = start("bob", "rate", "b-claims", rater=str(rater))
    missing = start("bob", "rate", "b-claims", rater=str(roots["models"] / "alice" / "label-nope"))
    assert existing.status_code == missing.status_code == 400
    assert existing.json() == missing.json() and list(existing.json()) == ["parameters.rater"]
    assert start("alice", "rate", "a-claims", rater=str(rater)).status_code == 201
    assert list(Job.objects.values_list("created_by__username", flat=True)) == ["alice"]


@pytest.mark.parametrize("folder", ["alice", "shared", ""])
def test_bob_trains_raters_only_into_his_own_folder(start, roots, folder):
    """The shared folder is read only for researchers, and the root itself is nobody's."""
    refused = start("bob", "train_rater", "b-claims", output=str(roots["models"] / folder).rstrip("/"))
    assert refused.status_code == 400 and list(refused.json()) == ["parameters.output"], refused.json()
    assert "your own folder" in refused.json()["parameters.output"][0]
    assert (
        start("bob", "train_rater", "b-claims", output=str(roots["models"] / "bob" / "raters")).status_code
        == 201
    )


@pytest.mark.parametrize(
    ("username", "name", "found"),
    [
        ("bob", "alice/tuned", None),  # alice's folder: not looked at in bob's job
        ("bob", "shared/tuned", "shared/tuned"),
        ("bob", "bob/tuned", "bob/tuned"),
        ("alice", "alice/tuned", "alice/tuned"),
        ("admin", "alice/tuned", "alice/tuned"),
    ],
)
def test_a_relative_model_name_resolves_only_in_the_folders_the_jobs_owner_may_read(
    start, roots, username, name, found, django_capture_on_commit_callbacks
):
    """The worker looks a relative name up inside the model roots: in bob's job, ``alice/tuned``
    is not alice's folder (it is a hub id for the local cache, which fails like any missing name)."""
    for folder in ("alice", "bob", "shared"):
        (roots["models"] / folder / "tuned").mkdir(exist_ok=True)
    with django_capture_on_commit_callbacks(execute=True):
        answer = start(username, "test-resolve-model", None, model=name)
    assert answer.status_code == 201, answer.content
    job = Job.objects.get(pk=answer.json()["id"])
    assert job.status == "done", job.error
    expected = None if found is None else str(roots["models"] / found)
    assert job.result == {"inside": expected, "source": expected or name}


def test_an_admin_may_name_any_researchers_files(start, roots):
    questions = str(roots["corpora"] / "alice" / "secret-questions.jsonl")
    assert build(start, "admin", "b-sim", questions).status_code == 201
    rater = str(roots["models"] / "alice" / "label-20261125T171242Z-977f5c")
    assert start("admin", "rate", "b-claims", rater=rater).status_code == 201
    assert start("admin", "train_rater", "b-claims", output=str(roots["models"] / "alice")).status_code == 201
    # still only inside the roots
    assert start("admin", "rate", "b-claims", rater="/etc/rater").status_code == 400


def test_a_command_naming_a_researcher_follows_their_rule_and_the_operators_does_not(
    roots, two_researchers_with_studies, django_capture_on_commit_callbacks
):
    into_alices = str(roots["models"] / "alice")
    with pytest.raises(CommandError, match=r"parameters\.output") as refused:
        call_command(
            "train_rater", "--study", "b-claims", "--output", into_alices, "--owner", "bob", "--queue"
        )
    assert "your own folder" in str(refused.value)
    assert not Job.objects.exists()
    with django_capture_on_commit_callbacks() as queued:
        call_command("train_rater", "--study", "b-claims", "--output", into_alices, "--queue")
    assert len(queued) == Job.objects.count() == 1


# Adversarial review 3, T5: the check was on the path's text alone, so a symbolic link inside
# bob's own folder reached alice's files. Now the resolved path must be bob's too, at creation
# and again in the worker just before the job runs.


@dataclass(frozen=True, kw_only=True)
class QuestionsParameters(JobParameters):
    questions: str

    class Serializer(serializers.Serializer):
        questions = serializers.CharField()


register_job_kind(
    "test-read-questions",
    task="tests.read_questions_task",
    parameters=QuestionsParameters,
    worker_paths={"questions": "corpus"},
)


@job_task("tests.read_questions_task")
def read_questions_task(job, parameters: QuestionsParameters, progress):
    """Reads the named file, as a worker would: what it read is the job's result."""
    return {"first_line": Path(parameters.questions).read_text().splitlines()[0]}


def test_a_link_in_bobs_folder_to_alices_is_refused_as_her_folder_is(start, roots):
    (roots["corpora"] / "bob" / "link-to-alice").symlink_to(roots["corpora"] / "alice")
    through_link = str(roots["corpora"] / "bob" / "link-to-alice" / "secret-questions.jsonl")
    refused = build(start, "bob", "b-sim", through_link)
    assert refused.status_code == 400, refused.content
    assert "Must be inside your own folder" in refused.json()["parameters.questions"][0]
    (roots["corpora"] / "bob" / "to-etc").symlink_to("/etc")
    outside = build(start, "bob", "b-sim", str(roots["corpora"] / "bob" / "to-etc" / "passwd"))
    assert outside.status_code == 400 and list(outside.json()) == ["parameters.questions"]
    assert not Job.objects.exists()


def test_an_output_link_into_alices_folder_is_refused(start, roots):
    (roots["models"] / "bob" / "out-link").symlink_to(roots["models"] / "alice")
    for output in ("out-link", "out-link/raters"):  # the link itself, and a folder not made yet under it
        refused = start("bob", "train_rater", "b-claims", output=str(roots["models"] / "bob" / output))
        assert refused.status_code == 400, refused.content
        assert "Must be a folder inside your own folder" in refused.json()["parameters.output"][0]
    (roots["models"] / "bob" / "mine").mkdir()
    (roots["models"] / "bob" / "own-link").symlink_to(roots["models"] / "bob" / "mine")
    own = start("bob", "train_rater", "b-claims", output=str(roots["models"] / "bob" / "own-link"))
    assert own.status_code == 201, own.content  # a link that stays inside his folder is his


def test_a_link_repointed_after_the_job_was_accepted_is_refused_by_the_worker(
    start, roots, django_capture_on_commit_callbacks
):
    """The worker checks the path again on its own disk right before reading (time of check,
    time of use): bob's link pointed at his own file when he started the job."""
    (roots["corpora"] / "bob" / "mine.jsonl").write_text("bob's line\n")
    link = roots["corpora"] / "bob" / "questions.jsonl"
    link.symlink_to(roots["corpora"] / "bob" / "mine.jsonl")
    with django_capture_on_commit_callbacks() as queued:
        answer = start("bob", "test-read-questions", None, questions=str(link))
    assert answer.status_code == 201, answer.content
    link.unlink()
    link.symlink_to(roots["corpora"] / "alice" / "secret-questions.jsonl")
    for callback in queued:
        callback()
    job = Job.objects.get(pk=answer.json()["id"])
    assert job.status == "failed" and "Must be inside your own folder" in job.error, job.error
    assert not job.result  # nothing of alice's file came back
