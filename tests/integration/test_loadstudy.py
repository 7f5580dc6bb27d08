"""loadstudy: all or nothing, every error naming the item index and field."""

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Item, Study
from tests.conftest import claim_study_file

pytestmark = pytest.mark.django_db


def write(tmp_path, data) -> str:
    path = tmp_path / "study.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return str(path)


def load(tmp_path, data, *options: str) -> str:
    from io import StringIO

    out = StringIO()
    call_command("loadstudy", write(tmp_path, data), *options, stdout=out)
    return out.getvalue()


def test_example_file_loads(tmp_path, example_study_file):
    output = load(tmp_path, example_study_file("claim"))
    study = Study.objects.get()
    assert "created" in output and study.kind == "claim"
    assert study.items.count() == len(example_study_file("claim")["items"])


def test_reloading_updates_and_adds_without_duplicating(tmp_path):
    data = claim_study_file(items=2)
    load(tmp_path, data)
    data["title"] = "Renamed"
    data["items"][0]["payload"]["claim"] = "Changed claim."
    data["items"].append({**data["items"][1], "external_id": "c-new"})
    output = load(tmp_path, data, "--update")
    assert "1 items added, 1 updated" in output
    assert Study.objects.get().title == "Renamed"
    assert Item.objects.count() == 3
    assert Item.objects.get(external_id="c0").payload["claim"] == "Changed claim."


def test_an_example_file_never_overwrites_the_demo_study_of_its_slug(tmp_path, example_study_file):
    """Usability defect 9: `loadstudy docs/examples/claim.json` after `make run` changed the demo."""
    demo = example_study_file("claim")
    load(tmp_path, demo)
    copy = {**example_study_file("claim"), "title": "My own claims"}
    with pytest.raises(CommandError, match="already exists; nothing was written"):
        load(tmp_path, copy)
    assert Study.objects.get(slug=demo["slug"]).title == demo["title"]


def broken(mutate):
    data = claim_study_file(items=3)
    mutate(data)
    return data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (broken(lambda d: d.update(kind="poetry")), "kind: Unknown kind 'poetry'"),
        (broken(lambda d: d.pop("slug")), "slug:"),
        (broken(lambda d: d.update(items=[])), "items: A study file needs"),
        (broken(lambda d: d["items"][2]["payload"].pop("claim")), "items[2].payload.claim"),
        (
            broken(lambda d: d["items"][1].update(gold={"label": "supports", "evidence": [5]})),
            "items[1].gold.evidence",
        ),
        (
            broken(lambda d: d["items"][1].update(external_id=d["items"][0]["external_id"])),
            "items[1].external_id",
        ),
        (broken(lambda d: d["items"][0].update(attention_check=True, gold=None)), "items[0].gold"),
        (broken(lambda d: d["items"][0].update(colour="red")), "items[0].colour"),
        (broken(lambda d: d.update(attention_check_rate=2)), "attention_check_rate"),
        (broken(lambda d: d.update(config={"unknown": 1})), "config.unknown"),
        (broken(lambda d: d.update(extra=1)), "extra: Unknown field"),
    ],
)
def test_invalid_file_names_the_problem_and_writes_nothing(tmp_path, data, message):
    with pytest.raises(CommandError) as exc:
        load(tmp_path, data)
    assert message in str(exc.value)
    assert "nothing was written" in str(exc.value)
    assert Study.objects.count() == 0 and Item.objects.count() == 0


def test_invalid_update_leaves_existing_study_untouched(tmp_path):
    data = claim_study_file(items=2)
    load(tmp_path, data)
    data["title"] = "Should not stick"
    data["items"][1]["payload"]["sentences"] = []
    with pytest.raises(CommandError, match=r"items\[1\]\.payload\.sentences"):
        load(tmp_path, data, "--update")
    assert Study.objects.get().title == "Claims under test"


def test_not_json_and_missing_file(tmp_path):
    with pytest.raises(CommandError, match="Not valid JSON"):
        load(tmp_path, "{nope")
    with pytest.raises(CommandError, match="no such file"):
        call_command("loadstudy", str(tmp_path / "missing.json"))
