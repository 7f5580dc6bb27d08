"""python manage.py plan: a pilot's answers that count → the power and cost of each design."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Enrollment, Item, Job, Participant, Response, Study
from scoring.models import Report
from tests.factories import AnsweredResponseFactory, ItemFactory, StudyFactory
from tests.helpers.module_data import rows_for_the_module
from tests.helpers.reports import likert_study

pytestmark = pytest.mark.django_db

DESIGNS = ["--items", "5,10", "--answers", "1,3", "--simulations", "200"]


def plan(*args: str) -> str:
    out = StringIO()
    call_command("plan", "leme", *args, stdout=out)
    return out.getvalue()


def test_items_without_shared_sources_are_compared_as_independent_samples():
    study = StudyFactory(
        kind="likert", slug="leme", config={"questions": [{"id": "q", "text": "…", "passage": "main"}]}
    )
    payload = {"new_fact": "f", "old_facts": [], "main_passage": "p"}
    ItemFactory.from_specs(
        study,
        [
            {"external_id": f"{s}{i}", "payload": payload, "provenance": {"system": s}}
            for s in "AB"
            for i in range(5)
        ],
    )
    AnsweredResponseFactory.from_specs(
        study,
        [
            {
                "participant": f"r{r}",
                "item": f"{s}{i}",
                "answer": {"ratings": {"q": 2 + (i + r) % 4 + (s == "A")}},
            }
            for s in "AB"
            for i in range(5)
            for r in range(2)
        ],
    )
    out = plan("--compare", "A", "B", "--question", "q", "--difference", "1", *DESIGNS)
    assert (
        "Pilot: 5 items of A, 5 of B (unpaired); 20 answers that count; difference in the pilot +1.00." in out
    )


@pytest.fixture(scope="class")
def pilot(django_db_setup, django_db_blocker):
    """The pilot, written once for the class that uses it (tests/helpers/module_data.py):
    each test's changes roll back, and the tests outside the class never see it."""
    with rows_for_the_module(django_db_blocker):
        likert_study()
        yield


@pytest.mark.usefixtures("pilot")
class TestOnTheSharedPilot:
    """The tests on the pilot of ``likert_study`` (ROME and FT on 12 shared cases, 3 raters
    each: 72 answers to "edit"), built once for the class: the command only reads it."""

    def test_plan_prints_every_design_and_the_cheapest_that_reaches_the_power(self):
        out = plan(
            "--compare",
            "ROME",
            "FT",
            "--question",
            "edit",
            "--difference",
            "1.5",
            "--price",
            "0.25",
            *DESIGNS,
        )
        assert "ROME vs FT on 'edit', difference 1.5" in out
        assert (
            "12 cases rated for both systems (paired by provenance.source_id); 72 answers that count" in out
        )
        table = [line.split() for line in out.splitlines() if line[:12].strip().isdigit()]
        assert [(int(r[0]), int(r[1]), int(r[2])) for r in table] == [
            (5, 1, 10),
            (5, 3, 30),
            (10, 1, 20),
            (10, 3, 60),
        ]
        assert [float(r[4]) for r in table] == [2.5, 7.5, 5.0, 15.0]  # answers × price
        assert all(0 <= float(r[3]) <= 1 for r in table)
        cheapest = min((int(r[2]), -float(r[3])) for r in table if float(r[3]) >= 0.8)
        assert f"= {cheapest[0]} answers (power {-cheapest[1]:.3f})" in out
        assert out == plan(  # seeded: the same table again
            "--compare",
            "ROME",
            "FT",
            "--question",
            "edit",
            "--difference",
            "1.5",
            "--price",
            "0.25",
            *DESIGNS,
        )

    def test_only_the_answers_that_count_shape_the_plan(self):
        wild = [
            {
                "participant": name,
                "item": f"{system}-{case}",
                "answer": {"ratings": {"edit": 1, "natural": 1}},
                **extra,
            }
            for name, extra in (("flagged", {"flagged": True}), ("bot", {"source": Participant.Source.MODEL}))
            for system in ("ROME", "FT")
            for case in range(12)
        ]
        study = Study.objects.get(slug="leme")
        AnsweredResponseFactory.from_specs(study, wild)
        out = plan("--compare", "ROME", "FT", "--question", "edit", "--difference", "0.5", *DESIGNS)
        assert "72 answers that count" in out

    def test_a_target_no_design_reaches_says_so(self):
        out = plan(
            "--compare",
            "ROME",
            "FT",
            "--question",
            "natural",
            "--difference",
            "0.01",
            "--power",
            "0.99",
            "--items",
            "5",
            "--answers",
            "1",
            "--simulations",
            "200",
        )
        assert "No design here reaches power 0.99" in out

    @pytest.mark.parametrize(
        "args, option, words",
        [
            (
                ["--compare", "ROME", "MEMIT", "--question", "edit", "--difference", "0.5"],
                "--compare",
                "MEMIT",
            ),
            (
                ["--compare", "ROME", "ROME", "--question", "edit", "--difference", "0.5"],
                "--compare",
                "two different",
            ),
            (
                ["--compare", "ROME", "FT", "--question", "fluency", "--difference", "0.5"],
                "--question",
                "fluency",
            ),
            (
                ["--compare", "ROME", "FT", "--question", "edit", "--difference", "0"],
                "--difference",
                "positive",
            ),
            (
                ["--compare", "ROME", "FT", "--question", "edit", "--difference", "-1"],
                "--difference",
                "positive",
            ),
            (
                ["--compare", "ROME", "FT", "--question", "edit", "--difference", "1", "--power", "1.5"],
                "--power",
                "",
            ),
            (
                ["--compare", "ROME", "FT", "--question", "edit", "--difference", "1", "--items", "1"],
                "--items",
                "",
            ),
        ],
    )
    def test_a_bad_target_names_the_option_and_changes_nothing(self, args, option, words):
        before = _counts()
        with pytest.raises(CommandError) as raised:
            plan(*args)
        assert str(raised.value).startswith(f"{option}:") and words in str(raised.value)
        assert _counts() == before

    def test_plan_for_an_agreement_interval_width(self):
        out = plan(
            "--question",
            "natural",
            "--agreement-width",
            "0.5",
            "--price",
            "0.1",
            *DESIGNS[:2],
            "--answers",
            "2,3",
            "--simulations",
            "200",
        )
        assert "Krippendorff's alpha (interval) of 'natural' with a 95% interval at most 0.5 wide" in out
        assert "Pilot: 24 items, 72 answers that count." in out
        table = [line.split() for line in out.splitlines() if line[:12].strip().isdigit()]
        assert [(int(r[0]), int(r[1]), int(r[2]), float(r[5])) for r in table] == [
            (5, 2, 10, 1.0),
            (5, 3, 15, 1.5),
            (10, 2, 20, 2.0),
            (10, 3, 30, 3.0),
        ]
        narrow = [(int(r[2]), float(r[3])) for r in table if float(r[3]) <= 0.5]
        last = out.strip().splitlines()[-1]
        assert (
            (f"= {min(narrow)[0]} answers" in last) if narrow else last.startswith("No design here is narrow")
        )

    @pytest.mark.parametrize(
        "args, option, words",
        [
            (["--question", "edit", "--agreement-width", "0"], "--agreement-width", "positive"),
            (
                ["--question", "edit", "--agreement-width", "0.2", "--answers", "1,2"],
                "--answers",
                "two answers",
            ),
            (["--question", "edit", "--compare", "ROME", "FT"], "--difference", "--compare"),
            (
                ["--question", "edit", "--agreement-width", "0.2", "--simulations", "5"],
                "--simulations",
                "100",
            ),
            # designs past what one command may compute: refused before anything is simulated
            (
                ["--question", "edit", "--agreement-width", "0.2", "--items", "200000", "--answers", "50"],
                "--items",
                "10,000 items",
            ),
            (
                [
                    "--question",
                    "edit",
                    "--agreement-width",
                    "0.2",
                    "--items",
                    "1000000",
                    "--answers",
                    "1000000",
                ],
                "--items",
                "10,000 items",
            ),
            (
                ["--question", "edit", "--agreement-width", "0.2", "--items", "10", "--answers", "1000000"],
                "--answers",
                "at most 100",
            ),
            (
                ["--question", "edit", "--agreement-width", "0.2", "--items", "10000", "--answers", "100"],
                "--items",
                "at most 200,000,000",
            ),
            (
                ["--question", "edit", "--agreement-width", "0.2", "--simulations", "10000000"],
                "--simulations",
                "10,000",
            ),
            (["--question", "edit", "--agreement-width", "1e308"], "--agreement-width", "from 0.001 to 2"),
            (["--question", "edit", "--agreement-width", "0.2", "--seed", "-1"], "--seed", "from 0"),
            (
                ["--question", "edit", "--compare", "ROME", "FT", "--difference", "1e-300"],
                "--difference",
                "from 0.001",
            ),
            (
                ["--question", "edit", "--compare", "ROME", "FT", "--difference", "1", "--power", "0.999999"],
                "--power",
                "0.999",
            ),
            (
                ["--question", "edit", "--compare", "ROME", "FT", "--difference", "1", "--price", "1e30"],
                "--price",
                "1,000,000",
            ),
        ],
    )
    def test_a_bad_agreement_target_names_the_option(self, args, option, words):
        before = _counts()
        with pytest.raises(CommandError) as raised:
            plan(*args)
        assert str(raised.value).startswith(f"{option}:") and words in str(raised.value)
        assert _counts() == before


def test_an_unknown_study_is_named():
    with pytest.raises(CommandError, match="No study with slug 'leme'"):
        plan("--compare", "A", "B", "--question", "q", "--difference", "1")


def _counts() -> tuple[int, ...]:
    return tuple(
        model.objects.count() for model in (Study, Item, Participant, Enrollment, Response, Report, Job)
    )
