"""A questionnaire study's reports on PostgreSQL, each figure against an independent
computation (the krippendorff package, SciPy, choix, plain loops): scale, choice, multi and
sentences questions on one-passage items of two systems paired by case; best, best-worst
and pairwise picks on items of several systems; every population gets them."""

import copy
import itertools
import json
import random
from collections.abc import Iterator

import choix
import krippendorff
import numpy as np
import pytest
from nltk.metrics.agreement import AnnotationTask
from nltk.metrics.distance import masi_distance
from scipy import stats

from annotation.models import Participant, Study
from annotation.services.analysis.adjudication import adjudicate
from annotation.services.authoring.answer_imports import import_responses
from annotation.services.authoring.studies import load_study_file
from scoring.models import Report
from scoring.services import compute_study_reports
from tests.helpers.clustered_reference import permutation_p, wald_reference, win_rate_t
from tests.helpers.module_data import rows_for_the_module

pytestmark = pytest.mark.django_db
ANNOTATORS = ["ann", "bob", "cat"]
SENTENCES = "One is here. Two is there. Three is everywhere."


def study_file(slug: str, questions: list, items: list) -> dict:
    return {
        "slug": slug,
        "title": slug,
        "kind": "questionnaire",
        "status": "live",
        "annotations_per_item": 3,
        "config": {"questions": questions},
        "items": items,
    }


def load_with_answers(data: dict, answer_of) -> tuple[object, dict]:
    """The study, and answers[(annotator, item)] as imported."""
    study = load_study_file(data).study
    rng = random.Random(7)
    answers = {
        (who, item["external_id"]): answer_of(rng, item) for who in ANNOTATORS for item in data["items"]
    }
    lines = [
        json.dumps({"participant": who, "item": item, "answer": answer})
        for (who, item), answer in answers.items()
    ]
    import_responses(study, lines, source=Participant.Source.LAB)
    compute_study_reports(study)
    return study, answers


def figures(study, metric: str, population: str = "all") -> dict:
    return {
        tuple(sorted(r.group.items())): r
        for r in Report.objects.filter(study=study, metric=metric, population=population)
    }


def figure(study, metric: str, **group):
    return figures(study, metric)[tuple(sorted(group.items()))]


PAGE_QUESTIONS = [
    {"id": "fluency", "type": "scale", "points": 5, "text": "Fluent?"},
    {"id": "faithful", "type": "choice", "options": ["yes", "no", "partly"], "text": "Faithful?"},
    {"id": "flaws", "type": "multi", "options": ["grammar", "facts"], "text": "Flaws?", "required": False},
    {"id": "errors", "type": "sentences", "text": "Wrong sentences?", "required": False},
    {"id": "note", "type": "text", "text": "Note", "required": False},
]
CASES = 6
PAGE_ITEMS = [
    {
        "external_id": f"c{case}-{system}",
        "provenance": {"source_id": f"c{case}"},
        "payload": {"passages": [{"id": "only", "text": SENTENCES, "system": system}]},
    }
    for case in range(CASES)
    for system in ("alpha", "beta")
]


def page_answer(rng, item):
    boost = 1 if item["payload"]["passages"][0]["system"] == "alpha" else 0
    return {
        "fluency": min(5, rng.randint(1, 4) + boost),
        "faithful": rng.choice(["yes", "no", "partly"] if boost else ["no", "partly"]),
        "flaws": sorted(rng.sample(["grammar", "facts"], rng.randint(0, 2))),
        "errors": sorted(rng.sample([0, 1, 2], rng.randint(0, 2))),
        "note": "ok",
    }


def system_of(item_id: str) -> str:
    return item_id.split("-")[1]


@pytest.fixture(scope="module")
def page_study_rows(django_db_setup, django_db_blocker) -> Iterator[tuple[int, dict]]:
    """The page study with its answers and reports, written once for the module
    (tests/helpers/module_data.py): its primary key and the answers as imported."""
    with rows_for_the_module(django_db_blocker):
        study, answers = load_with_answers(study_file("quest-page", PAGE_QUESTIONS, PAGE_ITEMS), page_answer)
        yield study.pk, answers


@pytest.fixture
def page_study(page_study_rows) -> tuple[Study, dict]:
    """The study as written (read afresh) and a copy of the answers, for one test."""
    pk, answers = page_study_rows
    return Study.objects.get(pk=pk), copy.deepcopy(answers)


def reliability(answers, value, units) -> np.ndarray:
    """Annotators × units, NaN where no value."""
    return np.array(
        [[value(answers[(who, unit[0])], unit) for unit in units] for who in ANNOTATORS], dtype=float
    )


def test_scale_choice_and_sentences_agreement_against_the_krippendorff_package(page_study):
    study, answers = page_study
    items = [(i["external_id"], None) for i in PAGE_ITEMS]
    fluency = reliability(answers, lambda a, u: a["fluency"], items)
    for level in ("ordinal", "interval"):
        ours = figure(study, "agreement.krippendorff_alpha", question="fluency", level=level).value
        assert ours == pytest.approx(krippendorff.alpha(fluency, level_of_measurement=level), abs=1e-9)
    codes = {"yes": 0, "no": 1, "partly": 2}
    faithful = reliability(answers, lambda a, u: codes[a["faithful"]], items)
    ours = figure(study, "agreement.krippendorff_alpha", question="faithful", level="nominal").value
    assert ours == pytest.approx(krippendorff.alpha(faithful, level_of_measurement="nominal"), abs=1e-9)
    sentences = [(i, s) for i, _ in items for s in range(3)]
    marked = reliability(answers, lambda a, u: int(u[1] in a["errors"]), sentences)
    ours = figure(study, "agreement.krippendorff_alpha", question="errors", level="nominal").value
    assert ours == pytest.approx(krippendorff.alpha(marked, level_of_measurement="nominal"), abs=1e-9)
    grammar = reliability(answers, lambda a, u: int("grammar" in a["flaws"]), items)
    ours = figure(study, "agreement.krippendorff_alpha", question="flaws.grammar", level="nominal").value
    assert ours == pytest.approx(krippendorff.alpha(grammar, level_of_measurement="nominal"), abs=1e-9)


def test_the_multi_questions_masi_alpha_against_nltk(page_study):
    study, answers = page_study
    triples = [(who, item, frozenset(answer["flaws"])) for (who, item), answer in answers.items()]
    masi = lambda a, b: 0.0 if a == b else masi_distance(a, b)  # noqa: E731 (two empty sets: equal)
    expected = AnnotationTask(data=triples, distance=masi).alpha()
    found = figure(study, "questionnaire.masi_alpha", question="flaws")
    assert found.value == pytest.approx(expected, abs=1e-9)
    assert found.n == len(triples)


def test_scale_means_and_wilcoxon_against_numpy_and_scipy(page_study):
    study, answers = page_study
    for system in ("alpha", "beta"):
        values = [a["fluency"] for (_, item), a in answers.items() if system_of(item) == system]
        found = figure(study, "questionnaire.mean", question="fluency", system=system)
        assert found.value == pytest.approx(np.mean(values)) and found.n == len(values)
        assert found.ci_low <= found.value <= found.ci_high
    pooled = figure(study, "questionnaire.mean", question="fluency")
    assert pooled.value == pytest.approx(np.mean([a["fluency"] for a in answers.values()]))
    case_mean = {
        (case, system): np.mean([answers[(who, f"c{case}-{system}")]["fluency"] for who in ANNOTATORS])
        for case in range(CASES)
        for system in ("alpha", "beta")
    }
    alpha = [case_mean[(c, "alpha")] for c in range(CASES)]
    beta = [case_mean[(c, "beta")] for c in range(CASES)]
    expected = stats.wilcoxon(alpha, beta, alternative="two-sided", method="approx")
    found = figure(study, "questionnaire.wilcoxon", question="fluency", system="alpha", over="beta")
    assert found.n == CASES and found.details["statistic"] == pytest.approx(expected.statistic)
    exact_or_approx = stats.wilcoxon(alpha, beta, alternative="two-sided", method=found.details["method"])
    assert found.value == pytest.approx(exact_or_approx.pvalue)
    assert found.details["alternative"] == "two-sided"
    # two systems: one comparison, so Holm leaves the p as it is
    assert found.details["p_holm"] == pytest.approx(found.value)


def test_option_shares_and_chi_square_against_counts_and_scipy(page_study):
    study, answers = page_study
    for system in ("alpha", "beta"):
        given = [a["faithful"] for (_, item), a in answers.items() if system_of(item) == system]
        for option in ("yes", "no", "partly"):
            found = figure(study, "questionnaire.share", question="faithful", system=system, option=option)
            assert found.value == pytest.approx(given.count(option) / len(given))
        flaws = [a["flaws"] for (_, item), a in answers.items() if system_of(item) == system]
        found = figure(study, "questionnaire.share", question="flaws", system=system, option="facts")
        assert found.value == pytest.approx(sum("facts" in f for f in flaws) / len(flaws))
    # the test that the answer does not depend on the system: clustered by case (the items
    # of a case share provenance.source_id), statsmodels' Wald statistic; six cases, so the
    # p is the permutation p (the systems swapped within cases: all 64 swaps, counted)
    pairs = [(a["faithful"], system_of(i), i.split("-")[0]) for (_, i), a in answers.items()]
    wald, _ = wald_reference(*zip(*pairs, strict=True))
    found = figure(study, "questionnaire.chi_square", question="faithful")
    assert found.details["wald"] == pytest.approx(wald)
    assert found.value == pytest.approx(permutation_p(*zip(*pairs, strict=True)), abs=0.025)
    assert found.details["method"] == "cluster-robust Wald (items), permutation p"


def test_a_multi_question_s_option_tests_are_holm_adjusted_over_its_options(page_study):
    """Each option of a multi question gets a test (clustered by case; six cases, so the
    permutation p, counted over every swap within cases): one family on the page, so each
    carries its Holm-adjusted p (as statsmodels adjusts the options' p-values)."""
    from statsmodels.stats.multitest import multipletests

    study, answers = page_study
    found = []
    for option in ("grammar", "facts"):
        chosen = [
            ("yes" if option in a["flaws"] else "no", system_of(i), i.split("-")[0])
            for (_, i), a in answers.items()
        ]
        found.append(figure(study, "questionnaire.chi_square", question="flaws", option=option))
        assert found[-1].value == pytest.approx(permutation_p(*zip(*chosen, strict=True)), abs=0.025)
    adjusted = multipletests([f.value for f in found], method="holm")[1]
    assert [f.details["p_holm"] for f in found] == pytest.approx(adjusted.tolist())


def test_sentence_f1_against_plain_set_f1(page_study):
    study, answers = page_study

    def f1(a, b):
        a, b = set(a), set(b)
        return 2 * len(a & b) / (len(a) + len(b))

    for system in ("alpha", "beta", None):
        scores = []
        for item in PAGE_ITEMS:
            if system and system_of(item["external_id"]) != system:
                continue
            sets = [answers[(who, item["external_id"])]["errors"] for who in ANNOTATORS]
            scores += [f1(a, b) for a, b in itertools.combinations([s for s in sets if s], 2)]
        group = {"system": system} if system else {}
        found = figure(study, "questionnaire.sentence_f1", question="errors", **group)
        assert found.value == pytest.approx(np.mean(scores)) and found.n == len(scores)


def test_the_adjudicated_population_takes_the_adjudicated_answer_alone(page_study, django_user_model):
    study, answers = page_study
    item = study.items.get(external_id="c0-alpha")
    final = {**answers[("ann", "c0-alpha")], "fluency": 5}
    adjudicate(
        study=study, item=item, answer=final, note="", user=django_user_model.objects.create(username="r")
    )
    compute_study_reports(study)
    alpha = [a["fluency"] for (_, i), a in answers.items() if system_of(i) == "alpha" and i != "c0-alpha"]
    found = figures(study, "questionnaire.mean", "adjudicated")[
        (("question", "fluency"), ("system", "alpha"))
    ]
    assert found.value == pytest.approx(np.mean([*alpha, 5])) and found.n == len(alpha) + 1
    passed = figures(study, "questionnaire.mean", "passed")[(("question", "fluency"), ("system", "alpha"))]
    assert passed.n == len(alpha) + 3
    assert figures(study, "agreement.krippendorff_alpha", "adjudicated")


SYSTEMS = ["x", "y", "z"]
PICK_QUESTIONS = [
    {"id": "best", "type": "pick", "pick": "best", "text": "Best?"},
    {"id": "bw", "type": "pick", "pick": "best_worst", "text": "Best and worst?"},
]
PICK_ITEMS = [
    {
        "external_id": f"p{n}",
        "payload": {"passages": [{"id": f"p{n}{s}", "text": f"Text {s}.", "system": s} for s in SYSTEMS]},
    }
    for n in range(8)
]


def pick_answer(rng, item):
    ids = [p["id"] for p in item["payload"]["passages"]]
    weights = [5, 3, 1]
    best = rng.choices(ids, weights)[0]
    most, least = rng.choices(ids, weights)[0], None
    least = rng.choice([i for i in ids if i != most])
    return {"best": best, "bw": {"most": most, "least": least}}


def wins_of(pairs: list[tuple[str, str]]) -> np.ndarray:
    wins = np.zeros((3, 3))
    for winner, loser in pairs:
        wins[SYSTEMS.index(winner), SYSTEMS.index(loser)] += 1
    return wins


def _check_win_test(found, decisive: list[tuple[bool, str, str]]) -> None:
    """The pair's test: statsmodels' cluster-robust t of "wins half the time" (by item and
    annotator: the three annotators answer every item), two-sided on the row's degrees of
    freedom (Satterthwaite's, between min(G) − 1 and max(G) − 1)."""
    won, items, annotators = zip(*decisive, strict=True)
    t = win_rate_t(np.array(won, dtype=float), np.array(items), np.array(annotators))
    assert found.details["statistic"] == pytest.approx(t)
    df = found.details["df"]
    assert len(set(annotators)) - 1 <= df <= len(set(items)) - 1
    assert found.details["p_value"] == pytest.approx(2 * stats.t.sf(abs(t), df))
    assert found.details["test"] == "cluster-robust t (items x participants)"


def test_best_and_best_worst_picks_against_loops_scipy_and_choix():
    study, answers = load_with_answers(study_file("quest-pick", PICK_QUESTIONS, PICK_ITEMS), pick_answer)
    system = {p["id"]: p["system"] for i in PICK_ITEMS for p in i["payload"]["passages"]}
    picked = [system[a["best"]] for a in answers.values()]
    for name in SYSTEMS:
        found = figure(study, "questionnaire.picked", question="best", system=name)
        assert found.value == pytest.approx(picked.count(name) / len(picked))
    best_pairs = [(w, other) for w in picked for other in SYSTEMS if other != w]
    wins = wins_of(best_pairs)
    expected = choix.ilsr_pairwise_dense(wins, alpha=0.0)  # the maximum-likelihood strengths
    expected -= expected.mean()
    for n, name in enumerate(SYSTEMS):
        found = figure(study, "questionnaire.strength", question="best", system=name)
        assert found.value == pytest.approx(expected[n], abs=1e-2)  # the ridge (0.01), few comparisons
        assert found.ci_low < found.value < found.ci_high
    found = figure(study, "questionnaire.wins", question="best", system="x", over="y")
    assert found.value == wins[0, 1] and found.n == wins[0, 1] + wins[1, 0]
    decisive = [
        (system[a["best"]] == "x", item, who)
        for (who, item), a in answers.items()
        if system[a["best"]] != "z"
    ]
    _check_win_test(found, decisive)

    for name in SYSTEMS:
        scores = [
            1 if system[a["bw"]["most"]] == name else -1 if system[a["bw"]["least"]] == name else 0
            for a in answers.values()
        ]
        assert figure(study, "questionnaire.bws", question="bw", system=name).value == pytest.approx(
            np.mean(scores)
        )
        most = figure(study, "questionnaire.most", question="bw", system=name)
        assert most.value == scores.count(1) and most.n == len(scores)
    bw_pairs = []
    for a in answers.values():
        most, least = system[a["bw"]["most"]], system[a["bw"]["least"]]
        middle = next(s for s in SYSTEMS if s not in (most, least))
        bw_pairs += [(most, middle), (most, least), (middle, least)]
    found = figure(study, "questionnaire.wins", question="bw", system="x", over="z")
    assert found.value == wins_of(bw_pairs)[0, 2]


def test_pairwise_picks_with_ties():
    questions = [{"id": "better", "type": "pick", "pick": "pairwise", "tie": True, "text": "Better?"}]
    items = [
        {
            "external_id": f"w{n}",
            "payload": {
                "passages": [
                    {"id": "a", "text": "A.", "system": "x"},
                    {"id": "b", "text": "B.", "system": "y"},
                ]
            },
        }
        for n in range(6)
    ]
    study, answers = load_with_answers(
        study_file("quest-pair", questions, items),
        lambda rng, item: {"better": rng.choice(["a", "a", "b", "tie"])},
    )
    given = [a["better"] for a in answers.values()]
    assert figure(study, "questionnaire.tie_share", question="better").value == pytest.approx(
        given.count("tie") / len(given)
    )
    assert figure(study, "questionnaire.picked", question="better", system="x").value == pytest.approx(
        given.count("a") / len(given)
    )
    found = figure(study, "questionnaire.wins", question="better", system="x", over="y")
    assert found.value == given.count("a") and found.n == given.count("a") + given.count("b")
    decisive = [(a["better"] == "a", item, who) for (who, item), a in answers.items() if a["better"] != "tie"]
    _check_win_test(found, decisive)


def test_the_dashboard_shows_the_questionnaire_tables_and_plot(page_study, client, django_user_model):
    study, _ = page_study
    admin = django_user_model.objects.create_user("boss", is_staff=True, is_superuser=True)
    client.force_login(admin)
    page = client.get(f"/research/s/{study.slug}/dashboard/").content.decode()
    assert "Scale questions: mean per system" in page and "Choice and multi questions" in page
    assert "Sentences questions: F1" in page and "MASI distance" in page
    plot = client.get(f"/research/s/{study.slug}/dashboard/plots/questionnaire-means.svg")
    assert plot.status_code == 200 and b"<svg" in plot.content


def test_a_page_question_on_several_passages_shows_its_pooled_figures_and_no_empty_plot(admin_client):
    """The pairwise example's fluency scale and the best-worst example's faithfulness choice
    are asked of pages of two and four systems: no one system, so their figures are pooled.
    The dashboard once showed neither (its tables are per system) and an empty plot of means
    per system saying "no figure of this kind is defined yet"."""
    from tests.conftest import EXAMPLES
    from workers.demo.studies import load_demo_study

    for name in ("pairwise", "best-worst"):
        load_demo_study(json.loads((EXAMPLES / f"questionnaire-{name}.json").read_text(encoding="utf-8")))
    pairwise = admin_client.get("/research/s/demo-quest-pairwise/dashboard/").content.decode()
    fluency = Report.objects.get(
        study__slug="demo-quest-pairwise",
        population="all",
        metric="questionnaire.mean",
        group={"question": "fluency"},
    )
    pooled = pairwise.split("Scale questions: mean over all answers", 1)[1].split("</table>", 1)[0]
    assert "fluency" in pooled and f"{fluency.value:.3f}" in pooled
    assert "Nothing to plot" not in pairwise and "Scale questions: mean per system" not in pairwise
    best_worst = admin_client.get("/research/s/demo-quest-best-worst/dashboard/").content.decode()
    shares = best_worst.split("share of each option over all answers", 1)[1].split("</table>", 1)[0]
    assert shares.count("faithful") == 2  # yes and no
