"""Amounts and counts on the platforms page, the API and the commands: a value that is not
an amount, or above the bounds of docs/crowd.md, is refused naming the field, changes
nothing and sends nothing (red-team round 4: T1, 500s on the page; T14, a dry run priced at
10^32 cents; code review 3, C4: the command's tracebacks on ``nan`` and ``inf``)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings
from rest_framework.test import APIClient

from annotation.models import Job, PlatformStudy
from annotation.platforms.money import MAX_MINUTES, MAX_PLACES, MAX_REWARD_CENTS

pytestmark = pytest.mark.django_db

HUGE = "9" * 5000


@pytest.fixture
def capped_study(researchers_crowd_study):
    """``researchers_crowd_study`` with a bonus cap of 2.00."""
    PlatformStudy.objects.create(study=researchers_crowd_study, bonus_cap_cents=200)
    return researchers_crowd_study


def messages_of(page) -> str:
    return " ".join(str(m) for m in page.context["messages"])


@pytest.mark.parametrize(
    "cap", ["1e30", "21474836.48", "42949672.97", "99999999999", "nan", "-1", "1.505", HUGE]
)
def test_a_bonus_cap_that_is_not_an_amount_within_the_bound_is_refused(client, capped_study, cap):
    page = client.post(
        f"/research/s/{capped_study.slug}/platforms/settings/", {"bonus_cap": cap}, follow=True
    )
    assert page.status_code == 200
    assert "Nothing changed" in messages_of(page) and "bonus_cap" in messages_of(page)
    assert PlatformStudy.objects.get(study=capped_study).bonus_cap_cents == 200


def test_the_bonus_cap_is_stored_as_typed(client, capped_study):
    page = client.post(
        f"/research/s/{capped_study.slug}/platforms/settings/", {"bonus_cap": "12.34"}, follow=True
    )
    assert "Bonus cap: 12.34" in messages_of(page)
    assert PlatformStudy.objects.get(study=capped_study).bonus_cap_cents == 1234


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("places", "²"),
        ("places", HUGE),
        ("places", "0"),
        ("places", str(MAX_PLACES + 1)),
        ("minutes", "²"),
        ("minutes", HUGE),
        ("minutes", str(MAX_MINUTES + 1)),
        ("reward", "1e30"),
        ("reward", "nan"),
        ("reward", "500.01"),
        ("reward", HUGE),
    ],
)
@pytest.mark.parametrize("confirm", ["", "dry_run"])
def test_publish_values_out_of_bounds_are_refused_on_the_page(
    client, capped_study, fake_prolific, field, value, confirm
):
    data = {"reward": "1.00", "places": "5", "minutes": "5", field: value}
    if confirm:
        data["confirm"] = confirm
    page = client.post(f"/research/s/{capped_study.slug}/platforms/prolific/publish/", data, follow=True)
    assert page.status_code == 200 and f"{field}:" in messages_of(page)
    assert not Job.objects.exists() and fake_prolific.calls == []


def test_the_page_states_the_bounds(client, capped_study):
    page = client.get(f"/research/s/{capped_study.slug}/platforms/").content.decode()
    assert "at most 500.00 per participant" in page and "Places: 1 to 100000" in page
    assert "Minutes: 1 to 1440" in page and "to 1000.00" in page


def test_a_dry_run_with_a_reward_in_bounds_is_priced(
    client, capped_study, fake_prolific, django_capture_on_commit_callbacks
):
    with (
        override_settings(ALLOWED_HOSTS=["roft.example"]),
        django_capture_on_commit_callbacks(execute=True),
    ):
        page = client.post(
            f"/research/s/{capped_study.slug}/platforms/prolific/publish/",
            {"reward": "500.00", "places": str(MAX_PLACES), "minutes": "5", "confirm": "dry_run"},
            follow=True,
            HTTP_HOST="roft.example",
        )
    assert "Started prolific_publish" in messages_of(page), messages_of(page)
    assert Job.objects.get().result["cost_cents"] == MAX_PLACES * MAX_REWARD_CENTS


@pytest.mark.parametrize(
    ("name", "value"), [("reward_cents", 10**32), ("reward_cents", MAX_REWARD_CENTS + 1), ("places", 10**9)]
)
def test_the_api_refuses_publish_parameters_out_of_bounds(capped_study, researcher, name, value):
    api = APIClient()
    api.force_authenticate(researcher)
    parameters = {"study_url": "https://roft.example/s/claims/", "reward_cents": 100, "minutes": 5}
    parameters |= {"dry_run": True, name: value}
    answer = api.post(
        "/api/v1/jobs/",
        {"kind": "prolific_publish", "study": capped_study.slug, "parameters": parameters},
        format="json",
    )
    assert answer.status_code == 400 and f"parameters.{name}" in answer.content.decode()
    assert not Job.objects.exists()


def command(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.mark.parametrize("reward", ["nan", "inf", "1e30", "500.01", "²"])
def test_the_mturk_command_names_a_bad_reward_instead_of_a_traceback(capped_study, reward):
    with pytest.raises(CommandError, match="--reward"):
        command("mturk", "publish", capped_study.slug, "--reward", reward, "--minutes", "5", "--dry-run")
    assert not Job.objects.exists()


@pytest.mark.parametrize(
    "options",
    [
        ("--reward", str(10**12)),
        ("--places", str(10**9)),
        ("--minutes", str(10**6)),
        ("--reward", "nan"),
        ("--reward", "inf"),
        ("--places", "inf"),
        ("--minutes", "nan"),
    ],
)
def test_the_prolific_command_refuses_values_out_of_bounds(capped_study, fake_prolific, options):
    arguments = {"--reward": "1.50", "--minutes": "10", **dict([options])}
    flat = [part for pair in arguments.items() for part in pair]
    with pytest.raises(CommandError, match=options[0].strip("-")):
        command("prolific", "publish", capped_study.slug, *flat, "--dry-run")
    assert not Job.objects.exists() and fake_prolific.calls == []


def test_the_prolific_reward_in_old_cents_is_refused_not_read_as_pounds(capped_study, fake_prolific):
    """The option took cents until the room had one money reader: a script's ``--reward 150``
    must not publish a reward of 150.00."""
    with pytest.raises(CommandError, match=r"--reward.*1\.50"):
        command("prolific", "publish", capped_study.slug, "--reward", "150", "--minutes", "10", "--dry-run")
    assert not Job.objects.exists() and fake_prolific.calls == []


def test_a_bonus_file_amount_out_of_bounds_names_its_line(capped_study, tmp_path, fake_prolific):
    path = tmp_path / "bonuses.csv"
    path.write_text(f"pid-a,1e30\npid-b,{HUGE}\npid-c,20000000\n")
    with pytest.raises(CommandError) as refused:
        command("prolific", "bonus", capped_study.slug, str(path))
    assert all(f"line {n}" in str(refused.value) for n in (1, 2, 3))
    assert not Job.objects.exists()


@pytest.mark.parametrize("platform", ["prolific", "mturk"])
def test_a_bonus_file_amount_that_is_nan_or_inf_names_its_line_on_either_command(
    capped_study, tmp_path, fake_prolific, platform
):
    path = tmp_path / "bonuses.csv"
    path.write_text("pid-a,nan\npid-b,inf\npid-c,-inf\n")
    with pytest.raises(CommandError) as refused:
        command(platform, "bonus", capped_study.slug, str(path))
    assert all(f"line {n}" in str(refused.value) for n in (1, 2, 3))
    assert not Job.objects.exists() and fake_prolific.calls == []
