"""A participant's steps through the sample qualification exam (``docs/examples/
simulation-exam.json``), over HTTP: find a question's form, answer every question."""

import re

from annotation.models import Assignment

GOLD = ["yes", "not_helpful", "yes"]  # the sample exam's gold answers, in the file's order


def exam_action(html: str) -> str:
    match = re.search(r'action="(/s/[\w-]+/exam/a/\d+/)"', html)
    assert match, html
    return match.group(1)


def file_position(action: str) -> int:
    """The 0-based place in the exam file of the item an exam form asks (attempts shuffle
    the items)."""
    item = Assignment.objects.select_related("item").get(pk=int(action.rstrip("/").rpartition("/")[2])).item
    return list(item.study.items.order_by("id").values_list("id", flat=True)).index(item.pk)


def take_exam(client, slug: str, html: str, answers: list[str]) -> str:
    """Answer every question of an attempt; ``answers`` in the file's order of the items."""
    for number in range(1, len(answers) + 1):
        assert f"Question {number} of 3" in html
        action = exam_action(html)
        client.post(action, {"choice": answers[file_position(action)]})
        html = client.get(f"/s/{slug}/exam/", follow=True).content.decode()
    return html
