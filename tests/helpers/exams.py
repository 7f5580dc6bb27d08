"""A participant's steps through the sample qualification exam (``docs/examples/
simulation-exam.json``), over HTTP: find a question's form, answer every question."""

import re

GOLD = ["yes", "not_helpful", "yes"]  # the sample exam's gold answers, in order


def exam_action(html: str) -> str:
    match = re.search(r'action="(/s/[\w-]+/exam/a/\d+/)"', html)
    assert match, html
    return match.group(1)


def take_exam(client, slug: str, html: str, answers: list[str]) -> str:
    for number, choice in enumerate(answers, start=1):
        assert f"Question {number} of 3" in html
        client.post(exam_action(html), {"choice": choice})
        html = client.get(f"/s/{slug}/exam/", follow=True).content.decode()
    return html
