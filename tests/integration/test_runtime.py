"""The two runtimes: the web process starts without torch; production settings are checked."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=120
    )


def test_web_process_does_not_import_torch():
    code = (
        "import sys, django; django.setup();"
        "import roft_site.wsgi, roft_site.urls;"
        "from django.urls import get_resolver; get_resolver().url_patterns;"
        "import workers.tasks;"
        "from annotation.kinds import all_kinds; all_kinds();"
        "leaked = [m for m in ('torch', 'transformers') if m in sys.modules];"
        "print(leaked); sys.exit(1 if leaked else 0)"
    )
    result = run_python(code, DJANGO_SETTINGS_MODULE="roft_site.settings")
    assert result.returncode == 0, result.stdout + result.stderr


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
