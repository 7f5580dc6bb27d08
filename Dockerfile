# Two images from one file (docker-compose.yml builds both):
#   --target web     gunicorn, migrate and beat: requirements-web.txt only, no torch
#   --target worker  the Celery workers: the web's packages plus the model stack (requirements.txt)
# The package layers come before the code, so a code change rebuilds neither install.

FROM python:3.11-slim AS base
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    PIP_NO_CACHE_DIR=1 STATIC_ROOT=/app/staticfiles VAR_DIR=/data
WORKDIR /app
RUN useradd --create-home --uid 1000 app && mkdir -p /data && chown app /data
COPY requirements-web.txt .
RUN pip install -r requirements-web.txt

FROM base AS worker-packages
COPY requirements.txt .
RUN pip install -r requirements.txt

FROM worker-packages AS worker
COPY . .
RUN SECRET_KEY=build-only python manage.py collectstatic --noinput
USER app
CMD ["celery", "-A", "roft_site", "worker", "-Q", "default", "--loglevel", "INFO"]

# Last, so a plain `docker build .` gives the web image.
FROM base AS web
COPY . .
RUN SECRET_KEY=build-only python manage.py collectstatic --noinput
USER app
EXPOSE 8000
CMD ["gunicorn", "roft_site.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
