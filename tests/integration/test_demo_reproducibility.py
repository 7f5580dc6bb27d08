"""Issue 42 on the demo studies: each one's report rows recomputed from its SQLite export
alone by docs/tools/reanalyse.py (equal to 1e-9), and its HEDS datasheet filled from its
record (at least 70%), as JSON and Markdown, saved with the study with the researcher's
own answers."""

import importlib.util
import json
import re
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Study
from annotation.services.analysis.adjudication import adjudicate
from annotation.services.exports.export import export_study
from scoring.datasheet import FILLED_TARGET, as_markdown, datasheet_of
from scoring.models import Datasheet, Report
from scoring.services import compute_study_reports
from workers.demo.studies import demo_study_files, load_demo_study

SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "tools" / "reanalyse.py"
spec = importlib.util.spec_from_file_location("reanalyse", SCRIPT)
REANALYSE = sys.modules["reanalyse"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(REANALYSE)

pytestmark = pytest.mark.django_db


def test_every_demo_study_reproduces_from_its_export_and_fills_most_of_its_datasheet(
    tmp_path, admin_client, admin_user
):
    shares, reproduced = {}, {}
    for _, data in demo_study_files():
        study = load_demo_study(data).study
        slug = study.slug
        if slug == "demo-claims":  # an adjudicated answer: the adjudicated population too
            item = study.items.filter(is_attention_check=False).order_by("id").first()
            answer = {"label": "contradicts", "evidence": [0]}
            adjudicate(study=study, item=item, answer=answer, note="", user=admin_user)
            compute_study_reports(study)
            assert Report.objects.filter(study=study, population="adjudicated").exists()
        export = export_study(study, fmt="sqlite", path=tmp_path / f"{slug}.zip")
        result = REANALYSE.reanalyse(export.path)
        reproduced[slug] = (result.equal, result.rows)
        assert result.reproduced, (slug, result.differing[:2], result.missing[:2], result.extra[:2])
        printed = StringIO()  # the command prints each study's share, as a researcher sees it
        call_command("datasheet", slug, "--format", "json", stdout=StringIO(), stderr=printed)
        shares[slug] = float(
            re.match(rf"{slug}: ([0-9.]+)% filled from the study's record", printed.getvalue())[1]
        )
    low = {slug: share for slug, share in shares.items() if share < FILLED_TARGET * 100}
    missing = {slug: datasheet_of(Study.objects.get(slug=slug))["to_answer"] for slug in low}
    assert not low, f"filled shares: {shares}; to answer: {missing}"
    assert len(shares) == 10
    assert sum(rows for _, rows in reproduced.values()) > 1000, reproduced  # the seeded studies have figures

    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"5.1": "Approved by the faculty's ethics board (ref. 42)."}))
    out, err = StringIO(), StringIO()
    call_command(
        "datasheet", "demo-likert", "--format", "json", "--answers", str(answers), stdout=out, stderr=err
    )
    sheet = json.loads(out.getvalue())
    by_key = {entry["key"]: entry for entry in sheet["questions"]}
    assert by_key["5.1"] == {
        **by_key["5.1"],
        "answer": "Approved by the faculty's ethics board (ref. 42).",
        "from": "researcher",
    }
    assert by_key["3.2.1"]["answer"] == "3" and by_key["3.2.1"]["from"] == "record"
    assert by_key["4.3.3:edit_main"]["answer"] == "7"  # a 7-point scale
    assert by_key["4.3.11:edit_main"]["answer"].startswith("Krippendorff's alpha ")
    assert "5.1" not in sheet["to_answer"] and "5.3" in sheet["to_answer"]
    assert f"{sheet['filled_from_record']:.1%} filled from the study's record" in err.getvalue()
    saved = Datasheet.objects.get(study__slug="demo-likert")
    assert saved.answers == {"5.1": "Approved by the faculty's ethics board (ref. 42)."}
    assert saved.sheet["questions"] == sheet["questions"]
    markdown = as_markdown(sheet)
    assert "**5.1** Did a research ethics committee approve" in markdown
    assert "_To answer (the record cannot say)._" in markdown

    overview = admin_client.get("/research/s/demo-likert/").content.decode()
    assert 'id="datasheet-md"' in overview
    download = admin_client.get("/research/s/demo-likert/datasheet.md")
    assert download["Content-Disposition"] == 'attachment; filename="demo-likert-datasheet.md"'
    assert "Approved by the faculty's ethics board (ref. 42)." in download.content.decode()
    assert admin_client.get("/research/s/demo-likert/datasheet.pdf").status_code == 404
    page = admin_client.get("/research/s/demo-likert/datasheet/").content.decode()
    assert 'name="answer:5.3"' in page and "Filled from the study's record" in page
    saved = admin_client.post(
        "/research/s/demo-likert/datasheet/", {"answer:5.3": "No special-category data."}
    )
    assert saved.status_code == 302
    assert Datasheet.objects.get(study__slug="demo-likert").answers["5.3"] == "No special-category data."
    refused = admin_client.post("/research/s/demo-likert/datasheet/", {"answer:9.9": "?"})
    assert refused.status_code == 400 and "No such question" in refused.content.decode()
