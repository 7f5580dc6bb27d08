"""Study files of the survey kinds: the sample files load, and every bad part is named
(payloads, config, worked examples, FAQ, exam settings, timing) with nothing written."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Exam, Item, Study

pytestmark = pytest.mark.django_db


def load(tmp_path, data, *options: str) -> str:
    path = tmp_path / f"{data.get('slug', 'study')}.json"
    path.write_text(json.dumps(data))
    out = StringIO()
    call_command("loadstudy", str(path), *options, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("kind", ["likert", "ranking", "plausibility", "simulation-pairwise"])
def test_sample_files_load_with_examples_and_faq(tmp_path, example_study_file, kind):
    data = example_study_file(kind)
    assert "created" in load(tmp_path, data)
    study = Study.objects.get(slug=data["slug"])
    assert study.items.count() == len(data["items"])
    assert len(study.examples) == len(data["examples"]) >= 1
    assert study.expected_seconds_per_page == data["expected_seconds_per_page"]


def test_the_simulation_sample_requires_its_exam(tmp_path, example_study_file):
    with pytest.raises(CommandError, match="qualification: No exam study 'demo-simulation-exam'"):
        load(tmp_path, example_study_file("simulation"))
    load(tmp_path, example_study_file("simulation-exam"))
    load(tmp_path, example_study_file("simulation"))
    study = Study.objects.get(slug="demo-simulation")
    assert study.qualification.study.slug == "demo-simulation-exam"
    assert (study.qualification.pass_mark, study.qualification.attempts_allowed) == (2, 2)
    assert not Item.objects.filter(study__slug="demo-simulation-exam", gold__isnull=True).exists()


def broken(example_study_file, kind, mutate):
    data = example_study_file(kind)
    mutate(data)
    return data


CASES = [
    ("likert", lambda d: d["items"][0]["payload"].pop("new_fact"), "items[0].payload.new_fact"),
    ("likert", lambda d: d["config"].update(scale={"points": 1}), "config.scale.points"),
    (
        "likert",
        lambda d: d["examples"][0]["answer"]["ratings"].update(edit_main=9),
        "examples[0].answer.ratings.edit_main",
    ),
    ("likert", lambda d: d["examples"][0].pop("explanation"), "examples[0].explanation"),
    ("likert", lambda d: d["faq"][1].pop("question"), "faq[1].question"),
    ("likert", lambda d: d.update(faq="read the instructions"), "faq:"),
    ("likert", lambda d: d.update(expected_seconds_per_page=-5), "expected_seconds_per_page"),
    ("ranking", lambda d: d["items"][2]["payload"]["passages"].pop(), "items[2].payload.passages"),
    ("ranking", lambda d: d["config"].update(show=4), "items[0].payload.passages"),
    ("ranking", lambda d: d["examples"][0]["payload"].pop("fact"), "examples[0].payload.fact"),
    (
        "ranking",
        lambda d: d["examples"][0]["answer"]["choices"]["fluency"].update(least="example-a"),
        "examples[0].answer.choices.fluency.least",
    ),
    (
        "plausibility",
        lambda d: d["items"][1]["payload"]["explanations"].clear(),
        "items[1].payload.explanations",
    ),
    (
        "simulation-pairwise",
        lambda d: d["items"][0]["payload"].pop("model_followup_answer"),
        "model_followup_answer",
    ),
    ("simulation-pairwise", lambda d: d.update(qualification="no-such-exam"), "qualification: No exam study"),
    ("simulation-exam", lambda d: d["exam"].update(pass_mark=4), "exam.pass_mark: Higher than the number"),
    ("simulation-exam", lambda d: d["exam"].update(attempts=0), "exam.attempts"),
    ("simulation-exam", lambda d: d["exam"].update(retries=1), "exam.retries"),
    (
        "simulation-exam",
        lambda d: d["items"][1].pop("gold"),
        "items[1].gold (external_id 'exam-stove'): Every exam item needs",
    ),
    ("simulation-exam", lambda d: d.update(public=True), "public: An exam is taken through"),
    ("simulation-exam", lambda d: d["items"][0].update(attention_check=True), "items[0].attention_check"),
]


@pytest.mark.parametrize(("kind", "mutate", "message"), CASES)
def test_bad_study_files_name_the_place_and_write_nothing(
    tmp_path, example_study_file, kind, mutate, message
):
    with pytest.raises(CommandError) as exc:
        load(tmp_path, broken(example_study_file, kind, mutate))
    assert message in str(exc.value)
    assert Study.objects.count() == 0 and Item.objects.count() == 0 and Exam.objects.count() == 0


def test_an_exam_cannot_require_an_exam_or_lose_its_block_while_required(tmp_path, example_study_file):
    exam = example_study_file("simulation-exam")
    load(tmp_path, exam)
    load(tmp_path, example_study_file("simulation"))
    with pytest.raises(CommandError, match="An exam cannot itself require an exam"):
        load(tmp_path, {**exam, "qualification": "demo-simulation-exam", "slug": "second-exam"})
    without = {k: v for k, v in exam.items() if k != "exam"}
    with pytest.raises(CommandError, match="Studies require this exam"):
        load(tmp_path, without, "--update")
    assert Exam.objects.get().study.slug == "demo-simulation-exam"


def test_reloading_a_study_replaces_its_examples_and_faq(tmp_path, example_study_file):
    data = example_study_file("likert")
    load(tmp_path, data)
    data["faq"] = data["faq"][:1]
    data.pop("examples")
    load(tmp_path, data, "--update")
    study = Study.objects.get()
    assert len(study.faq) == 1 and study.examples == []


def test_loaddemo_loads_every_survey_kind_and_the_exam_first():
    out = StringIO()
    call_command("loaddemo", stdout=out)
    kinds = set(Study.objects.values_list("kind", flat=True))
    assert {"claim", "likert", "ranking", "simulation", "plausibility"} <= kinds
    assert out.getvalue().splitlines()[0].startswith("demo study demo-simulation-exam")
    assert Study.objects.get(slug="demo-simulation").qualification is not None
