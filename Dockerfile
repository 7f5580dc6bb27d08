# One image for the web process, both Celery workers and beat.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    PIP_NO_CACHE_DIR=1 STATIC_ROOT=/app/staticfiles VAR_DIR=/data
WORKDIR /app

COPY requirements.txt .
RUN pip install -r requirements.txt
COPY . .
RUN SECRET_KEY=build-only python manage.py collectstatic --noinput \
    && useradd --create-home --uid 1000 app && mkdir -p /data && chown app /data
USER app
EXPOSE 8000
CMD ["gunicorn", "roft_site.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
