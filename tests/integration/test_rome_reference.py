"""The released ROME human evaluation, imported as a ranking study, gives the authors'
per-system MOST / LEAST counts.

The expected counts are computed here straight from the raw files, independently of the
converter: for each of the 15 analysed participants and each of their 10 pages, the letter
chosen in the form is looked up among that page's passage labels. The ranking kind is
built on another branch, so the converted study and answers are stored through the ORM
exactly as ``loadstudy`` and ``importresponses`` would store them; once the kind lands, the
two commands replace ``store``.
"""

import csv
import json
from collections import Counter

import pytest

from scoring.models import Report
from scoring.services import compute_study_reports
from tests.reference.rome import convert, reference_dir
from tests.report_data import add_items, add_responses, make_study

pytestmark = pytest.mark.django_db

SYSTEMS = ("FT_L", "GPT-2 XL", "ROME")


def authors_counts() -> Counter:
    """(criterion, MOST/LEAST, system) → times chosen, read from the released files."""
    folder = reference_dir()
    truth = json.loads((folder / "ground_truth_0.json").read_text(encoding="utf-8"))
    with (folder / "anon_responses.csv").open(encoding="utf-8", newline="") as handle:
        form = {row[1].strip(): row for row in csv.reader(handle)}
    counts = Counter()
    for participant in truth:
        answers = form[participant["participant"]]
        for page in range(1, 11):
            label = {x: participant[f"page_{page}_passage_{x.lower()}_label"] for x in "ABC"}
            first = 2 + (page - 1) * 4
            counts["consistency", "most", label[answers[first]]] += 1
            counts["consistency", "least", label[answers[first + 1]]] += 1
            counts["fluency", "most", label[answers[first + 2]]] += 1
            counts["fluency", "least", label[answers[first + 3]]] += 1
    return counts


def store(study_file: dict, lines: list[dict]):
    fields = {k: study_file[k] for k in ("title", "status", "annotations_per_item", "items_per_session")}
    study = make_study("ranking", slug=study_file["slug"], config=study_file["config"], **fields)
    add_items(study, study_file["items"])
    add_responses(
        study,
        [
            {
                "participant": line["participant"],
                "item": line["item"],
                "answer": line["answer"],
                "display_order": {"shown": line["answer"]["shown"]},
                "seconds": None,
            }
            for line in lines
        ],
    )
    return study


def test_converter_keeps_the_design_of_the_study():
    study_file, lines = convert()
    assert len(study_file["items"]) == 50 and len(lines) == 150
    assert set(Counter(line["item"] for line in lines).values()) == {3}
    assert set(Counter(line["participant"] for line in lines).values()) == {10}
    assert all(sorted(line["answer"]["shown"]) == list(SYSTEMS) for line in lines)


def test_reports_reproduce_the_authors_counts():
    expected = authors_counts()
    study = store(*convert())
    compute_study_reports(study)
    rows = Report.objects.filter(study=study, population="all")
    got = Counter()
    for report in rows.filter(metric__in=["ranking.most", "ranking.least", "ranking.middle"]):
        got[report.group["criterion"], report.metric.split(".")[1], report.group["system"]] = report.value
        assert report.n == 150  # every system is on every page
    for criterion in ("consistency", "fluency"):
        for system in SYSTEMS:
            for choice in ("most", "least"):
                assert got[criterion, choice, system] == expected[criterion, choice, system]
            middle = 150 - expected[criterion, "most", system] - expected[criterion, "least", system]
            assert got[criterion, "middle", system] == middle
    # what the authors concluded: ROME is most consistent with the taught fact, FT+L next,
    # and ROME loses fluency
    bws = {(r.group["criterion"], r.group["system"]): r.value for r in rows.filter(metric="ranking.bws")}
    assert bws["consistency", "ROME"] > bws["consistency", "FT_L"] > bws["consistency", "GPT-2 XL"]
    assert bws["fluency", "ROME"] == min(bws[("fluency", s)] for s in SYSTEMS)
    alpha = rows.get(
        metric="agreement.krippendorff_alpha", group={"question": "consistency", "level": "ordinal"}
    )
    assert alpha.details["units"] == 150  # 50 cases × 3 systems, each ranked by 3 people
