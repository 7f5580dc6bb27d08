"""The plan page: manage.py plan's table for a pilot study, through HTTP."""

import pytest

from annotation.models import Job, Study
from scoring.models import Report
from tests.factories import researcher_user
from tests.helpers.module_data import rows_for_the_module
from tests.helpers.reports import likert_study

pytestmark = pytest.mark.django_db

URL = "/research/s/leme/plan/"
COMPARE = {"question": "edit", "first": "ROME", "second": "FT", "difference": "1.5", "price": "0.5"}


@pytest.fixture(scope="module")
def module_rows(django_db_setup, django_db_blocker):
    """The pilot study's owner and the study, written once for the module
    (tests/helpers/module_data.py): the primary keys of both."""
    with rows_for_the_module(django_db_blocker):
        owner = researcher_user("owner")
        likert_study()
        Study.objects.filter(slug="leme").update(owner=owner)
        yield owner.pk, Study.objects.get(slug="leme").pk


def test_only_the_studys_researchers_see_it(client, module_owner):
    assert client.get(URL).status_code == 302
    client.force_login(researcher_user("other"))
    assert client.get(URL, COMPARE).status_code == 404


def test_the_form_alone_until_a_target_is_given(client, module_owner):
    client.force_login(module_owner)
    page = client.get(URL).content.decode()
    assert 'id="plan-form"' in page and 'id="plan-table"' not in page
    # the study's questions and systems as choices, not free text (U25)
    assert '<option value="edit">edit: scale</option>' in page
    assert '<select name="first"' in page and '<option value="ROME">ROME</option>' in page
    assert f'href="{URL}" aria-current="page">Plan</a>' in page


def test_a_comparison_shows_every_design_its_cost_and_the_cheapest(client, module_owner):
    client.force_login(module_owner)
    page = client.get(URL, COMPARE).content.decode()
    assert "12 cases rated for both systems (paired)" in page and "72 answers that count" in page
    assert page.count("<tr") == 1 + 9 * 4  # the header and the default designs
    assert '<td class="num">10</td><td class="num">1</td><td class="num">20</td>' in page
    assert "<strong>Cheapest design:</strong>" in page and "cost " in page
    assert Report.objects.count() == 0 and Job.objects.count() == 0  # nothing stored


def test_an_alpha_width_target(client, module_owner):
    client.force_login(module_owner)
    page = client.get(URL, {"question": "natural", "agreement_width": "0.4"}).content.decode()
    assert "Alpha of natural: interval at most 0.4 wide" in page and "Median alpha" in page
    assert page.count("<tr") == 1 + 9 * 3


@pytest.mark.parametrize(
    "query, message",
    [
        # the study's systems and questions are offered as lists: another is refused by name
        ({**COMPARE, "second": "MEMIT"}, "Select a valid choice. MEMIT is not one of the available choices."),
        ({**COMPARE, "question": "fluency"}, "Select a valid choice. fluency is not one of the available"),
        ({**COMPARE, "difference": "-1"}, "The difference to detect must be positive."),
        ({"question": "edit"}, "Give two systems and a difference, or an alpha interval width."),
        (
            {**COMPARE, "agreement_width": "0.3"},
            "Give two systems and a difference, or an alpha interval width.",
        ),
    ],
)
def test_a_bad_target_is_said_on_the_form(client, module_owner, query, message):
    client.force_login(module_owner)
    response = client.get(URL, query)
    page = response.content.decode()
    assert response.status_code == 200 and message in page and 'id="plan-table"' not in page


@pytest.mark.parametrize(
    "query, message",
    [
        ({**COMPARE, "difference": "1e-300", "power": "0.999999"}, "The difference to detect: from 0.001"),
        ({**COMPARE, "difference": "1e-300", "power": "0.999999"}, "The power must be from 0.5 to 0.999."),
        ({**COMPARE, "alpha": "1e-300"}, "The significance level must be from"),
        ({**COMPARE, "difference": "1e308"}, "The difference to detect: from 0.001 to 1000 points."),
        ({**COMPARE, "price": "1e300"}, "The price per answer must be from 0"),
        ({"question": "edit", "agreement_width": "1e-300"}, "The interval width must be from 0.001 to 2."),
    ],
)
def test_a_target_past_the_plans_bounds_is_said_on_the_form(client, module_owner, query, message):
    """The page's targets go through the bounds the command's do: a message on the form and
    no table, before anything is simulated."""
    client.force_login(module_owner)
    response = client.get(URL, query)
    page = response.content.decode()
    assert response.status_code == 200 and message in page and 'id="plan-table"' not in page
