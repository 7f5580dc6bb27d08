from django.apps import AppConfig


class ScoringConfig(AppConfig):
    """Statistics: pure functions, and the layer that stores them as report rows."""

    name = "scoring"
    default_auto_field = "django.db.models.BigAutoField"
