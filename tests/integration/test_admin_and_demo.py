"""The admin pages for researchers/admins (pytest-django's ``admin_client``, a superuser), and
the demo that `make run` loads."""

import json
import re
from collections.abc import Iterator
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Enrollment, Study
from tests.helpers.module_data import rows_for_the_module

pytestmark = pytest.mark.django_db


def test_admin_lists_studies_with_progress(admin_client, make_claim_study):
    make_claim_study(items=4, annotations_per_item=2)
    html = admin_client.get("/admin/annotation/study/").content.decode()
    assert "claims" in html and "0 / 8" in html


@pytest.mark.parametrize(
    "model_name",
    ["item", "attentioncheck", "participant", "enrollment", "assignment", "response"],
)
def test_admin_pages_open(admin_client, make_claim_study, model_name):
    make_claim_study(attention=1)
    assert admin_client.get(f"/admin/annotation/{model_name}/").status_code == 200


def test_attention_check_admin_shows_only_checks(admin_client, make_claim_study):
    make_claim_study(items=2, attention=1)
    html = admin_client.get("/admin/annotation/attentioncheck/").content.decode()
    listed = set(re.findall(r'class="field-external_id"><a [^>]*>([^<]+)</a>', html))
    assert listed == {"attn0"}


def test_admin_blocks_site_wide_and_flags_in_one_study(admin_client, make_claim_study, enrolled):
    study = make_claim_study()
    participant = enrolled(study)
    enrollment = Enrollment.objects.get(participant=participant)
    admin_client.post(
        "/admin/annotation/participant/", {"action": "block", "_selected_action": [participant.pk]}
    )
    admin_client.post(
        "/admin/annotation/enrollment/", {"action": "flag", "_selected_action": [enrollment.pk]}
    )
    participant.refresh_from_db()
    enrollment.refresh_from_db()
    assert participant.blocked and enrollment.flagged and enrollment.flag_reason == "flagged by an admin"


def test_responses_are_read_only_in_admin(admin_client):
    assert admin_client.get("/admin/annotation/response/add/").status_code == 403


@pytest.fixture(scope="module")
def demo_loaded(django_db_setup, django_db_blocker) -> Iterator[None]:
    """``loaddemo`` run once for the module's two demo tests, its rows kept for the module
    (tests/helpers/module_data.py): the studies, their seeded answers and reports, a few CPU
    seconds. The demo tests come last here, so no other test of the module sees them."""
    with rows_for_the_module(django_db_blocker):
        call_command("loaddemo", stdout=StringIO())
        yield


def test_demo_loads_and_admin_password_is_printed_once(django_user_model, demo_loaded):
    call_command("loaddemo", stdout=StringIO())  # again, on the loaded demo: idempotent
    assert Study.objects.filter(status="live", public=True).exists()
    first, second = StringIO(), StringIO()
    call_command("demoadmin", stdout=first)
    call_command("demoadmin", stdout=second)
    assert "Password:" in first.getvalue() and "Password:" not in second.getvalue()
    assert django_user_model.objects.get(username="admin").is_superuser


def test_each_study_file_is_kept_once_and_the_demo_is_the_documented_examples(demo_loaded):
    """The demo loads ``docs/examples/``; no second copy of an example sits elsewhere."""
    import hashlib
    import subprocess

    from tests.conftest import EXAMPLES, ROOT

    tracked = subprocess.run(
        ["git", "ls-files", "*.json"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    by_content: dict[str, list[str]] = {}
    for name in tracked:
        content = (ROOT / name).read_bytes()
        if b'"slug"' in content and b'"kind"' in content:  # a study file
            by_content.setdefault(hashlib.sha256(content).hexdigest(), []).append(name)
    assert [names for names in by_content.values() if len(names) > 1] == []

    documented = {json.loads(path.read_text())["slug"] for path in EXAMPLES.glob("*.json")}
    assert set(Study.objects.values_list("slug", flat=True)) == documented - {"boundary-example"}
