"""Nothing a participant should guess reaches the browser before the answer: not which
system wrote a ranking passage, not the model's real follow-up answer, not gold answers.

Two checks through the HTTP layer: every response a participant receives (pages, error
pages, redirects, headers) is searched for the hidden values; and pages built from items
that differ only in a hidden value are byte-for-byte the same once tokens and ids are
normalised, so nothing derived from the hidden value slips through either.
"""

import copy
import re

import pytest
from django.test import Client

from annotation.services.authoring.studies import load_study_file
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.flow import task_action

pytestmark = pytest.mark.django_db
SYSTEMS = {"ROME": "sys-alpha-31", "FT_L": "sys-beta-47", "GPT-2 XL": "sys-gamma-59"}


class Recorder:
    """A test client that follows redirects itself and keeps every response it received."""

    def __init__(self):
        self.client = Client()
        self.seen: list[str] = []

    def request(self, method: str, url: str, data=None):
        response = getattr(self.client, method)(url, data or {})
        self.keep(response)
        while response.status_code in (301, 302):
            response = self.client.get(response["Location"])
            self.keep(response)
        return response

    def keep(self, response) -> None:
        headers = "\n".join(f"{k}: {v}" for k, v in response.headers.items())
        self.seen.append(headers + "\n" + response.content.decode())


def ranking_file(example_study_file) -> dict:
    data = example_study_file("ranking")
    for item in data["items"]:
        for passage in item["payload"]["passages"]:
            passage["system"] = SYSTEMS[passage["system"]]
    return data


def test_ranking_pages_never_name_a_system(example_study_file):
    study = load_study_file(ranking_file(example_study_file)).study
    hidden = [*SYSTEMS.values(), "example-a", "example-b", "example-c"]
    visitor = Recorder()
    html = visitor.request(
        "get", f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('leak-test')}"
    ).content.decode()
    assert "Worked example" in html
    html = visitor.request(
        "post", f"/s/{study.slug}/consent/?PROLIFIC_PID={prolific_id('leak-test')}"
    ).content.decode()
    visitor.request("get", f"/s/{study.slug}/instructions/")
    form = {"consistency-most": "A", "consistency-least": "B", "fluency-most": "C", "fluency-least": "A"}
    for _ in range(3):
        assert visitor.request("post", task_action(html), {**form, "fluency-least": "C"}).status_code == 400
        assert (
            visitor.request("post", task_action(html), {**form, "consistency-most": "Q"}).status_code == 400
        )
        html = visitor.request("post", task_action(html), form).content.decode()
    assert "DEMO-RANK-9P3" in html
    assert len(visitor.seen) > 12
    for text in visitor.seen:
        assert not [name for name in hidden if name in text]


def normalised(html: str, slug: str) -> str:
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", html)
    html = re.sub(r"/a/\d+/", "/a/N/", html)
    return html.replace(slug, "SLUG")


def first_page_and_error(data: dict) -> tuple[str, str]:
    """A fresh participant's first page, and the page they get back for an empty form."""
    study = load_study_file(data).study
    client = Client()
    client.get(f"/s/{study.slug}/")
    page = client.post(f"/s/{study.slug}/consent/", follow=True).content.decode()
    error = client.post(task_action(page), {})
    assert error.status_code == 400
    return normalised(page, study.slug), normalised(error.content.decode(), study.slug)


def one_item_study(example_study_file, kind: str, slug: str, change) -> dict:
    data = example_study_file(kind)
    data.update(slug=slug, items_per_session=1, items=[copy.deepcopy(data["items"][0])])
    change(data["items"][0])
    return data


HIDDEN = {
    "model_followup_answer": (
        "simulation-pairwise",
        lambda item: item["payload"].update(model_followup_answer="response_1"),
        lambda item: item["payload"].update(model_followup_answer="response_2"),
    ),
    "simulation gold": (
        "simulation-pairwise",
        lambda item: item.update(gold={"choice": "either"}),
        lambda item: item.update(gold={"choice": "response_1"}),
    ),
    "likert gold": (
        "likert",
        lambda item: item.update(gold={"ratings": {"edit_main": 1}}),
        lambda item: item.update(gold={"ratings": {"edit_main": 7, "naturalness": 2}}),
    ),
    "plausibility gold": (
        "plausibility",
        lambda item: one_explanation(item, {"ratings": {"gpt-4/cot": "yes"}}),
        lambda item: one_explanation(item, {"ratings": {"gpt-4/cot": "no"}}),
    ),
}


def one_explanation(item: dict, gold: dict) -> None:
    """Explanations are shuffled per page; with one, the pages can be compared whole."""
    del item["payload"]["explanations"][1:]
    item["gold"] = gold


@pytest.mark.parametrize("hidden", list(HIDDEN))
def test_pages_do_not_depend_on_hidden_values(example_study_file, hidden):
    kind, one, other = HIDDEN[hidden]
    first = first_page_and_error(one_item_study(example_study_file, kind, "hidden-one", one))
    second = first_page_and_error(one_item_study(example_study_file, kind, "hidden-two", other))
    assert first[0] == second[0]
    assert first[1] == second[1]
    assert "model_followup_answer" not in first[0] and "gold" not in first[0].lower()


def exam_page(example_study_file, suffix: str, golds: list[str]) -> str:
    exam = example_study_file("simulation-exam")
    exam["slug"] = f"exam-{suffix}"
    # Every attempt asks the items in its own (seeded) order, so the first question differs
    # between the two exams: every item asks the same thing, and only the gold differs.
    for item, gold in zip(exam["items"], golds, strict=True):
        item["payload"] = copy.deepcopy(exam["items"][0]["payload"])
        item["gold"] = {"choice": gold}
    load_study_file(exam)
    main = example_study_file("simulation")
    main.update(slug=f"main-{suffix}", qualification=f"exam-{suffix}")
    load_study_file(main)
    client = Client()
    client.get(f"/s/main-{suffix}/")
    html = client.post(f"/s/main-{suffix}/consent/", follow=True).content.decode()
    assert "Qualification quiz" in html
    return re.sub(r"(main|exam)-" + suffix, "SLUG", normalised(html, f"main-{suffix}"))


def test_exam_questions_do_not_depend_on_their_gold(example_study_file):
    one = exam_page(example_study_file, "one", ["yes", "not_helpful", "yes"])
    other = exam_page(example_study_file, "two", ["not_helpful", "no", "no"])
    assert one == other
