from django.apps import AppConfig


class ScoringConfig(AppConfig):
    """Reports: computed from a study's responses with ``stats``, stored as rows, shown."""

    name = "scoring"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import exports, job_kinds  # noqa: F401 - registers the reports job and the reports export table
