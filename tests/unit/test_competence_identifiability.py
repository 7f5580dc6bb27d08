"""When MACE's and Dawid–Skene's competences mean anything (adversarial review 3, T11): a
single annotator, one shared item or answers that never disagree gave figures such as
Dawid–Skene 0.99999999999 that read like findings; ``competence_identifiability`` decides,
and the reports then store "not identifiable" with the reason instead of a number."""

from scoring.reports.competence import competence_rows
from stats.competence import Answers, competence_identifiability
from tests.unit.test_competence_rows import study


def answers(rows):
    unit, annotator, label = zip(*rows, strict=True)
    return Answers.of(unit, annotator, label)


def test_one_annotator_is_not_identifiable():
    found = competence_identifiability(answers([(u, 0, u % 3) for u in range(30)]))
    assert not found.identifiable and "one annotator only" in found.reason
    assert found.reason.startswith("not identifiable")


def test_too_few_shared_items_are_not_identifiable():
    # two annotators, each item answered once, except one answered by both
    rows = [(u, u % 2, u % 3) for u in range(10)] + [(0, 1, 2)]
    found = competence_identifiability(answers(rows))
    assert not found.identifiable and "1 items answered by two annotators or more" in found.reason


def test_annotators_who_never_disagree_are_not_identifiable():
    rows = [(u, a, u % 3) for u in range(10) for a in range(3)]
    found = competence_identifiability(answers(rows))
    assert not found.identifiable and "never disagree" in found.reason


def test_shared_items_with_a_disagreement_are_identifiable_and_a_loner_is_not():
    rows = [(u, a, u % 3) for u in range(12) for a in range(3)] + [(0, 1, 1)]  # one disagreement
    rows += [(20, 3, 0), (21, 3, 1)]  # annotator 3 answers items nobody else did
    found = competence_identifiability(answers(rows))
    assert found.identifiable
    assert found.annotators[:3] == (None, None, None)
    assert "shares no item with another annotator" in found.annotators[3]


def test_an_annotator_with_too_few_shared_answers_gets_the_reason_not_a_number():
    rows = [(u, a, u % 3) for u in range(12) for a in range(3)] + [(0, 1, 1)]
    rows += [(u, 3, (u + 1) % 3) for u in range(9)]  # annotator 3: nine answers, one short
    found = competence_identifiability(answers(rows))
    assert found.identifiable and found.annotators[:3] == (None, None, None)
    assert found.annotators[3] == ("too few answers: 9 on items others also answered, at least 10 are needed")


def test_the_reports_store_the_reason_not_a_number_for_a_single_annotator():
    data = study().population("passed").analysed()
    one = data.responses["participant"] == 0
    alone = competence_rows(data.where(one))
    figures = [r for r in alone if r.metric in ("competence.mace", "competence.dawid_skene")]
    assert figures and all(r.value is None for r in figures)
    assert all(r.details["reason"].startswith("not identifiable: one annotator only") for r in figures)
    fitted = [r for r in alone if r.metric == "competence.label" and r.group["model"] != "median"]
    assert not fitted  # nothing fitted, nothing labelled (a scale's median needs no model)
    both = [r for r in competence_rows(data) if r.metric == "competence.mace"]
    # three annotators are identifiable; four answers each are too few for a figure
    assert both and all(r.details["reason"].startswith("too few answers: 4 ") for r in both)
