"""Reports computed from PostgreSQL for each kind, stored per population, replaced whole."""

from collections.abc import Iterator

import krippendorff
import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from annotation.models import Enrollment, Response, Study
from scoring.models import Report
from scoring.services import compute_study_reports, reports_are_stale, stale_live_studies, study_fingerprint
from tests.factories import AnsweredResponseFactory, ItemFactory, StudyFactory
from tests.helpers.module_data import rows_for_the_module
from tests.helpers.reports import GAME, PASSAGES, game_study, likert_study, points, simulation_study

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def game_rows(django_db_setup, django_db_blocker) -> Iterator[int]:
    """The RoFT game study with its answers (tests/helpers/reports.py), written once for the
    module (tests/helpers/module_data.py): its primary key."""
    with rows_for_the_module(django_db_blocker):
        yield game_study().pk


@pytest.fixture
def game(game_rows) -> Study:
    """The game study as written, read afresh for each test (which may change it)."""
    return Study.objects.get(pk=game_rows)


def reports(study, population="all") -> dict:
    rows = Report.objects.filter(study=study, population=population)
    return {(r.metric, tuple(sorted(r.group.items()))): r for r in rows}


def get(found: dict, metric: str, **group) -> Report:
    return found[(metric, tuple(sorted(group.items())))]


# --- the RoFT game ----------------------------------------------------------------------


def test_game_reports_match_the_hand_made_table(game):
    study = game
    compute_study_reports(study)
    found = reports(study)
    all_points = [points(g, PASSAGES[i][0]) for _, i, g in GAME]
    assert get(found, "boundary.mean_points").value == pytest.approx(np.mean(all_points))
    assert get(found, "boundary.mean_points").n == 9
    low, high = get(found, "boundary.mean_points").ci_low, get(found, "boundary.mean_points").ci_high
    assert low < np.mean(all_points) < high
    assert get(found, "boundary.exact_rate").value == pytest.approx(4 / 9)
    histogram = {
        r.group["distance"]: r.value for r in found.values() if r.metric == "boundary.distance_histogram"
    }
    assert histogram == {-6: 1, -1: 1, 0: 4, 2: 1, 4: 1, 7: 1}
    assert get(found, "boundary.pairwise_same").value == pytest.approx(1 / 7)
    assert get(found, "boundary.pairwise_within_one").value == pytest.approx(2 / 7)
    assert get(found, "boundary.mean_distance").value == pytest.approx(np.mean([0, 2, -1, 4, 0, 0, 0, -6, 7]))
    ctrl = [points(g, PASSAGES[i][0]) for _, i, g in GAME if PASSAGES[i][3] == "ctrl"]
    assert get(found, "boundary.mean_points", generator="ctrl").value == pytest.approx(np.mean(ctrl))
    high_p = [points(g, PASSAGES[i][0]) for _, i, g in GAME if PASSAGES[i][1] == 0.9]
    assert get(found, "boundary.mean_points", p=0.9).value == pytest.approx(np.mean(high_p))
    first_round = [
        points(g, PASSAGES[i][0])
        for (player, i, g) in GAME
        if (player, i) in {("ann", "A"), ("bob", "A"), ("cat", "A"), ("dan", "D")}
    ]
    assert get(found, "boundary.mean_points", order=1).value == pytest.approx(np.mean(first_round))
    assert get(found, "boundary.mean_points", category="stories").n == 3
    per_player = {p: np.mean([points(g, PASSAGES[i][0]) for q, i, g in GAME if q == p]) for p, _, _ in GAME}
    assert per_player["ann"] == pytest.approx(11 / 3)  # 5 + 1 + 5 over three rounds
    assert get(found, "boundary.player_top5_points").value == pytest.approx(max(per_player.values()))
    assert get(found, "boundary.player_median_points").value == pytest.approx(
        np.median(list(per_player.values()))
    )
    assert get(found, "progress.items_complete").value == 2  # A and B have 3 answers
    assert get(found, "progress.items_complete").n == 4
    assert get(found, "progress.participants").value == 4
    assert get(found, "progress.median_seconds_per_page").value == pytest.approx(20.0)
    alpha = get(found, "agreement.krippendorff_alpha", question="guess", level="interval")
    matrix = np.full((4, 4), np.nan)
    players, items = ["ann", "bob", "cat", "dan"], ["A", "B", "C", "D"]
    for player, item, guess in GAME:
        matrix[players.index(player), items.index(item)] = guess
    assert alpha.value == pytest.approx(krippendorff.alpha(matrix, level_of_measurement="interval"), abs=1e-9)


def test_populations_leave_out_exclusions_and_attention_failures(game):
    study = game
    failed = AnsweredResponseFactory.from_specs(
        study,
        [
            {
                "participant": "eve",
                "item": "check",
                "answer": {"guess": 3},
                "correct": False,
                "points": 0,
                "flagged": True,
            },
            {"participant": "eve", "item": "A", "answer": {"guess": 9}, "points": 0, "flagged": True},
        ],
    )
    assert len(failed) == 2
    Enrollment.objects.filter(study=study, participant__platform_worker_id="dan").update(excluded=True)
    compute_study_reports(study)
    everyone, passed = reports(study, "all"), reports(study, "passed")
    assert get(everyone, "progress.responses").value == 9  # 9 + eve's A − dan's D
    assert get(passed, "progress.responses").value == 8
    assert get(everyone, "progress.attention_failures").value == 1
    assert get(everyone, "progress.attention_failures").details["participants_failed"] == 1
    assert get(passed, "progress.attention_failures").value == 0
    assert get(everyone, "boundary.mean_points").n == 9
    kept = [points(g, PASSAGES[i][0]) for p, i, g in GAME if p != "dan"]
    assert get(passed, "boundary.mean_points").value == pytest.approx(np.mean(kept))
    assert get(everyone, "progress.participants").value == 4  # ann, bob, cat, eve


def test_reports_are_replaced_whole_with_the_fingerprint(game):
    study = game
    first = compute_study_reports(study)
    count = Report.objects.filter(study=study).count()
    assert count == first.rows and not reports_are_stale(study)
    assert Report.objects.filter(study=study).first().fingerprint == study_fingerprint(study)
    AnsweredResponseFactory.from_specs(
        study, [{"participant": "dan", "item": "A", "answer": {"guess": 3}, "points": 5}]
    )
    assert reports_are_stale(study) and study in stale_live_studies()
    compute_study_reports(study)
    assert (
        Report.objects.filter(study=study, metric="boundary.mean_points", group={}).count() == 2
    )  # one a population
    assert get(reports(study), "boundary.mean_points").n == 10
    assert not reports_are_stale(study)
    Enrollment.objects.filter(study=study, participant__platform_worker_id="dan").update(excluded=True)
    assert reports_are_stale(study)


def test_reading_costs_the_same_queries_whatever_the_number_of_responses():
    def queries_for(players: int) -> int:
        study = StudyFactory(kind="boundary", slug=f"size-{players}")
        ItemFactory.from_specs(
            study,
            [
                {"external_id": f"i{k}", "payload": {"boundary": 3, "p": 0.5, "category": "news"}}
                for k in range(5)
            ],
        )
        AnsweredResponseFactory.from_specs(
            study,
            [
                {
                    "participant": f"p{players}-{n}",
                    "item": f"i{k}",
                    "answer": {"guess": 1 + (n + k) % 6},
                    "score_details": {"order": k + 1},
                }
                for n in range(players)
                for k in range(5)
            ],
        )
        with CaptureQueriesContext(connection) as captured:
            compute_study_reports(study)
        return len(captured)

    # (from 13 annotators on, no pseudonyms are read for a pairwise kappa matrix). Twice the
    # players, answers and rounds: a query per one of them shows as well as at four times
    # (60 players built 225 more answers through the submission service, 40 % of the test).
    assert queries_for(15) == queries_for(30)


# --- Likert -----------------------------------------------------------------------------


def test_likert_means_paired_tests_and_alpha_per_question():
    study, rows = likert_study()
    compute_study_reports(study)
    found = reports(study)
    rome_edit = [r["answer"]["ratings"]["edit"] for r in rows if r["item"].startswith("ROME")]
    mean = get(found, "likert.mean", question="edit", system="ROME")
    assert mean.value == pytest.approx(np.mean(rome_edit)) and mean.n == len(rome_edit)
    assert mean.details["sd"] == pytest.approx(np.std(rome_edit, ddof=1))
    per_case = {
        s: [
            np.mean([r["answer"]["ratings"]["edit"] for r in rows if r["item"] == f"{s}-{c}"])
            for c in range(12)
        ]
        for s in ("ROME", "FT")
    }
    test = get(found, "likert.wilcoxon", question="edit", system="ROME", over="FT")
    # ties among the differences: the normal approximation, as SciPy computes it
    assert test.details["method"] == "asymptotic"
    expected = stats.wilcoxon(per_case["ROME"], per_case["FT"], alternative="two-sided", method="asymptotic")
    assert test.value == pytest.approx(expected.pvalue)
    assert test.n == 12 and test.value < 0.01
    # two-sided: the same p both ways; the direction is the difference's sign
    assert get(found, "likert.wilcoxon", question="edit", system="FT", over="ROME").value == test.value
    difference = get(found, "likert.difference", question="edit", system="ROME", over="FT")
    assert difference.value == pytest.approx(np.mean(per_case["ROME"]) - np.mean(per_case["FT"]))
    assert difference.ci_low <= difference.value <= difference.ci_high and difference.value > 0
    matrix = np.full((3, 24), np.nan)
    items = [f"{s}-{c}" for s in ("ROME", "FT") for c in range(12)]
    for r in rows:
        matrix[int(r["participant"][1]), items.index(r["item"])] = r["answer"]["ratings"]["edit"]
    for level in ("ordinal", "interval"):
        alpha = get(found, "agreement.krippendorff_alpha", question="edit", level=level)
        assert alpha.value == pytest.approx(krippendorff.alpha(matrix, level_of_measurement=level), abs=1e-9)


# --- claim (the installed kind supplies the agreement values) ----------------------------


def test_claim_reports_use_the_kinds_agreement_values(make_claim_study, enrolled):
    study = make_claim_study(items=4)
    labels = {
        "ann": ["supports", "neutral", "contradicts", "supports"],
        "bob": ["supports", "contradicts", "contradicts", "neutral"],
        "cat": ["neutral", "neutral", "contradicts", "supports"],
    }
    rows = []
    for name, chosen in labels.items():
        for index, label in enumerate(chosen):
            evidence = [] if label == "neutral" else [index % 3]
            rows.append(
                {"participant": name, "item": f"c{index}", "answer": {"label": label, "evidence": evidence}}
            )
    AnsweredResponseFactory.from_specs(study, rows)
    compute_study_reports(study)
    found = reports(study)
    matrix = [
        [["supports", "neutral", "contradicts"].index(label) for label in chosen]
        for chosen in labels.values()
    ]
    alpha = get(found, "agreement.krippendorff_alpha", question="label", level="nominal")
    assert alpha.value == pytest.approx(krippendorff.alpha(matrix, level_of_measurement="nominal"), abs=1e-9)
    rome = [label for chosen in labels.values() for i, label in enumerate(chosen) if i % 2]
    assert get(found, "claim.label_share", system="ROME", label="contradicts").value == pytest.approx(
        rome.count("contradicts") / len(rome)
    )
    # the Wald test clustered by item: 3 labels × 2 systems, q = 2, on 4 items − 2 systems
    assert get(found, "claim.chi_square").details["dof"] == [2, 1]
    assert get(found, "claim.evidence_f1").value == pytest.approx(1.0)  # same sentence per item
    assert ("agreement.fleiss_kappa", (("level", "nominal"), ("question", "label"))) in found


# --- simulation and plausibility -------------------------------------------------------


def test_simulation_precision_generality_and_kappa():
    study = simulation_study()
    compute_study_reports(study)
    found = reports(study)
    # humans, e1 (GPT-4): simulatable h1 yes✓ yes✓, h2 yes✓ no✗ → 3/4
    assert get(found, "simulation.precision", system="GPT-4", rater="human").value == pytest.approx(3 / 4)
    # e2 (GPT-3): h1 yes✓ no✗(model yes) no✓, h2 yes✓ yes✓ yes✗ → 4/6
    assert get(found, "simulation.precision", system="GPT-3", rater="human").value == pytest.approx(4 / 6)
    # the simulator matches the model on all of e1 and on two of e2's three
    assert get(found, "simulation.precision", system="GPT-4", rater="gpt").value == pytest.approx(1.0)
    assert get(found, "simulation.precision", system="GPT-3", rater="gpt").value == pytest.approx(2 / 3)
    # e1-2 is unsimulatable for both humans, so e1's counterfactuals are e1-0 and e1-1
    jaccard = get(found, "simulation.generality", system="GPT-4", measure="jaccard")
    assert jaccard.value == pytest.approx(1 - 0.2)  # {pigs,use,chopsticks} vs {cows,use,forks}
    assert get(found, "simulation.generality", system="GPT-4", measure="cosine").value is None
    assert (
        "encoder" in get(found, "simulation.generality", system="GPT-4", measure="cosine").details["reason"]
    )
    # humans and the simulator: the common human-machine figures (question "choice")
    h1 = ["yes", "yes", "not_helpful", "yes", "no", "no"]
    h2 = ["yes", "no", "not_helpful", "yes", "yes", "yes"]
    gpt = ["yes", "yes", "no", "yes", "no", "no"]
    choice = {"question": "choice", "level": "nominal"}
    ceiling = get(found, "agreement.machine_kappa", **choice, rater="humans", against="humans")
    assert (ceiling.n, ceiling.value) == (1, pytest.approx(cohen_kappa_score(h1, h2)))
    simulator = get(found, "agreement.machine_kappa", **choice, rater="gpt", against="humans")
    expected = (cohen_kappa_score(h1, gpt) + cohen_kappa_score(h2, gpt)) / 2
    assert (simulator.n, simulator.value) == (2, pytest.approx(expected))
    humans_only = [r for r in found.values() if not r.metric.startswith("agreement.machine")]
    assert all(r.group.get("question") != "choice" or r.n <= 12 for r in humans_only)
    alpha = get(found, "agreement.krippendorff_alpha", question="choice", level="nominal")
    assert alpha.details["units"] == 6  # humans only: the simulator is compared apart


def test_plausibility_shares():
    study = StudyFactory(kind="plausibility", slug="plaus")
    ItemFactory.from_specs(
        study,
        [
            {
                "external_id": "q1",
                "payload": {
                    "question": "q",
                    "answer": "a",
                    "explanations": [{"id": "cot", "text": "t"}, {"id": "posthoc", "text": "u"}],
                },
            }
        ],
    )
    AnsweredResponseFactory.from_specs(
        study,
        [
            {"participant": "a", "item": "q1", "answer": {"ratings": {"cot": "yes", "posthoc": "no"}}},
            {"participant": "b", "item": "q1", "answer": {"ratings": {"cot": "moderate", "posthoc": "no"}}},
        ],
    )
    compute_study_reports(study)
    found = reports(study)
    assert get(found, "plausibility.share", explanation="cot", rating="yes").value == pytest.approx(0.5)
    assert get(found, "plausibility.share", rating="no").value == pytest.approx(0.5)


def test_a_study_of_a_kind_this_site_lacks_gets_no_reports():
    """The kinds are the only source of agreement values: no builder stands in for a missing kind."""
    from annotation.kinds import UnknownKind

    study = StudyFactory(kind="plausibility", slug="novel")
    explanations = [{"id": "cot", "text": "t"}]
    ItemFactory.from_specs(
        study,
        [{"external_id": "x", "payload": {"question": "q", "answer": "a", "explanations": explanations}}],
    )
    AnsweredResponseFactory.from_specs(
        study, [{"participant": "a", "item": "x", "answer": {"ratings": {"cot": "yes"}}}]
    )
    Study.objects.filter(pk=study.pk).update(kind="novel-kind")  # a kind removed from the code
    study.refresh_from_db()
    with pytest.raises(UnknownKind, match="novel-kind"):
        compute_study_reports(study)
    assert not Report.objects.filter(study=study).exists()


def test_plausibility_agreement_is_asked_under_the_kinds_question():
    study = StudyFactory(kind="plausibility", slug="plaus-agree")
    explanations = [{"id": "cot", "text": "t"}, {"id": "posthoc", "text": "u"}]
    ItemFactory.from_specs(
        study,
        [
            {"external_id": q, "payload": {"question": "q", "answer": "a", "explanations": explanations}}
            for q in ("q1", "q2")
        ],
    )
    ratings = {"a": ["yes", "no", "moderate", "no"], "b": ["yes", "moderate", "moderate", "no"]}
    AnsweredResponseFactory.from_specs(
        study,
        [
            {"participant": who, "item": q, "answer": {"ratings": {"cot": r[2 * i], "posthoc": r[2 * i + 1]}}}
            for who, r in ratings.items()
            for i, q in enumerate(("q1", "q2"))
        ],
    )
    compute_study_reports(study)
    questions = {dict(key[1]).get("question") for key in reports(study) if key[0].startswith("agreement.")}
    assert questions == {"plausibility"}  # the kind's question (the report builder said "rating")
    alpha = get(reports(study), "agreement.krippendorff_alpha", question="plausibility", level="ordinal")
    assert alpha.n == 8


def test_ranking_agreement_includes_the_nominal_most_and_least_choices():
    study = StudyFactory(kind="ranking", slug="rank-agree", config={"show": 3})
    passages = [{"system": s, "text": f"{s} text"} for s in ("rome", "ft", "base")]
    ItemFactory.from_specs(
        study,
        [{"external_id": c, "payload": {"fact": "f", "passages": passages}} for c in ("c1", "c2")],
    )
    shown = ["rome", "ft", "base"]
    picks = {"a": [("rome", "base"), ("ft", "base")], "b": [("rome", "ft"), ("ft", "base")]}
    AnsweredResponseFactory.from_specs(
        study,
        [
            {
                "participant": who,
                "item": item,
                "answer": {
                    "shown": shown,
                    "choices": {c: {"most": most, "least": least} for c in ("consistency", "fluency")},
                },
            }
            for who, rows in picks.items()
            for item, (most, least) in zip(("c1", "c2"), rows, strict=True)
        ],
    )
    compute_study_reports(study)
    found = {tuple(sorted(dict(key[1]).items())) for key in reports(study) if key[0] == "agreement.percent"}
    for criterion in ("consistency", "fluency"):
        assert (("level", "ordinal"), ("question", criterion)) in found
        assert (("level", "nominal"), ("question", f"{criterion}.most")) in found
        assert (("level", "nominal"), ("question", f"{criterion}.least")) in found


def test_the_copy_read_gives_the_same_reports_as_a_row_by_row_read(monkeypatch):
    """The columns come from one binary COPY of fixed-width rows (texts as ranks, NULL as
    NaN, a value two fields name read once): every stored row of every population is the
    one a plain row-by-row read of the same columns gives."""
    import scoring.data

    study = game_study(slug="roft-copy")
    Response.objects.filter(study=study, participant__platform_worker_id="bob").update(flagged=True)
    Enrollment.objects.filter(study=study, participant__platform_worker_id="cat").update(excluded=True)

    def stored() -> dict:
        found = Report.objects.filter(study=study)
        return {
            (r.population, r.metric, tuple(sorted(r.group.items()))): (
                r.value,
                r.n,
                r.ci_low,
                r.ci_high,
                r.details,
            )
            for r in found
        }

    compute_study_reports(study)
    copied = stored()

    def row_by_row(query, expressions, text):
        names = list(expressions)
        rows = scoring.data._stream(query.order_by(), list(expressions.values()))
        return scoring.data._collect(rows, names, {n: "text" if n in text else "number" for n in names})

    monkeypatch.setattr(scoring.data, "_copy_columns", row_by_row)
    compute_study_reports(study)
    assert stored() == copied
    assert {population for population, _, _ in copied} == {"all", "passed"}


def test_a_study_without_answers_gets_its_progress():
    study = StudyFactory(kind="boundary", slug="empty")
    ItemFactory.from_specs(study, [{"external_id": "a", "payload": {"boundary": 2, "category": "news"}}])
    compute_study_reports(study)
    found = reports(study)
    assert get(found, "progress.responses").value == 0
    assert get(found, "progress.items_complete").n == 1
    assert get(found, "boundary.mean_points").value is None
    assert "no guesses" in get(found, "boundary.mean_points").details["reason"]


def test_declared_agreement_fields_read_as_columns_equal_the_kinds_own_values():
    """The boundary kind declares ``guess`` as its agreement value: the reports read it as a
    column, and get exactly what the kind's ``agreement_values`` gives answer by answer."""
    from annotation.kinds import get_kind
    from scoring.data import load_study_data, one_snapshot
    from scoring.reports import report_for

    study = game_study(slug="roft-columns")
    kind = get_kind("boundary")
    expected = sorted(
        (r.item_id, o.question, float(o.value), o.level)
        for r in Response.objects.filter(study=study).select_related("item", "item__study")
        for o in kind.agreement_values(r.item, r.answer)
    )
    with one_snapshot():
        data = load_study_data(study, report_for(study.kind))
    obs = data.observations
    item_ids = list(study.items.order_by("id").values_list("id", flat=True))
    rows = data.responses["item"][obs["response"]]
    got = sorted(
        (item_ids[i], q, float(v), level)
        for i, q, v, level in zip(rows, obs["question"], obs["value"], obs["level"], strict=True)
    )
    assert got == expected and len(got) == len(GAME)


def test_a_run_takes_its_fingerprint_counts_from_the_responses_it_read(game):
    """No second pass over every response to count them (only the latest time, by index)."""
    study = game
    Response.objects.filter(study=study, participant__platform_worker_id="dan").update(flagged=True)
    with CaptureQueriesContext(connection) as queries:
        result = compute_study_reports(study)
    assert result.fingerprint == study_fingerprint(study)
    assert (result.fingerprint["responses"], result.fingerprint["flagged"]) == (9, 1)
    counts = [q["sql"] for q in queries if 'COUNT("annotation_response"' in q["sql"]]
    assert counts == []


def test_the_responses_are_read_without_their_ids(game):
    """The reports never use a response's id: it is neither read nor copied per population
    (the items keep theirs, which the responses are matched to)."""
    from scoring.data import load_study_data, one_snapshot
    from scoring.reports import report_for

    study = game
    with one_snapshot():
        data = load_study_data(study, report_for(study.kind))
    assert "id" not in data.responses and len(data.responses) == len(GAME)
    assert "id" not in data.items  # matched, then dropped
    assert sorted(data.responses["item"].tolist()) == sorted("ABCD".index(item) for _, item, _ in GAME)


def test_declared_agreement_values_have_the_items_row_numbers_as_units(game):
    """Whole numbers grouped by counting, with the same codes as the item ids would give."""
    from scoring.data import load_study_data, one_snapshot
    from scoring.reports import report_for

    study = game
    with one_snapshot():
        data = load_study_data(study, report_for(study.kind))
    units = data.observations["unit"]
    assert units.dtype.kind == "i"
    assert units.tolist() == data.responses["item"][data.observations["response"]].tolist()
