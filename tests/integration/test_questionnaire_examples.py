"""The questionnaire examples of ``docs/examples/`` load through ``loadstudy`` (the real
loader) and show their instructions (worked examples included) and a first page."""

from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Study
from tests.conftest import EXAMPLES
from tests.helpers.flow import start

pytestmark = pytest.mark.django_db
FILES = ["questionnaire-pairwise", "questionnaire-best-worst", "questionnaire-errors"]


@pytest.mark.parametrize("name", FILES)
def test_each_example_loads_and_shows_its_pages(name, client):
    call_command("loadstudy", str(EXAMPLES / f"{name}.json"), stdout=StringIO())
    study = Study.objects.get(slug=f"demo-quest-{name.removeprefix('questionnaire-')}")
    assert study.kind == "questionnaire" and study.items.count() >= 3
    instructions = client.get(f"/s/{study.slug}/instructions/").content.decode()
    html = start(client, study.slug)
    assert "Page 1 of" in html and 'name="q-' in html
    systems = {p["system"] for item in study.items.all() for p in item.payload["passages"]}
    assert not any(system in html for system in systems)
    if study.examples:
        assert "Entry will be free all summer." in instructions and "checked disabled" in instructions
