from django.apps import AppConfig


class WorkersConfig(AppConfig):
    """Celery tasks and model code; torch is imported inside task bodies, never at import."""

    name = "workers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from workers.demo import backend  # noqa: F401 - registers the "demo" generator

        # Register the tasks in every process (none imports torch at import time), so the
        # embedded runtime, which runs jobs in-process, finds them by name.
        from . import tasks  # noqa: F401
