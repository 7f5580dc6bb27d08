"""The statistics dashboard through HTTP: access, what it shows, plots, recomputing."""

import pytest
from django.core.cache import cache

from annotation.models import Job
from scoring import plots
from scoring.models import Report
from scoring.services import compute_study_reports
from tests.conftest import logged_in
from tests.factories import AnsweredResponseFactory, ItemFactory, StudyFactory, researcher_user
from tests.helpers.reports import game_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def game_with_reports(owner):
    study = game_study(owner=owner)
    compute_study_reports(study)
    return study


def url(study, suffix=""):
    return f"/research/s/{study.slug}/dashboard/{suffix}"


def test_only_the_studys_researchers_see_it(client, game_with_reports, django_user_model):
    assert client.get(url(game_with_reports)).status_code == 302
    plain = django_user_model.objects.create_user("plain")
    assert logged_in(plain).get(url(game_with_reports)).status_code == 403
    other = researcher_user("other")
    assert logged_in(other).get(url(game_with_reports)).status_code == 404
    assert logged_in(other).get(url(game_with_reports, "plots/distance.svg")).status_code == 404
    assert logged_in(other).post(url(game_with_reports, "recompute/")).status_code == 404
    assert Job.objects.count() == 0


def test_dashboard_shows_progress_tables_and_plots(
    owner_client, game_with_reports, django_assert_max_num_queries
):
    with django_assert_max_num_queries(12):
        page = owner_client.get(url(game_with_reports)).content.decode()
    assert "Items complete" in page and "2 of 4" in page
    assert "Attention-check failures" in page
    assert "The game at a glance" in page and "Agreement between annotators" in page
    assert '0.444 <span class="ci">[' in page  # exact-hit rate 4/9 with its interval
    assert "By generator" in page and "ctrl" in page
    for name in ("distance", "points-by-order", "points-by-p", "alpha"):
        assert f"/dashboard/plots/{name}.svg?population=all" in page
    assert 'href="?population=passed"' in page


def test_pages_read_reports_and_never_recompute(owner_client, game_with_reports, monkeypatch):
    import scoring.services

    def refuse(*args, **kwargs):
        raise AssertionError("a page recomputed the reports")

    monkeypatch.setattr(scoring.services, "compute_study_reports", refuse)
    before = sorted(Report.objects.filter(study=game_with_reports).values_list("pk", flat=True))
    assert owner_client.get(url(game_with_reports)).status_code == 200
    assert owner_client.get(url(game_with_reports, "plots/distance.svg")).status_code == 200
    assert sorted(Report.objects.filter(study=game_with_reports).values_list("pk", flat=True)) == before


def test_new_responses_mark_the_reports_out_of_date(owner_client, game_with_reports):
    AnsweredResponseFactory.from_specs(
        game_with_reports, [{"participant": "zed", "item": "A", "answer": {"guess": 3}, "points": 5}]
    )
    page = owner_client.get(url(game_with_reports)).content.decode()
    assert "Out of date: 1 new responses since then" in page


def test_a_study_without_reports_says_so(owner, owner_client):
    fresh = game_study(slug="fresh", owner=owner)
    page = owner_client.get(url(fresh)).content.decode()
    assert "No reports yet" in page
    assert owner_client.get(url(fresh, "plots/distance.svg")).status_code == 404


def test_reports_from_no_answers_say_the_tables_come_later(owner, owner_client, game_with_reports):
    """A likert study computed before any answer has no table at all: the page says why."""
    quiet = StudyFactory(
        kind="likert",
        slug="quiet",
        owner=owner,
        config={"questions": [{"id": "q", "text": "…", "passage": "main"}]},
    )
    ItemFactory(study=quiet, external_id="a", payload={"new_fact": "f", "old_facts": [], "main_passage": "p"})
    compute_study_reports(quiet)
    page = owner_client.get(url(quiet)).content.decode()
    assert "Items complete" in page and 'id="no-figures"' in page
    assert 'id="no-figures"' not in owner_client.get(url(game_with_reports)).content.decode()


def test_plots_are_svg_rendered_once_per_version_of_the_reports(owner_client, game_with_reports, monkeypatch):
    cache.clear()
    calls = []
    render = plots.render_svg

    def counting(spec, points):
        calls.append(spec.name)
        return render(spec, points)

    monkeypatch.setattr(plots, "render_svg", counting)
    response = owner_client.get(url(game_with_reports, "plots/distance.svg"))
    assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
    svg = response.content.decode()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "script" not in svg.lower()
    owner_client.get(url(game_with_reports, "plots/distance.svg"))
    assert calls == ["distance"]
    compute_study_reports(game_with_reports)  # a new version of the reports draws the plot anew
    owner_client.get(url(game_with_reports, "plots/distance.svg"))
    assert calls == ["distance", "distance"]
    assert owner_client.get(url(game_with_reports, "plots/nope.svg")).status_code == 404
    assert owner_client.get(url(game_with_reports, "plots/distance.svg?population=nobody")).status_code == 404
    for name in ("points-by-order", "points-by-p", "alpha"):
        assert (
            owner_client.get(url(game_with_reports, f"plots/{name}.svg?population=passed")).status_code == 200
        )


def test_recompute_starts_one_job_and_reports_its_progress(
    owner, owner_client, game_with_reports, django_capture_on_commit_callbacks
):
    idle = owner_client.get(url(game_with_reports, "job/"), HTTP_HX_REQUEST="true")
    assert "Recompute</button>" in idle.content.decode() and "hx-get" not in idle.content.decode()
    AnsweredResponseFactory.from_specs(
        game_with_reports, [{"participant": "zed", "item": "A", "answer": {"guess": 3}, "points": 5}]
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = owner_client.post(url(game_with_reports, "recompute/"), HTTP_HX_REQUEST="true")
    assert response.status_code == 202 and 'id="reports-job"' in response.content.decode()
    job = Job.objects.get()
    assert (job.kind, job.study, job.created_by, job.parameters) == (
        "reports",
        game_with_reports,
        owner,
        {"trigger": "dashboard", "by": ["system"]},  # validated once: the serializer's default is stored
    )
    polled = owner_client.get(url(game_with_reports, "job/"), HTTP_HX_REQUEST="true")
    assert polled["HX-Refresh"] == "true"  # done: the page reloads to show the new reports
    assert "Stored" in polled.content.decode() and "hx-get" not in polled.content.decode()
    assert (
        Report.objects.get(
            study=game_with_reports, population="all", metric="progress.responses", group={}
        ).value
        == 10
    )


def test_a_second_click_while_the_job_waits_starts_nothing(owner_client, game_with_reports):
    first = owner_client.post(url(game_with_reports, "recompute/"))
    assert first.status_code == 302 and first["Location"] == url(game_with_reports)
    second = owner_client.post(url(game_with_reports, "recompute/"), HTTP_HX_REQUEST="true")
    assert second.status_code == 200
    assert Job.objects.filter(kind="reports").count() == 1
    page = owner_client.get(url(game_with_reports)).content.decode()
    poll = f'hx-get="{url(game_with_reports, "job/")}" hx-trigger="every 2s"'
    assert poll in page and poll in second.content.decode() and 'type="submit" disabled>Recompute' in page
    assert "HX-Refresh" not in owner_client.get(url(game_with_reports, "job/"), HTTP_HX_REQUEST="true")
    assert owner_client.get(url(game_with_reports, "recompute/")).status_code == 405
