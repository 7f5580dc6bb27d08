from django.apps import AppConfig
from django.db.models.signals import post_migrate


def ensure_researchers_group(sender, **kwargs) -> None:
    """After every ``migrate`` (and a test database's flush, which sends the same signal)
    the researchers group exists: migration 0014 made it once, but a flushed or hand-cleaned
    database would otherwise lose it until someone was invited."""
    from .services.access import researchers_group

    researchers_group()


class AnnotationConfig(AppConfig):
    """The domain: studies, items, participants, assignments, responses and their pages."""

    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import job_kinds  # noqa: F401 - registers the job kinds
        from .kinds import all_kinds

        for kind in all_kinds().values():
            kind.ready()  # a kind connects its receivers
        post_migrate.connect(ensure_researchers_group, sender=self)
