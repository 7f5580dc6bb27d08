from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    """The domain: studies, items, participants, assignments, responses and their pages."""

    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import job_kinds  # noqa: F401 - registers the job kinds
        from .kinds import all_kinds

        for kind in all_kinds().values():
            kind.ready()  # a kind connects its receivers
