from django.apps import AppConfig


class ScoringConfig(AppConfig):
    """Reports: computed from a study's responses with ``stats``, stored as rows, shown."""

    name = "scoring"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from annotation.services.analysis.competence import register_competence_reader
        from annotation.services.participation.adaptive import register_stopping_reader

        from . import exports, job_kinds  # noqa: F401 - registers the reports job and the reports export table
        from .selectors import annotator_competence, stopping_interval

        register_competence_reader(annotator_competence)
        register_stopping_reader(stopping_interval)
