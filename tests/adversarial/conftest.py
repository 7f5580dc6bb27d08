"""Fixtures the finding tests share with the API and participant-gate suites."""

from tests.api.conftest import client_for, owned_study, users  # noqa: F401
from tests.api.test_one_validation import api_ranking  # noqa: F401
from tests.integration.test_participant_gate import in_the_exam, on_a_page, round_in_play  # noqa: F401
