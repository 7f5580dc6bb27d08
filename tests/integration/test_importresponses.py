"""importresponses: validated by the kind, idempotent per (participant, item), all or nothing."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Assignment, Enrollment, Item, Participant, Response

pytestmark = pytest.mark.django_db


def run(tmp_path, slug, lines, *extra) -> str:
    path = tmp_path / "responses.jsonl"
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines))
    out = StringIO()
    call_command("importresponses", slug, str(path), *extra, stdout=out)
    return out.getvalue()


LINES = [
    {"participant": "ann", "item": "c0", "answer": {"label": "supports", "evidence": [0]}},
    {"participant": "ann", "item": "c1", "answer": {"label": "neutral"}},
    {
        "participant": "bob",
        "item": "c0",
        "answer": {"label": "contradicts", "evidence": [1]},
        "shown_at": "2024-05-01T10:00:00Z",
        "answered_at": "2024-05-01T10:00:42Z",
    },
]


def test_import_creates_responses_and_is_idempotent(tmp_path, make_claim_study):
    study = make_claim_study()
    assert "Imported 3 responses" in run(tmp_path, study.slug, LINES)
    assert "Imported 0 responses" in run(tmp_path, study.slug, LINES)
    assert Response.objects.count() == 3
    bob = Response.objects.get(participant__platform_worker_id="bob")
    assert bob.duration_seconds == 42 and bob.imported and bob.correct is False
    assert Participant.objects.get(platform_worker_id="ann").source == "lab"
    assert Enrollment.objects.get(participant__platform_worker_id="ann").answered_count == 2
    assert Item.objects.get(external_id="c0").slots_taken == 2
    assert Assignment.objects.filter(status="answered").count() == 3


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (
            {"participant": "x", "item": "nope", "answer": {"label": "neutral"}},
            "line 2: item (item 'nope'): No item",
        ),
        ({"participant": "x", "item": "c2", "answer": {"label": "sideways"}}, "line 2: answer.label"),
        (
            {"participant": "x", "item": "c2", "answer": {"label": "supports", "evidence": [8]}},
            "answer.evidence",
        ),
        ({"item": "c2", "answer": {"label": "neutral"}}, "line 2: participant"),
        ("{not json", "line 2: Not valid JSON"),
        (
            {"participant": "ann", "item": "c0", "answer": {"label": "neutral"}},
            "Repeats the participant and item of line 1",
        ),
    ],
)
def test_any_bad_line_rejects_the_whole_file(tmp_path, make_claim_study, bad, message):
    study = make_claim_study()
    with pytest.raises(CommandError) as exc:
        run(tmp_path, study.slug, [LINES[0], bad])
    assert message in str(exc.value)
    assert Response.objects.count() == 0 and Participant.objects.count() == 0


def test_unknown_study(tmp_path):
    with pytest.raises(CommandError, match="No study"):
        run(tmp_path, "missing", LINES)


MESSY = [
    {"participant": "ann", "item": "c0", "answer": {"label": "supports", "evidence": [0]}},
    {"participant": "bob", "item": "c0", "answer": {"label": "contradicts", "evidence": []}},
    {"participant": "cat", "item": "c1", "answer": {"label": "contradicts"}},
]


def test_a_label_without_its_evidence_fails_the_whole_file_by_default(tmp_path, make_claim_study):
    study = make_claim_study()
    with pytest.raises(CommandError, match=r"line 2: answer.evidence"):
        run(tmp_path, study.slug, MESSY)
    assert not Response.objects.exists()


def test_allow_incomplete_imports_it_marked_and_out_of_the_evidence_figures(tmp_path, make_claim_study):
    from scoring.models import Report
    from scoring.services import compute_study_reports

    study = make_claim_study()
    out = run(tmp_path, study.slug, MESSY, "--allow-incomplete")
    assert "Imported 3 responses" in out and "2 without evidence" in out
    bob = Response.objects.get(participant__platform_worker_id="bob")
    assert bob.incomplete and bob.answer == {"label": "contradicts", "evidence": []}
    assert bob.score_details == {"missing": ["evidence"]}  # no evidence F1 against the gold
    assert not Response.objects.get(participant__platform_worker_id="ann").incomplete
    compute_study_reports(study)
    reports = Report.objects.filter(study=study, population="all")
    # the per-question row (the per-system rows group it further)
    (label,) = [
        row
        for row in reports.filter(metric="agreement.krippendorff_alpha", group__question="label")
        if "system" not in row.group
    ]
    assert label.n == 2  # both answers to c0 (the unit of two raters) count for the label
    evidence = reports.filter(metric="agreement.krippendorff_alpha", group__question="evidence").first()
    assert evidence is None or evidence.value is None  # ann alone has evidence: nothing to agree on
    assert reports.get(metric="claim.label_share", group={"label": "contradicts"}).n == 3


def test_allow_incomplete_still_refuses_what_is_wrong_not_missing(tmp_path, make_claim_study):
    study = make_claim_study()
    bad = [*MESSY, {"participant": "dan", "item": "c2", "answer": {"label": "sideways"}}]
    with pytest.raises(CommandError, match=r"line 4: answer.label"):
        run(tmp_path, study.slug, bad, "--allow-incomplete")
    assert not Response.objects.exists()
