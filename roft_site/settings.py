"""Settings, read from environment variables only.

Every knob is an environment variable read through the small typed helpers below, which
raise ``ImproperlyConfigured`` on a value they cannot parse rather than guessing. Without
any variables the site runs in its embedded form (SQLite file, Celery tasks executed
in-process); ``DATABASE_URL`` and ``CELERY_BROKER_URL``/``REDIS_URL`` switch to the real
services. There is no default secret key: ``make run`` generates one for the demo.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None) -> str | None:
    """A string variable; ``default`` when unset."""
    return os.environ.get(name, default)


def env_required(name: str) -> str:
    """A variable without which the site must not start."""
    value = os.environ.get(name, "")
    if not value:
        raise ImproperlyConfigured(f"Set the environment variable {name}.")
    return value


def env_bool(name: str, default: bool) -> bool:
    """A yes/no variable: 1/0, true/false, yes/no, on/off."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1 or 0).")


def env_int(name: str, default: int, minimum: int | None = None) -> int:
    """A whole-number variable, optionally bounded below."""
    return _env_number(name, default, minimum, int, "an integer")


def env_float(name: str, default: float, minimum: float | None = None) -> float:
    """A finite number variable, optionally bounded below."""
    value = _env_number(name, default, minimum, float, "a number")
    if not math.isfinite(value):
        raise ImproperlyConfigured(f"{name}={value!r} is not a finite number.")
    return value


def _env_number(name: str, default, minimum, convert, what: str):
    """The variable through ``convert`` (its ValueError: "is not ``what``"), bounded below."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = convert(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}={raw!r} is not {what}.") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}.")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    """A comma-separated list variable."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [part.strip() for part in raw.split(",") if part.strip()]


def env_json(name: str, default: object) -> object:
    """A JSON variable (used for structured settings such as the model registry)."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ImproperlyConfigured(f"{name} is not valid JSON: {exc}") from exc


# --- core -------------------------------------------------------------------------------

VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var")))


def embedded_secret_key(var_dir: Path) -> str:
    """``SECRET_KEY``, or for the embedded runtime only (no ``DATABASE_URL``: the SQLite demo
    of ``make run``) the key ``bin/run-demo`` generated into ``var/secret_key``, so that
    ``python manage.py …`` works in a new shell. Anywhere else the variable is required."""
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    generated = var_dir / "secret_key"
    if "DATABASE_URL" not in os.environ and generated.is_file():
        return generated.read_text().strip()
    return env_required("SECRET_KEY")


SECRET_KEY = embedded_secret_key(VAR_DIR)
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "annotation",
    "scoring",
    "workers",
]

MIDDLEWARE = [
    "annotation.middleware.chunked_bodies",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "annotation.middleware.refuse_unstorable_text",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "annotation.middleware.SiteLanguage",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "annotation.middleware.crowd_framing",
    "annotation.middleware.security_policy",
    "annotation.middleware.rate_limits",
]

ROOT_URLCONF = "roft_site.urls"
WSGI_APPLICATION = "roft_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "annotation.context_processors.htmx_swap",
            ],
        },
    },
]

# --- database ---------------------------------------------------------------------------

_default_sqlite = f"sqlite:///{VAR_DIR / 'db.sqlite3'}"
# Persistent connections (checked before reuse): opening a PostgreSQL connection per
# request cost about a sixth of every participant request under load. Kept ten minutes: a
# new connection's server process reads the catalogs again (some 1,500 rows) and plans
# every prepared statement again, which once a minute per worker was most of the rows
# PostgreSQL read outside the participants' own in bench/load.py's phases.
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", _default_sqlite),
        conn_max_age=env_int("DB_CONN_MAX_AGE", 600, minimum=0),
        conn_health_checks=env_bool("DB_CONN_HEALTH_CHECKS", True),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    from django.db.backends.postgresql.psycopg_any import is_psycopg3

    if not is_psycopg3:  # psycopg2 would plan every statement of every request anew
        raise ImproperlyConfigured("PostgreSQL needs psycopg 3: pip install -r requirements-web.txt")
    # psycopg 3 binds parameters on the server and prepares a statement once it has run it
    # this many times on a connection: the hot path is planned once per connection
    # (annotation/services/db/sql_rows.py; needs session pooling, docs/deploy.md).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        server_side_binding=True, prepare_threshold=env_int("DB_PREPARE_THRESHOLD", 1, minimum=0)
    )
    # Django's backend, but an integer its column cannot hold raises instead of reaching it
    # cut to its low bits (server-side binding sends Int4/Int8): roft_site/postgresql/base.py.
    DATABASES["default"]["ENGINE"] = "roft_site.postgresql"
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE transactions take SQLite's write lock up front, which is what makes the
    # assignment service's read-then-write safe on the embedded database.
    DATABASES["default"].setdefault("OPTIONS", {})["transaction_mode"] = "IMMEDIATE"
    DATABASES["default"]["OPTIONS"]["timeout"] = 20
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- cache and Celery -------------------------------------------------------------------

REDIS_URL = env_str("REDIS_URL", "")
if REDIS_URL:
    # Django's Redis cache, with one Redis client per pool instead of one per call, that
    # degrades to "no cache" while Redis is down.
    # A short connect and read timeout: when Redis does not answer, requests go on without it
    # (roft_site/redis_cache.py) instead of waiting.
    CACHES = {
        "default": {
            "BACKEND": "roft_site.redis_cache.SharedClientRedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 2},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "") or REDIS_URL or "memory://"
# Without a broker the tasks run in-process: the embedded runtime has no worker.
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", CELERY_BROKER_URL == "memory://")
CELERY_TASK_EAGER_PROPAGATES = True
# In-process tasks run in a background thread, so that a page starting one (Recompute, an
# export) answers at once; the embedded runtime's default. Off: they run inside the request.
JOBS_IN_BACKGROUND_THREAD = env_bool("JOBS_IN_BACKGROUND_THREAD", CELERY_BROKER_URL == "memory://")
# Seconds Redis waits for a delivered, unacknowledged message before giving it to another
# worker (a worker killed outright). Jobs do not wait for it: the sweeper requeues a job whose
# heartbeat stopped. Keep it above the longest job, so a healthy one is not delivered twice.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT_S", 7 * 3600, minimum=60)
}
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 3600, minimum=1)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 3900, minimum=1)

# --- auth, sessions, security -----------------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# --- mail (password resets) -----------------------------------------------------------------
# Mail is configured when EMAIL_HOST is set (SMTP) or EMAIL_BACKEND names a backend; without
# either, the password-reset page says at once that no mail can be sent and what to do instead.
EMAIL_HOST = env_str("EMAIL_HOST", "") or ""
EMAIL_PORT = env_int("EMAIL_PORT", 587, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "") or ""
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "") or ""
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10, minimum=1)
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "") or "django.core.mail.backends.smtp.EmailBackend"
EMAIL_CONFIGURED = bool(EMAIL_HOST or env_str("EMAIL_BACKEND"))
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "") or "webmaster@localhost"
if EMAIL_USE_SSL:
    EMAIL_USE_TLS = False  # the two are exclusive (Django refuses both): SSL on connect wins

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"
# Sessions are read from Redis when it is configured (written through to the database, so
# a Redis restart loses none); without Redis each process would have its own cache.
SESSION_ENGINE = (
    "django.contrib.sessions.backends.cached_db" if REDIS_URL else "django.contrib.sessions.backends.db"
)
SESSION_COOKIE_AGE = env_int("SESSION_COOKIE_AGE", 60 * 60 * 24 * 30, minimum=60)

_secure_default = not DEBUG
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", _secure_default)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", _secure_default)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", _secure_default)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", _secure_default)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", _secure_default)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
if env_bool("TRUST_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# bench/load.py's anchor views (a hello-world and a minimal locked write); off everywhere else.
BENCH_ANCHORS = env_bool("BENCH_ANCHORS", False)
SILENCED_SYSTEM_CHECKS = env_list("SILENCED_SYSTEM_CHECKS", [])

# --- i18n, static -----------------------------------------------------------------------

# Participant pages speak a study's language (its `language`, annotation/languages.py); the
# game's own pages, the home page and logins the browser's (Accept-Language), else English.
# Research, admin and API pages stay in English. A new language is a line here and its
# catalogue under locale/ (docs/development.md, "Translations").
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("es", "Español")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
# Hashed, compressed static files need `collectstatic` (the Docker image runs it).
STATIC_MANIFEST = env_bool("STATIC_MANIFEST", not DEBUG)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if STATIC_MANIFEST
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = not STATIC_MANIFEST
# Static files looked up when asked for instead of listed when the app starts: for the test
# suite, whose every test client starts the app again (listing 190 files through the finders
# cost 11 ms of CPU each time). A deployment lists them once per process.
WHITENOISE_AUTOREFRESH = env_bool("STATIC_AUTOREFRESH", False)
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))

# --- REST framework ---------------------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: an anonymous API call is answered 401 with a WWW-Authenticate header.
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "annotation.api.renderers.ResearcherBrowsableAPIRenderer",
    ],
    "DEFAULT_PAGINATION_CLASS": "annotation.api.pagination.PagePagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "annotation.api.errors.api_exception_handler",
    "NUM_PROXIES": env_int("NUM_PROXIES", 0, minimum=0),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Human-evaluation platform API",
    "DESCRIPTION": "Studies, items, participants, responses, reports, jobs and exports for researchers.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    # The docs pages load Swagger UI and Redoc from our own static files, never a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # What the URL converters accept, so a schema-valid path value is one that routes.
    "PATH_CONVERTER_OVERRIDES": {
        "slug": {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"},
        "int": {"type": "integer", "minimum": 0},
    },
    "ENUM_NAME_OVERRIDES": {
        "StudyStatusEnum": "annotation.models.study.Study.Status",
        "JobStatusEnum": "annotation.models.job.Job.Status",
    },
}

# --- the platform's own knobs -----------------------------------------------------------

# Requests per client address and period (``N/s``, ``N/min``, ``N/hour``): login form posts,
# API token requests, participant entries (annotation/services/web/ratelimit.py). Behind a proxy,
# NUM_PROXIES says how many put the client's address in X-Forwarded-For (0: use the peer's).
RATE_LIMIT_LOGIN = env_str("RATE_LIMIT_LOGIN", "10/min")
RATE_LIMIT_TOKEN = env_str("RATE_LIMIT_TOKEN", "10/min")
RATE_LIMIT_ENTRY = env_str("RATE_LIMIT_ENTRY", "60/min")
# A platform sends every event of a busy study from a few addresses: a high bound, against floods.
RATE_LIMIT_HOOK = env_str("RATE_LIMIT_HOOK", "600/min")
NUM_PROXIES = env_int("NUM_PROXIES", 0, minimum=0)

# Minutes an unanswered assignment is held for a participant before its slot is released.
ASSIGNMENT_TIMEOUT_MINUTES = env_int("ASSIGNMENT_TIMEOUT_MINUTES", 30, minimum=1)
# Minutes a participant who has answered nothing in a study holds their first page, whatever
# their source (a made-up crowd id is as cheap as a new browser): throwaway sessions cannot
# make a study look full for the full timeout. ANONYMOUS_FIRST_PAGE_MINUTES is its old name.
FIRST_PAGE_MINUTES = env_int(
    "FIRST_PAGE_MINUTES", env_int("ANONYMOUS_FIRST_PAGE_MINUTES", 5, minimum=1), minimum=1
)
# Seconds between runs of the periodic release of expired assignments (celery beat).
RELEASE_EXPIRED_EVERY_SECONDS = env_int("RELEASE_EXPIRED_EVERY_SECONDS", 60, minimum=1)
# Seconds between runs of the studies' retention rule (celery beat; docs/privacy.md).
RETENTION_EVERY_SECONDS = env_int("RETENTION_EVERY_SECONDS", 3600, minimum=60)
# Seconds between checks for live studies whose reports are out of date (celery beat).
REPORTS_REFRESH_SECONDS = env_int("REPORTS_REFRESH_SECONDS", 300, minimum=10)
# How far (in alpha) a machine rater's agreement with the humans may stay below the humans'
# agreement among themselves and still count as calibrated on the dashboard (docs/statistics.md).
RATER_CALIBRATION_MARGIN = env_float("RATER_CALIBRATION_MARGIN", 0.1, minimum=0.0)
# Authenticity signals (docs/authenticity.md): an answer's text field shows a strong sign of
# not being typed on the page when, in a field of at least AUTHENTICITY_MIN_CHARS characters,
# pasted characters make up AUTHENTICITY_PASTE_SHARE of its text or more, or keystrokes number
# fewer than AUTHENTICITY_KEYSTROKE_RATIO per character, or text was pasted (at least
# AUTHENTICITY_MIN_CHARS characters) after the page had been hidden for
# AUTHENTICITY_HIDDEN_SECONDS in all. Applied when an answer is stored.
AUTHENTICITY_MIN_CHARS = env_int("AUTHENTICITY_MIN_CHARS", 20, minimum=1)
AUTHENTICITY_PASTE_SHARE = env_float("AUTHENTICITY_PASTE_SHARE", 0.5, minimum=0.01)
AUTHENTICITY_KEYSTROKE_RATIO = env_float("AUTHENTICITY_KEYSTROKE_RATIO", 0.5, minimum=0.0)
AUTHENTICITY_HIDDEN_SECONDS = env_float("AUTHENTICITY_HIDDEN_SECONDS", 5.0, minimum=0.0)
if AUTHENTICITY_PASTE_SHARE > 1:
    raise ImproperlyConfigured(f"AUTHENTICITY_PASTE_SHARE={AUTHENTICITY_PASTE_SHARE} must be at most 1.")
# Seconds a rendered dashboard plot stays in the cache (its key changes with the reports).
REPORT_PLOT_CACHE_SECONDS = env_int("REPORT_PLOT_CACHE_SECONDS", 7 * 24 * 3600, minimum=1)
# Seconds without a heartbeat after which a RUNNING job counts as stalled: its worker died or
# lost the database. A redelivered task then takes it over and the sweeper requeues it. A
# running job beats every quarter of this, so it can be short (docs/deploy.md).
JOB_HEARTBEAT_GRACE_S = env_int("JOB_HEARTBEAT_GRACE_S", 60, minimum=1)
# Runs a job gets before a stalled one is failed rather than requeued (a job that kills its worker).
JOB_MAX_ATTEMPTS = env_int("JOB_MAX_ATTEMPTS", 3, minimum=1)
# Seconds between sweeps for stalled jobs (celery beat; ``manage.py sweepjobs`` does one by hand).
JOB_SWEEP_EVERY_S = env_int("JOB_SWEEP_EVERY_S", 60, minimum=1)
# Seconds between a research page's checks while something runs: a job's row on the jobs page,
# a dashboard's recompute and an export (JOB_POLL_SECONDS); a study overview's progress figures,
# which poll for as long as the page is open (PROGRESS_POLL_SECONDS). The browser tests shorten
# both (tests/browser_fixtures.py), so a test that follows a job waits for it, not the clock.
JOB_POLL_SECONDS = env_float("JOB_POLL_SECONDS", 2, minimum=0.05)
PROGRESS_POLL_SECONDS = env_float("PROGRESS_POLL_SECONDS", 5, minimum=0.05)
# The boundary game: scored rounds a player needs before a leaderboard ranks them, and
# how many rows a leaderboard shows.
LEADERBOARD_MIN_ROUNDS = env_int("LEADERBOARD_MIN_ROUNDS", 10, minimum=1)
LEADERBOARD_SIZE = env_int("LEADERBOARD_SIZE", 50, minimum=1)
# The share of exact guesses above which a leaderboard record is not a person's (docs/game.md).
LEADERBOARD_MAX_EXACT_SHARE = env_float("LEADERBOARD_MAX_EXACT_SHARE", 0.8, minimum=0.0)
# Local models the workers may load: {"name": {"path": "/models/gpt2", "dtype": "float16"}}.
MODEL_REGISTRY = env_json("MODEL_REGISTRY", {})
if not isinstance(MODEL_REGISTRY, dict):
    raise ImproperlyConfigured("MODEL_REGISTRY must be a JSON object of name -> {path, dtype}.")
# Where hub ids are looked up offline (empty: the Hugging Face default cache).
MODEL_CACHE_DIR = env_str("MODEL_CACHE_DIR", "") or None
# Intra-op threads for models run on the CPU; 0 keeps PyTorch's default (one per core). On
# cores shared with other work each parallel operation waits for descheduled threads
# (docs/workers.md, "Tests and speed"): set it to the cores the worker really has.
MODEL_CPU_THREADS = env_int("MODEL_CPU_THREADS", 0, minimum=0)
# Folders on the GPU workers that job parameters started through the API may name: model
# directories (``model``, ``hparams_dir``) and corpora or request files (``corpus``,
# ``requests``). Any other path is refused before the job is queued (docs/workers.md).
ROFT_MODEL_ROOTS = env_list("ROFT_MODEL_ROOTS", ["/models"])
ROFT_CORPUS_ROOTS = env_list("ROFT_CORPUS_ROOTS", [str(VAR_DIR / "corpora")])
# Model editing: the local text corpus for ROME/MEMIT key statistics, where those statistics
# are cached, and an optional directory of hyperparameter files searched before the bundled ones.
EDITING_STATS_CORPUS = env_str("EDITING_STATS_CORPUS", "") or None
EDITING_STATS_DIR = Path(env_str("EDITING_STATS_DIR", str(VAR_DIR / "editing-stats")))
EDITING_HPARAMS_DIR = env_str("EDITING_HPARAMS_DIR", "") or None
# Time limits (seconds) of the model-work tasks on the gpu queue: soft (the job fails cleanly), hard.
GPU_TASK_SOFT_TIME_LIMIT = env_int("GPU_TASK_SOFT_TIME_LIMIT", 6 * 3600, minimum=60)
GPU_TASK_TIME_LIMIT = env_int("GPU_TASK_TIME_LIMIT", 6 * 3600 + 300, minimum=60)

# Largest body the API reads for an upload (items as JSONL), in bytes; larger ones get 413.
API_MAX_UPLOAD_BYTES = env_int("API_MAX_UPLOAD_BYTES", 50 * 1024 * 1024, minimum=1024)
# Hours an Idempotency-Key is remembered (older keys are purged by the API on use).
IDEMPOTENCY_KEY_HOURS = env_int("IDEMPOTENCY_KEY_HOURS", 24, minimum=1)
# Where export files are written; web and workers must share it (the `appdata` volume).
EXPORT_DIR = Path(env_str("EXPORT_DIR", str(MEDIA_ROOT / "exports")))
# The API's items upload: a body of more lines than this is stored in UPLOAD_DIR (shared by
# web and workers, as EXPORT_DIR) and loaded by an `items_upload` job (202 with the job), so
# no web thread is held for minutes; up to it, it is loaded in the request (200).
ITEMS_UPLOAD_INLINE_LINES = env_int("ITEMS_UPLOAD_INLINE_LINES", 20000, minimum=1)
# A study version keeps its items in its study file up to this many (beyond: their digest
# and count only, so a million-item study is not copied whole on every change).
VERSION_ITEMS_KEPT = env_int("VERSION_ITEMS_KEPT", 20000, minimum=0)
UPLOAD_DIR = Path(env_str("UPLOAD_DIR", str(MEDIA_ROOT / "uploads")))
# Prolific's completion link, used when a Prolific study sets no completion_url.
PROLIFIC_COMPLETION_URL = env_str(
    "PROLIFIC_COMPLETION_URL", "https://app.prolific.com/submissions/complete?cc={code}"
)
# Prolific's API (docs/crowd.md, "Through the platforms' APIs"): the address, and the site's
# token (a researcher's own token, stored encrypted, takes its place for their studies).
PROLIFIC_API_URL = env_str("PROLIFIC_API_URL", "https://api.prolific.com").rstrip("/")
PROLIFIC_API_TOKEN = env_str("PROLIFIC_API_TOKEN", "")
# Seconds a call to a crowd platform may take before it counts as failed (its outcome unknown).
PLATFORM_API_TIMEOUT_S = env_int("PLATFORM_API_TIMEOUT_S", 30, minimum=1)
# The site's public address, for the study link a command sends to a platform (pages use the request's).
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000").rstrip("/")
# Key for the researchers' stored platform tokens (Fernet); empty: derived from SECRET_KEY.
PLATFORM_TOKEN_KEY = env_str("PLATFORM_TOKEN_KEY", "")
# Judges behind OpenAI-compatible endpoints (docs/workers.md, "Judges behind endpoints"):
# the base URLs a judge job may call (prefixes; empty: any http or https address), the
# seconds one call may take, the tries after a 429, a 5xx or a timeout, and the first
# backoff in seconds (doubled per try; a reply's Retry-After, up to JUDGE_RETRY_AFTER_MAX_S, wins).
JUDGE_ALLOWED_URLS = env_list("JUDGE_ALLOWED_URLS", [])
JUDGE_TIMEOUT_S = env_float("JUDGE_TIMEOUT_S", 60.0, minimum=0.01)
JUDGE_RETRIES = env_int("JUDGE_RETRIES", 6, minimum=0)
JUDGE_BACKOFF_S = env_float("JUDGE_BACKOFF_S", 1.0, minimum=0.0)
JUDGE_RETRY_AFTER_MAX_S = env_int("JUDGE_RETRY_AFTER_MAX_S", 60, minimum=0)
# Hosts MTurk may name in turkSubmitTo (the externalSubmit form posts there, nowhere else).
MTURK_SUBMIT_HOSTS = env_list("MTURK_SUBMIT_HOSTS", ["www.mturk.com", "workersandbox.mturk.com"])
# Origins allowed to frame the participant pages (MTurk shows an ExternalQuestion in a frame).
CROWD_FRAME_ANCESTORS = env_list(
    "CROWD_FRAME_ANCESTORS", ["https://worker.mturk.com", "https://workersandbox.mturk.com"]
)
# A framed page needs SameSite=None cookies (HTTPS only) to keep its session; Lax elsewhere.
SESSION_COOKIE_SAMESITE = env_str("SESSION_COOKIE_SAMESITE", "Lax")
CSRF_COOKIE_SAMESITE = env_str("CSRF_COOKIE_SAMESITE", "Lax")
for _name in ("SESSION_COOKIE_SAMESITE", "CSRF_COOKIE_SAMESITE"):
    if globals()[_name] not in ("Lax", "Strict", "None"):
        raise ImproperlyConfigured(f"{_name} must be Lax, Strict or None.")

# Every line goes to the root's console once. Django's own default gives its "django" logger a
# console handler of its own (in DEBUG) besides the mail to ADMINS; with the root's console its
# lines were printed twice ("Watching for file changes with StatReloader", "Internal Server
# Error: /"), so "django" keeps only the mail handler and passes its lines on to the root.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"require_debug_false": {"()": "django.utils.log.RequireDebugFalse"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler"},
        "mail_admins": {
            "level": "ERROR",
            "filters": ["require_debug_false"],
            "class": "django.utils.log.AdminEmailHandler",
        },
    },
    "loggers": {"django": {"handlers": ["mail_admins"], "level": "INFO"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
