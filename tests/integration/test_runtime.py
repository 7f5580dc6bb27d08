"""The two runtimes: the web process starts without torch; production settings are checked."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=120
    )


# What a web process and a Celery worker import as they start.
START_UP = (
    "import sys, django; django.setup();"
    "import roft_site.wsgi, roft_site.urls;"
    "from django.urls import get_resolver; get_resolver().url_patterns;"
    "import workers.tasks;"
    "from annotation.kinds import all_kinds; all_kinds();"
)


# The top-level packages the start-up must leave unimported: the model stack (absent from a
# web-only install) and the scientific stack (imported on use).
MODEL_STACK = ("torch", "transformers")
SCIENCE = ("scipy", "sklearn", "pandas", "statsmodels")


@pytest.fixture(scope="module")
def started_up() -> subprocess.CompletedProcess:
    """One web process's start-up (``START_UP``), which prints the modules it imported of
    ``MODEL_STACK`` and ``SCIENCE``: the tests below read the same start-up, one
    interpreter (about 1.6 CPU seconds) instead of one each."""
    watched = MODEL_STACK + SCIENCE
    code = START_UP + (
        f"watched = {watched!r};"
        "print(json.dumps(sorted(m for m in sys.modules if m.partition('.')[0] in watched)))"
    )
    return run_python("import json;" + code, DJANGO_SETTINGS_MODULE="roft_site.settings")


def imported(result: subprocess.CompletedProcess, packages: tuple[str, ...]) -> list[str]:
    """The modules of ``packages`` the start-up imported (it must have run to its end)."""
    assert result.returncode == 0, result.stdout + result.stderr
    modules = json.loads(result.stdout.strip().splitlines()[-1])
    return [m for m in modules if m.partition(".")[0] in packages]


def test_web_process_does_not_import_torch(started_up):
    assert imported(started_up, MODEL_STACK) == []


def test_start_up_leaves_scipy_to_the_functions_that_use_it(started_up):
    """stats/ imports scipy on use (stats/__init__.py): about a CPU second per process."""
    assert imported(started_up, SCIENCE) == []


def test_check_deploy_is_clean_with_a_production_environment():
    env = {
        "SECRET_KEY": "a-long-production-secret-" + "x" * 40,
        "DEBUG": "0",
        "ALLOWED_HOSTS": "eval.example.org",
        "DATABASE_URL": os.environ["DATABASE_URL"],
        "SECURE_SSL_REDIRECT": "",
        "SESSION_COOKIE_SECURE": "",
        "CSRF_COOKIE_SECURE": "",
        "STATIC_MANIFEST": "1",
    }
    clean_env = {k: v for k, v in os.environ.items() if k not in env and k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    clean_env.update({k: v for k, v in env.items() if v})
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=clean_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_missing_secret_key_refuses_to_start():
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_bad_setting_value_is_reported_by_name():
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**os.environ, "ASSIGNMENT_TIMEOUT_MINUTES": "soon"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0 and "ASSIGNMENT_TIMEOUT_MINUTES" in result.stderr


def test_manage_py_finds_the_embedded_runtimes_key_in_a_new_shell(tmp_path):
    """After `make run`, `python manage.py …` needs nothing exported (usability defect 9)."""
    (tmp_path / "secret_key").write_text("generated-by-run-demo-" + "k" * 40 + "\n")
    unset = ("SECRET_KEY", "DATABASE_URL", "DJANGO_SETTINGS_MODULE")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env["VAR_DIR"] = str(tmp_path)
    code = "import django; django.setup(); from django.conf import settings; print(settings.SECRET_KEY)"
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os; os.environ['DJANGO_SETTINGS_MODULE']='roft_site.settings';" + code,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().startswith("generated-by-run-demo-")
    # With a real database configured, the file is never a fallback.
    result = run_python(
        code, VAR_DIR=str(tmp_path), SECRET_KEY="", DJANGO_SETTINGS_MODULE="roft_site.settings"
    )
    assert result.returncode != 0 and "SECRET_KEY" in result.stderr


def test_make_run_takes_a_port_and_says_how_to_reset_the_admin_password():
    script = (ROOT / "bin" / "run-demo").read_text()
    assert 'PORT="${PORT:-8000}"' in script and 'runserver "127.0.0.1:$PORT"' in script
    assert "manage.py changepassword admin" in script
    assert "PORT=" in (ROOT / "Makefile").read_text()


def test_manage_py_runs_from_a_new_shell_with_the_python_the_venv_was_made_from(tmp_path):
    """Usability defect 3: after `make run`, a new shell (no venv activated, nothing exported)
    runs `python3 manage.py check` with the interpreter the venv links to: the same file as
    `.venv/bin/python`, yet without the venv's packages. manage.py must still re-run itself
    with the venv."""
    venv = Path(sys.prefix)
    base_python = Path(sys._base_executable).resolve()
    assert venv != Path(sys.base_prefix), "the suite runs inside a virtualenv"
    assert (venv / "bin" / "python").resolve() == base_python  # the case that used to fail
    # A checkout whose .venv is this suite's venv: manage.py and the settings package copied
    # (they locate .venv and var/ next to themselves), everything else linked; var/secret_key
    # as bin/run-demo writes it.
    project = tmp_path / "project"
    project.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in {"manage.py", "roft_site", ".venv", "var", ".git"}:
            (project / entry.name).symlink_to(entry)
    (project / "manage.py").write_text((ROOT / "manage.py").read_text())
    shutil.copytree(ROOT / "roft_site", project / "roft_site", ignore=shutil.ignore_patterns("__pycache__"))
    (project / ".venv").symlink_to(venv)
    (project / "var").mkdir()
    (project / "var" / "secret_key").write_text("generated-by-run-demo-" + "k" * 40 + "\n")
    # The PATH's python3 is the base interpreter: a directory holding only it.
    path_dir = tmp_path / "bin"
    path_dir.mkdir()
    (path_dir / "python3").symlink_to(base_python)
    env = {"PATH": f"{path_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    no_django = subprocess.run(
        ["python3", "-c", "import django"], env=env, capture_output=True, text=True, timeout=60
    )
    assert no_django.returncode != 0, "the base interpreter must not have Django"
    result = subprocess.run(
        ["python3", "manage.py", "check"], cwd=project, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
