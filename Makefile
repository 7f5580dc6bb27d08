# Two commands: `make run` (the embedded demo) and `make test` (the whole suite).
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3
TEST_WORKERS ?= 2
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
# Python keeps the modules it compiles (__pycache__, ignored by git) even where the machine's
# environment says not to: without them every process of `make test` (each xdist worker,
# each Celery worker and manage.py a test starts) compiled Django, torch and the tests from
# source again, 13 of the 21 CPU seconds a worker spent collecting the tests.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run install-all test chromium-install-started lint format migrate demo worker beat

# Two installs: the web's (requirements-web.txt: what `make run` needs, no torch) and the
# whole (requirements.txt: the web's plus the workers' model stack; requirements-dev.txt: that
# plus the test tools, for `make test`), each one run of uv from pip's package sources
# (bin/install-requirements: half pip's time, pip again if uv fails). Nothing is byte-compiled
# at install (pip's compiling of torch's and transformers' thousands of modules cost 50 of 86
# seconds); Python compiles the few it imports on first use.
PIP_INSTALL := bin/install-requirements $(VENV)

$(VENV)/.installed-web: requirements-web.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) requirements-web.txt
	touch $@

$(VENV)/.installed: requirements.txt requirements-web.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) requirements.txt
	touch $(VENV)/.installed-web $@

$(VENV)/.installed-dev: requirements-dev.txt requirements.txt requirements-web.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) requirements-dev.txt
	touch $(VENV)/.installed-web $(VENV)/.installed $@

## run: create .venv, install the web's requirements (no torch), migrate, load the demo, serve on http://127.0.0.1:8000 (PORT=8001 for another port)
run: $(VENV)/.installed-web
	PORT=$(or $(PORT),8000) bin/run-demo

## install-all: add the workers' model stack (torch, transformers, the sentence encoder) to .venv
install-all: $(VENV)/.installed

# On a machine without Debian's Chromium its install starts before the requirements' and
# runs beside them (bin/ensure-chromium); the recipe below waits for it.
chromium-install-started:
	bin/ensure-chromium --in-background

## test: dev requirements, PostgreSQL + Redis up, Chromium and gettext present, lint, migrations, types, the whole suite
test: chromium-install-started $(VENV)/.installed-dev
# The tiny models a cold cache lacks are trained in the background from here on, while the
# services and lint are seen to; a test that needs one still being trained waits for it
# (tests/tiny_models.py).
	mkdir -p test-artifacts
	$(PY) -m tests.tiny_models > test-artifacts/tiny-models.log 2>&1 &
	bin/ensure-services
	bin/ensure-gettext
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
# The packages' import direction and what stays out of stats/ and the web (pyproject.toml
# [tool.importlinter], docs/architecture.md).
	$(VENV)/bin/lint-imports
# A model change without its migration fails here; the check needs no database.
	SECRET_KEY=makemigrations-check DATABASE_URL=sqlite:///:memory: $(PY) manage.py makemigrations --check --dry-run
# Chromium's install, if one was started, is done by now (it ran beside the installs and lint).
	bin/ensure-chromium
# Across TEST_WORKERS processes (pytest-xdist), each with its own PostgreSQL test database and
# Redis database (tests/xdist_env.py); an idle worker takes tests queued for a busy one.
# Types over annotation (views, API, admin, services), scoring, stats and workers (pyproject.toml
# [tool.mypy]; the Django plugin reads the settings, which need a key and nothing else) are
# checked beside the tests, not before them: 13 s of one core a fresh clone waited for. Their
# report is printed after the tests', and either failing fails the target.
	SECRET_KEY=mypy-check DATABASE_URL=sqlite:///:memory: $(VENV)/bin/mypy > test-artifacts/mypy.log 2>&1 & types=$$!; \
	$(VENV)/bin/pytest -n $(TEST_WORKERS) --dist worksteal; tests=$$?; \
	wait $$types; typed=$$?; cat test-artifacts/mypy.log; test $$tests -eq 0 -a $$typed -eq 0

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
# The packages' import direction and what stays out of stats/ and the web (pyproject.toml
# [tool.importlinter], docs/architecture.md).
	$(VENV)/bin/lint-imports
	SECRET_KEY=mypy-check DATABASE_URL=sqlite:///:memory: $(VENV)/bin/mypy

format: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .
