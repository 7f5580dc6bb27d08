"""The released ROME human evaluation, converted by docs/tools/rome_to_ranking.py and
loaded with ``loadstudy`` + ``importresponses``, gives the authors' per-system MOST / LEAST
counts in the stored reports.

The expected counts are computed here straight from the raw files, independently of the
converter: for each of the 15 analysed participants and each of their 10 pages, the letter
chosen in the form is looked up among that page's passage labels.
"""

import csv
import json
import subprocess
import sys
from collections import Counter
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Response, Study
from scoring.models import Report
from scoring.services import compute_study_reports

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
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


def reference_dir() -> Path:
    """The released files, copied unchanged into tests/data (see the README there)."""
    return ROOT / "tests" / "data" / "rome-human-eval"


@pytest.fixture
def imported(tmp_path) -> Study:
    """The release converted by the documented tool, then loaded by the two commands."""
    converter = ROOT / "docs" / "tools" / "rome_to_ranking.py"
    command = [sys.executable, str(converter), str(reference_dir()), str(tmp_path)]
    subprocess.run(command, capture_output=True, text=True, check=True)
    call_command("loadstudy", str(tmp_path / "rome-study.json"), stdout=StringIO())
    call_command(
        "importresponses", "rome-human-eval", str(tmp_path / "rome-responses.jsonl"), stdout=StringIO()
    )
    return Study.objects.get(slug="rome-human-eval")


def test_import_keeps_the_design_of_the_study(imported):
    responses = list(Response.objects.filter(study=imported).select_related("participant", "item"))
    assert imported.items.count() == 50 and len(responses) == 150
    assert set(Counter(r.item.external_id for r in responses).values()) == {3}
    assert set(Counter(r.participant.platform_worker_id for r in responses).values()) == {10}
    assert all(sorted(r.answer["shown"]) == list(SYSTEMS) for r in responses)


def test_reports_reproduce_the_authors_counts(imported):
    expected = authors_counts()
    study = imported
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
