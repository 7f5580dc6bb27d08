"""Issue 42: once a study's answers span several versions, the reports are also computed for
each version's answers alone, chosen on the dashboard and in the API as populations are."""

import importlib.util
import sys
from io import StringIO
from math import nan
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from django.core.management import call_command

from annotation.models import Response
from annotation.services.exports.export import export_study
from scoring.models import Report
from scoring.services import split_versions
from tests.conftest import logged_in
from tests.helpers.reports import game_study

pytestmark = pytest.mark.django_db


def reanalysis():
    script = Path(__file__).resolve().parents[2] / "docs" / "tools" / "reanalyse.py"
    spec = importlib.util.spec_from_file_location("reanalyse", script)
    module = sys.modules["reanalyse"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_answers_of_two_versions_get_figures_of_their_own(owner, tmp_path):
    study = game_study(owner=owner)
    Response.objects.filter(study=study, item__external_id__in=["A", "B"]).update(study_version=1)
    Response.objects.filter(study=study).exclude(item__external_id__in=["A", "B"]).update(study_version=2)
    call_command("computereports", study.slug, stdout=StringIO(), stderr=StringIO())
    counted = {
        version: Report.objects.get(
            study=study, metric="progress.responses", population="all", version=version
        ).n
        for version in (None, 1, 2)
    }
    assert counted == {None: 9, 1: 6, 2: 3}
    exact = Report.objects.filter(study=study, metric="boundary.exact_rate", population="all", group={})
    by_version = {row.version: row.value for row in exact}
    assert by_version[None] == pytest.approx(4 / 9)
    assert by_version[1] == pytest.approx(3 / 6)  # ann on A; bob and cat on B
    assert by_version[2] == pytest.approx(1 / 3)  # ann on C

    page = logged_in(owner)
    dashboard = page.get(f"/research/s/{study.slug}/dashboard/?population=all&version=2").content.decode()
    assert 'id="version-filter"' in dashboard and "from 9 responses" in dashboard
    assert page.get(f"/research/s/{study.slug}/dashboard/?version=x").status_code == 404
    api = page.get(f"/api/v1/studies/{study.slug}/reports/?version=1&metric=progress.responses").json()
    assert [(row["population"], row["version"], row["n"]) for row in api["results"]] == [
        ("all", 1, 6),
        ("passed", 1, 6),
    ]
    # every row, each version's too, recomputed from the export alone (docs/tools/reanalyse.py)
    result = reanalysis().reanalyse(export_study(study, fmt="sqlite", path=tmp_path / "roft.zip").path)
    assert result.reproduced and result.equal == Report.objects.filter(study=study).count()


@pytest.mark.parametrize(
    ("versions", "split"),
    [([1, 1], []), ([nan, nan], []), ([], []), ([1, 2, 2], [1, 2]), ([nan, 3], [3]), ([2, nan, 1], [1, 2])],
)
def test_the_versions_split_are_those_answered_once_answers_span_several(versions, split):
    data = SimpleNamespace(responses={"version": np.array(versions, dtype=float)})
    assert split_versions(data) == split
