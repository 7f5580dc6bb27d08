from django.apps import AppConfig


class WorkersConfig(AppConfig):
    """Celery tasks and model code; torch is imported inside task bodies, never at import."""

    name = "workers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from workers.demo import backend  # noqa: F401 - registers the "demo" generator
