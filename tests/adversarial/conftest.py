"""Fixtures the finding tests share with the API suite."""

from tests.api.conftest import api_ranking, client_for, owned_study, users  # noqa: F401
