"""Issue 13's leftovers: the demo ships seeded answers so a newcomer's dashboards show the
agreement and adjudication tables; per-system alpha on a single item is undefined with its
reason; the agreement tables list questions in the study's order, as the means table does;
a study title ending in "?" gets no colon in the research navigation."""

import html as html_lib
import re
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Response, Study
from annotation.services.authoring.studies import load_study_file
from scoring.models import Report
from tests.conftest import claim_study_file

pytestmark = pytest.mark.django_db


def table_rows(page: str, title: str) -> list[list[str]]:
    """The cells of the dashboard table headed ``title``."""
    section = page.split(f"<h2>{title}</h2>", 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", section.split("<tbody>", 1)[1], re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in rows]
    return [[html_lib.unescape(cell).strip() for cell in line] for line in cells]


def test_the_demo_loads_seeded_answers_and_its_dashboards_show_agreement_and_disagreements(admin_client):
    out = StringIO()
    call_command("loaddemo", stdout=out)
    assert "demo-likert: 4 items, 12 seeded answers imported" in out.getvalue()
    likert = Study.objects.get(slug="demo-likert")
    assert likert.annotations_per_item == 3 + 3  # the file's slots stay free for visitors
    assert Response.objects.filter(study__slug="demo-claims", participant__source="lab").count() == 18

    page = admin_client.get("/research/s/demo-likert/dashboard/").content.decode()
    per_question = table_rows(page, "Agreement between annotators, per question")
    means = table_rows(page, "Mean rating per question and system (± sd, 95% CI)")
    agreement_order = list(dict.fromkeys(row[0] for row in per_question))
    assert agreement_order == list(dict.fromkeys(row[0] for row in means))
    assert agreement_order[:2] == ["edit_main", "edit_related"]  # the study's order, not A to Z
    by_system = table_rows(page, "Agreement per system and question")
    single = next(row for row in by_system if row[:3] == ["FT_L", "edit_main", "ordinal"])  # one FT_L item
    assert single[3].startswith("undefined: only one item has two or more answers")

    claims = admin_client.get("/research/s/demo-claims/adjudication/").content.decode()
    assert claims.count('id="item-') >= 1

    computed = set(Report.objects.values_list("computed_at", flat=True))
    call_command("loaddemo", stdout=StringIO())  # again: nothing new to import or compute
    assert Response.objects.filter(participant__source="lab").count() == 18 + 12 + 12 + 9 + 12 + 9 + 9
    assert set(Report.objects.values_list("computed_at", flat=True)) == computed


def test_a_title_ending_in_a_question_mark_gets_no_colon_in_the_research_navigation(admin_client):
    load_study_file(claim_study_file(slug="which-reads-better", title="Which passage reads better?"))
    load_study_file(claim_study_file(slug="plain-title", title="Claims about towns"))
    asked = admin_client.get("/research/s/which-reads-better/").content.decode()
    plain = admin_client.get("/research/s/plain-title/").content.decode()
    assert '<span class="study-name">Which passage reads better?</span>' in asked
    assert '<span class="study-name">Claims about towns:</span>' in plain
