"""Readable dashboard tables: a plain p column, undefined tests saying why, each pair once,
categories in scale order, percentages as percentages, counts that agree, no broken plots."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone

from scoring.models import Report
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db


def stored(study, rows: list[tuple]) -> None:
    """Report rows in the order a builder writes them: (metric, group, value, n, details)."""
    now = timezone.now()
    for metric, group, value, n, details in rows:
        Report.objects.create(
            study=study, metric=metric, group=group, value=value, n=n, details=details,
            population="all", computed_at=now, fingerprint={"responses": 20},
        )  # fmt: skip


def table(html: str, title: str) -> str:
    start = html.index(title)
    return html[start : html.index("</table>", start)]


def cells(row_html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[dh][^>]*>.*?</t[dh]>", row_html, re.S)]


def test_a_test_table_has_a_p_column_and_an_undefined_test_says_why(client, researcher):
    study = StudyFactory(kind="claim", owner=researcher)
    reason = "needs two or more systems and two or more labels"
    test = {"statistic": 6.2, "dof": 2}
    stored(study, [("progress.responses", {}, 16, 16, {"attention_checks": 4}),
                   ("progress.participants", {}, 5, 20, {}),
                   ("claim.chi_square", {}, None, 16, {"reason": reason}),
                   ("claim.chi_square", {"claim_type": "x"}, 0.0123, 16, test)])  # fmt: skip
    html = client.get(f"/research/s/{study.slug}/dashboard/").content.decode()
    chi = table(html, "Does the label depend on the system?")
    assert cells(chi.split("</tr>")[0]) == ["p", "statistic", "dof"]
    assert f"undefined: {reason}" in chi
    assert "16 answers to items, plus 4 attention-check pages" in html
    assert "from 20 responses (4 of them attention-check pages, counted apart)" in html


def test_each_pair_once_from_the_winners_side_with_holm_p(client, researcher):
    study = StudyFactory(kind="ranking", owner=researcher)
    rows = []
    for system, over, wins, losses in (
        ("A", "B", 30, 10),
        ("B", "A", 10, 30),
        ("A", "C", 5, 25),
        ("C", "A", 25, 5),
    ):
        details = {"losses": losses, "win_rate": wins / (wins + losses), "p_value": 0.002, "p_holm": 0.004}
        rows.append(
            ("ranking.wins", {"criterion": "fluency", "system": system, "over": over}, wins, 40, details)
        )
    stored(study, rows)
    html = client.get(f"/research/s/{study.slug}/dashboard/").content.decode()
    wins = table(html, "Pairwise wins").split("</tr>")
    assert cells(wins[0])[-2:] == ["p", "p (Holm-adjusted)"]
    body = [cells(r) for r in wins[1:] if "<td" in r]
    assert [row[:4] for row in body] == [["fluency", "A", "B", "30"], ["fluency", "C", "A", "25"]]


def test_categories_in_scale_order_and_percent_as_percent(client, researcher):
    study = StudyFactory(kind="plausibility", owner=researcher)
    rows = [("plausibility.share", {"explanation": "e1", "rating": r}, v, 10, {}) for r, v in
            (("yes", 0.5), ("moderate", 0.3), ("no", 0.2))]  # fmt: skip
    rows.append(("agreement.percent", {"question": "rating", "level": "ordinal"}, 0.839, 12, {}))
    stored(study, rows)
    html = client.get(f"/research/s/{study.slug}/dashboard/").content.decode()
    shares = [
        cells(r)[1] for r in table(html, "Rating shares per explanation").split("</tr>")[1:] if "<td" in r
    ]
    assert shares == ["yes", "moderate", "no"]
    assert "83.9%" in table(html, "Agreement between annotators")


def test_an_undefined_plot_shows_its_reason_not_an_image(client, researcher):
    study = StudyFactory(kind="claim", owner=researcher)
    stored(study, [("agreement.krippendorff_alpha", {"question": "label", "level": "nominal"}, None, 3,
                    {"reason": "no unit has two answers"})])  # fmt: skip
    html = client.get(f"/research/s/{study.slug}/dashboard/").content.decode()
    assert "alpha.svg" not in html
    assert "Nothing to plot: no unit has two answers." in html


def test_an_undefined_figure_is_marked_apart_from_figures_so_it_wraps_small(client, researcher):
    """A figure with its interval stays on one line (CSS on td.num); a reason wraps (td.undefined)."""
    study = StudyFactory(kind="claim", owner=researcher)
    reason = "needs two or more systems and two or more labels"
    stored(study, [("progress.responses", {}, 16, 16, {}),
                   ("claim.chi_square", {}, None, 16, {"reason": reason}),
                   ("claim.chi_square", {"claim_type": "x"}, 0.0123, 16, {"dof": 2})])  # fmt: skip
    chi = table(client.get(f"/research/s/{study.slug}/dashboard/").content.decode(), "Does the label depend")
    assert re.search(rf'<td class="num undefined"[^>]*>undefined: {reason}</td>', chi)
    assert '<td class="num">—</td>' in chi  # an empty figure is not a reason
