"""The interface every task kind implements, and the value types it returns.

The shared machinery (assignment, submission, attention checks, imports, exports,
reports) calls only these methods; anything kind-specific lives in the kind's module.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, cast

from django.http import QueryDict
from django.urls import URLPattern, URLResolver, reverse
from django.utils.translation import gettext_noop, ngettext
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from annotation.errors import flatten_errors
from annotation.serializer_reuse import validated
from stats.agreement import LEVELS, check_level  # the levels of measurement, defined once

if TYPE_CHECKING:  # no kind imports the models at run time; these names are for annotations
    from annotation.models import Assignment, Enrollment, Item, Participant, Response, Study


@dataclass(frozen=True)
class Score:
    """How an answer compares with the truth or the gold answer."""

    points: float | None = None
    correct: bool | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Observation:
    """One value for agreement statistics: unit × question, at a level of measurement."""

    unit: str
    question: str
    value: Any
    level: str

    def __post_init__(self) -> None:
        check_level(self.level)


@dataclass(frozen=True)
class AgreementField:
    """An answer field that is, as it stands, one agreement value per item.

    Declaring agreement this way (instead of overriding ``agreement_values``) lets the
    reports read the values for a whole study as one column, without asking the kind
    answer by answer; both routes give the same observations by construction.
    """

    question: str
    key: str
    level: str

    def __post_init__(self) -> None:
        check_level(self.level)


@dataclass(frozen=True)
class ModelOption:
    """One allowed answer to a model question: ``value`` goes into the kind's answer,
    ``text`` is what the model says (short, distinct), ``label`` what it means."""

    value: Any
    text: str
    label: str = ""


@dataclass(frozen=True)
class ModelQuestion:
    """One closed question put to a model. ``id`` is unique within the item; ``key`` is
    the same for the same question on every item of the study (``"ratings.edit_main"``,
    ``"evidence"``), so few-shot examples from other items can be matched to it."""

    id: str
    key: str
    text: str
    options: tuple[ModelOption, ...]


@dataclass(frozen=True)
class ModelTask:
    """What a model is asked about an item: the page's own text (only what
    ``page_context`` shows a person) and the closed questions, one prompt each."""

    material: str
    questions: tuple[ModelQuestion, ...]


@dataclass(frozen=True)
class QualityCriterion:
    """One quality criterion a study of the kind asks about, as a datasheet (HEDS) records
    it: the question evaluators see, the rating instrument's values (None: there is none),
    how it is shown, whether outputs are judged together (``relative``), the form of
    response elicitation, and a title when evaluators are shown one."""

    id: str
    text: str
    values: tuple[Any, ...] | None
    presentation: str
    relative: bool
    elicitation: str
    title: str = ""


@dataclass(frozen=True)
class RaterQuestion:
    """One question a trained rater (an encoder fine-tuned on the study's human answers)
    answers: a rating learnt by regression (``labels`` the scale's points) or a label
    learnt as classification (``labels`` the kind's labels, in the classifier's order).
    ``about`` is the kind's own note on what the question reads (Likert: its passage)."""

    id: str
    text: str
    labels: tuple[Any, ...]
    regression: bool
    about: str = ""

    @property
    def level(self) -> str:
        return "ordinal" if self.regression else "nominal"

    def value_from_output(self, output: float) -> Any:
        """A regression output (the rating scaled to 0..1) as the nearest point of the scale."""
        points = len(self.labels)
        return self.labels[int(min(points, max(1, round(1 + float(output) * (points - 1))))) - 1]


@dataclass(frozen=True)
class RaterExample:
    """A text pair a trained rater reads, and the target it learns (a rating scaled to 0..1,
    or a label's index in ``RaterQuestion.labels``)."""

    first: str
    second: str
    target: float | int


@dataclass(frozen=True)
class RaterAnswer:
    """The kind's answer from a trained rater's outputs, the details kept beside it, and
    the raw outputs (stored as the answer's raw text)."""

    answer: dict
    details: dict
    raw: dict


# Runs one question's rater on text pairs: per pair, the regression output or the label
# probabilities (in the order of the question's labels).
RaterReader = Callable[[RaterQuestion, list[tuple[str, str]]], Sequence[Any]]


class _PageState:
    """Stands in for an assignment where a page reads only its ``state`` (a model's page)."""

    def __init__(self, state: dict):
        self.state = state


class StrictSerializer(serializers.Serializer):
    """A serializer that rejects fields it does not declare (typos fail loudly)."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


class EmptyConfig(StrictSerializer):
    """A kind without study-level options."""


class NotAnswerableByModel(Exception):
    """A kind whose page has steps (the game) has no closed questions for a model; callers
    check ``answerable_by_model`` first and refuse such a study with a clear error."""


@dataclass(frozen=True)
class PublicEntry:
    """Where a public study's card on the home page leads, and its button's text."""

    url: str
    action: str


# The levels of a number on a scale (every level but nominal).
SCALE_LEVELS = tuple(level for level in LEVELS if level != "nominal")


class TaskKind(ABC):
    """Base class: a subclass per kind, found by the registry in ``annotation.kinds``.

    Serializer classes validate: ``Config`` the study's config, ``Payload`` an item's
    payload, ``Answer`` a submitted or imported answer. Each receives a ``context`` with
    ``config`` (validated study config) and, for answers and gold, ``item``.
    """

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    template: ClassVar[str] = ""
    # The page around the kind's template; a kind whose round has its own steps (the
    # boundary game) renders its own page instead of the generic one-form task page.
    page_template: ClassVar[str] = "annotation/task.html"
    Config: ClassVar[type[serializers.Serializer]] = EmptyConfig
    Payload: ClassVar[type[serializers.Serializer]]
    Answer: ClassVar[type[serializers.Serializer]]
    Gold: ClassVar[type[serializers.Serializer] | None] = None  # defaults to Answer
    # Pages of the kind's round steps, mounted under each assignment
    # (``/s/<slug>/a/<id>/<name>/``), and the kind's own pages on the site (the game's
    # ``/play/``), mounted at the site's root by ``annotation.participation.urls``.
    urls: ClassVar[list[URLPattern | URLResolver]] = []
    site_urls: ClassVar[list[URLPattern | URLResolver]] = []
    # A template included at the top of the home page (the game's invitation), or "".
    home_notice_template: ClassVar[str] = ""
    # The text of a public study's button on the home page (see ``public_entry``), marked
    # for translation: the home page shows it in the visitor's language.
    public_action: ClassVar[str] = gettext_noop("Take part")
    # The report builder of the kind's studies, by dotted path (resolved by ``scoring``,
    # which the domain does not import); "" when the kind has only the common figures.
    report: ClassVar[str] = ""
    # Agreement values: declared as plain answer fields (read for a whole study as columns),
    # or, with ``agreement_per_answer``, computed by ``agreement_values`` answer by answer
    # (a kind that sets it overrides ``agreement_values`` and declares no fields; a test
    # holds every kind to one way).
    agreement_fields: ClassVar[tuple[AgreementField, ...]] = ()
    agreement_per_answer: ClassVar[bool] = False
    # What a datasheet (HEDS, ``scoring/datasheet.py``) says of the kind's evaluations, in
    # HEDS's terms: the evaluated systems' ``input``, ``output`` and ``task``; whether outputs
    # are judged together (``relative``), by their effect (``extrinsic``), objectively
    # (``objective``); the form of ``elicitation``; the criteria's ``quality_type``, ``aspect``
    # and ``frame`` of reference where the kind fixes them; ``task_text`` (what evaluators do
    # when there is no rating instrument) and ``criterion`` (``{id, text, values}``: the one
    # criterion of a kind without rater questions). A key left out: the researcher says.
    evaluation: ClassVar[dict[str, Any]] = {}

    # --- wiring into the site -------------------------------------------------------

    def ready(self) -> None:
        """Called once when the app is ready (``AnnotationConfig.ready``): a kind connects
        its signal receivers here."""
        return None

    @property
    def has_own_page(self) -> bool:
        """Whether the kind renders its own page around its template (the game's round)
        instead of the generic one-form task page."""
        return self.page_template != TaskKind.page_template

    def session_length(self, pages: int) -> str:
        """What participants are told a session is, in the page's language: "3 pages" (the
        game says "3 passages")."""
        return ngettext("%(count)d page", "%(count)d pages", pages) % {"count": pages}

    def public_entry(self, study: Study) -> PublicEntry:
        """Where the home page's card of a public live study leads."""
        return PublicEntry(reverse("study-entry", kwargs={"slug": study.slug}), self.public_action)

    # --- validation -------------------------------------------------------------------

    def validate_config(self, config: dict) -> dict:
        return _validated(self.Config, config, {})

    def validate_payload(self, payload: dict, config: dict) -> dict:
        return _validated(self.Payload, payload, {"config": config})

    def validate_answer(
        self, item: Item, answer: dict, *, state: dict | None = None, incomplete: bool = False
    ) -> dict:
        """A participant's answer, checked against the item (and its assignment state).
        ``incomplete``: the rules of an imported answer with parts missing, for the kinds
        whose ``Answer`` has them (see ``import_incomplete``)."""
        context = {"config": item.study.config, "item": item, "state": state or {}, "incomplete": incomplete}
        return _validated(self.Answer, answer, context)

    def validate_gold(self, item: Item, gold: dict) -> dict:
        context = {"config": item.study.config, "item": item, "state": {}, "gold": True}
        return _validated(self.Gold or self.Answer, gold, context)

    def import_answer(self, item: Item, answer: dict) -> tuple[dict, dict]:
        """An answer collected elsewhere → (stored answer, assignment state).

        Kinds whose pages shuffle override this to accept the system names directly.
        """
        return self.validate_answer(item, answer), {}

    def import_incomplete(
        self, item: Item, answer: dict, refused: ValidationError
    ) -> tuple[dict, dict, tuple[str, ...]]:
        """An answer collected elsewhere that ``import_answer`` refused (``refused``), as the
        kind stores it marked incomplete (``importresponses --allow-incomplete``): (stored
        answer, assignment state, the parts it lacks). What this returns, every reader of
        answers (reports, pages, API, exports, adjudication) must handle; an answer the kind
        cannot use raises ``ValidationError`` naming the field.

        By default: what the kind's partial rules for gold accept, lacking the fields the
        full rules named; when even those refuse it, the full rules' error."""
        try:
            partial = self.validate_gold(item, answer)
        except ValidationError:
            raise refused from None
        missing = {path.split(".")[0].split("[")[0] for path in flatten_errors(refused.detail)}
        return partial, {}, tuple(sorted(missing))

    # --- pages ------------------------------------------------------------------------

    def prepare_assignment(self, item: Item, rng: random.Random) -> dict:
        """State decided when the item is handed out (display order…); recorded."""
        return {}

    @abstractmethod
    def page_context(self, item: Item, assignment: Assignment | None) -> dict:
        """What the page may show before the answer: never gold, truth or hidden fields."""

    @abstractmethod
    def answer_from_form(self, data: QueryDict, item: Item, assignment: Assignment) -> dict:
        """Turn the page's form fields into the answer shape ``Answer`` validates."""

    def review_context(self, item: Item, answer: dict) -> dict:
        """A worked example: the item with its answer shown (instructions page)."""
        return {**self.page_context(item, None), "answer": answer}

    # --- model participants (LLM raters and simulators) ------------------------------

    # Whether ``model_task`` is implemented: a kind whose page has steps (the game) is not.
    answerable_by_model: ClassVar[bool] = False
    # What a language model answering the kind's items is, in its participant definition:
    # a rater (``llm``), or a ``simulator`` where the page asks what another model would say.
    model_rater: ClassVar[str] = "llm"

    def model_page(self, item: Item, state: dict) -> dict:
        """The page a person would see with this assignment state: what a model reads."""
        return self.page_context(item, cast("Assignment", _PageState(state)))

    def model_task(self, item: Item, state: dict) -> ModelTask:
        """The item as closed questions for a model, built from ``model_page`` only, so a
        model sees nothing a person does not (never gold, truth or hidden fields)."""
        raise NotAnswerableByModel(f"{self.name} items cannot be answered by a language model.")

    def asks_open_model_questions(self, config: dict) -> bool:
        """Whether ``model_task`` asks a question with no options (the model writes its
        answer, read by the kind): such a study is answered by generation, not by scoring
        options."""
        return False

    def answer_from_model(
        self,
        item: Item,
        state: dict,
        chosen: Mapping[str, Any],
        scores: Mapping[str, Mapping[Any, float]] | None = None,
    ) -> dict:
        """The kind's answer from the option value chosen per question id. ``scores``
        (question id → option value → log-probability), when the model's probabilities
        were read, settle what the choices alone leave open (a tie the kind refuses)."""
        raise NotAnswerableByModel(f"{self.name} items cannot be answered by a language model.")

    def model_choices(self, item: Item, state: dict, answer: dict) -> dict[str, Any]:
        """A stored answer as the option value per question id (few-shot examples from a
        person's answer); questions the answer leaves open are left out."""
        raise NotAnswerableByModel(f"{self.name} items cannot be answered by a language model.")

    def swapped_state(self, item: Item, state: dict) -> dict | None:
        """The page state with the two sides of a pairwise comparison exchanged, for a judge
        that asks each such item in both orders (position bias); None: the page compares no
        pair, nothing to swap."""
        return None

    # --- trained raters (encoders fine-tuned on a study's human answers) --------------

    # Whether the ``rater_*`` hooks are implemented; trained raters answer only such kinds.
    trained_raters: ClassVar[bool] = False

    def rater_questions(self, config: dict) -> list[RaterQuestion]:
        """The questions of a study with this (validated) config a trained rater answers,
        in the study's order; one rater model each."""
        raise NotAnswerableByModel(f"Trained raters do not answer {self.name} studies.")

    def rater_pair(self, question: RaterQuestion, item: Item) -> tuple[str, str] | None:
        """What the rater reads to answer ``question`` on ``item`` (the first pair, when it
        reads several); None when the question does not apply to the item."""
        raise NotAnswerableByModel(f"Trained raters do not answer {self.name} studies.")

    def rater_value(self, question: RaterQuestion, answer: dict) -> Any:
        """A person's answer to ``question`` (None when they gave none), as one comparable
        value: the held-out figures compare the rater's with the humans' through it."""
        raise NotAnswerableByModel(f"Trained raters do not answer {self.name} studies.")

    def rater_examples(self, question: RaterQuestion, item: Item, answer: dict) -> list[RaterExample]:
        """The training examples one person's answer gives (none when it skips the question
        or the question does not apply)."""
        raise NotAnswerableByModel(f"Trained raters do not answer {self.name} studies.")

    def rater_answers(
        self, questions: Sequence[RaterQuestion], items: Sequence[Item], read: RaterReader
    ) -> list[RaterAnswer]:
        """The kind's answer per item from its raters' outputs (``read`` runs a question's
        rater on pairs; a kind batches its calls across the items). Training calls it with
        one question at a time for the held-out predictions."""
        raise NotAnswerableByModel(f"Trained raters do not answer {self.name} studies.")

    # --- scoring and statistics -------------------------------------------------------

    def display_record(self, item: Item, state: dict) -> dict:
        """What a response records of how its page was shown (``Response.display_order``),
        from the assignment's state; by default the state itself."""
        return state

    def score(self, item: Item, answer: dict) -> Score | None:
        """Points / correctness against the truth or gold; None when nothing to score."""
        return None

    def agreement_values(self, item: Item, answer: dict) -> list[Observation]:
        """(unit, question, value, level) rows; by default one per declared answer field.

        Override only when the values are not plain answer fields (per-sentence evidence,
        per-system ranks): the reports then ask the kind answer by answer.
        """
        return [
            Observation(item.external_id, field.question, answer[field.key], field.level)
            for field in self.agreement_fields
            if answer.get(field.key) is not None
        ]

    def quality_criteria(self, config: dict) -> list[QualityCriterion]:
        """The quality criteria a study of the kind asks about (a datasheet's section 4):
        by default the questions a trained rater answers (``rater_questions``), else the one
        ``evaluation["criterion"]``, else the kind itself, without a rating instrument."""
        relative = bool(self.evaluation.get("relative"))
        elicitation = str(self.evaluation.get("elicitation") or "")
        try:
            asked = self.rater_questions(config)
        except NotAnswerableByModel:
            asked = []
        if asked:
            shown = "one of several options"
            return [
                QualityCriterion(q.id, q.text, tuple(q.labels), shown, relative, elicitation) for q in asked
            ]
        named = self.evaluation.get("criterion")
        if named:
            values = tuple(named["values"]) if named.get("values") else None
            shown = "one of several options" if values else "no rating instrument"
            return [QualityCriterion(named["id"], named["text"], values, shown, relative, elicitation)]
        return [
            QualityCriterion(self.name, str(self.label), None, "no rating instrument", relative, elicitation)
        ]

    def scale_questions(self, config: dict) -> tuple[str, ...]:
        """The questions (as ``agreement_values`` names them) whose answers are one number
        per item on a scale (ordinal or interval): what an adaptive study's stopping rule
        compares between systems. By default the declared agreement fields at those levels."""
        return tuple(f.question for f in self.agreement_fields if f.level in SCALE_LEVELS)

    def compares_systems_only(self, config: dict) -> bool:
        """Whether every question a page asks (free text aside) compares the page's systems
        (a ranking's MOST and LEAST, a questionnaire's picks), so the study's only outcome is
        a ranking of systems: adaptive assignment is refused for such a study
        (``services.participation.adaptive.check_adaptive_pays``). False by default."""
        return False

    def asks_free_text(self, config: dict) -> bool:
        """Whether the study's pages have a free-text field: where the authenticity signals
        are collected and the consent page names them (``participation.authenticity``).
        False by default."""
        return False

    # --- exports ----------------------------------------------------------------------

    def export_fields(self, config: dict) -> list[tuple[str, tuple[str, ...]]]:
        """Values nested inside the answer that exports show as columns of their own:
        (column name, path of keys in the answer). The answer's top-level fields are
        columns already (``answer.<field>``); a kind lists here what a spreadsheet
        should not have to parse out of JSON."""
        return []

    # --- after an answer --------------------------------------------------------------

    def after_response(self, response: Response) -> None:
        """Called inside the transaction that stored ``response`` (on the site or by an
        import), never for a retried submit. Kinds that keep aggregates (the game's
        player statistics) update them here; a kind may also add to the response's
        ``score_details`` what only the stored response knows (its timings, its place in
        the participant's history)."""
        return None

    def after_responses_moved(self, participant_ids: Sequence[int]) -> None:
        """Called inside the transaction that moved stored responses of this kind between
        these participants (a guest's history carried to their account) or removed some of
        theirs (an erasure). Kinds that keep per-participant aggregates rebuild them here."""
        return None

    def ends_session_on_attention_failure(self, study: Study, participant: Participant) -> bool:
        """Whether failing the study's attention checks past its allowance ends the
        participant's session with the screen-out code (True), or only flags them and
        their responses while they carry on (False: the game's volunteers)."""
        return True

    def finished_page(self, study: Study, enrollment: Enrollment) -> str | None:
        """Where a participant goes when their session is over, instead of the completion
        code page (None: the code page). The game sends its volunteers to a game page."""
        return None


def _validated(serializer_class: type[serializers.Serializer], data: object, context: dict) -> dict:
    if not isinstance(data, dict):
        raise serializers.ValidationError({"non_field_errors": ["Expected a JSON object."]})
    return dict(validated(serializer_class, data, context))
