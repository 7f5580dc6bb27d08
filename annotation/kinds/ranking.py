"""MOST/LEAST ranking (ROME-style): a taught fact and a few passages written by different
systems, shown in a random order under the letters A, B, C…; per criterion the participant
picks the passage that does best and the one that does worst.

The page knows passages only by letter. Which system wrote which passage stays on the
server: the order is drawn when the item is handed out (``prepare_assignment``) and kept
in the assignment's state, and the letters posted back are turned into systems here.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from django.http import QueryDict
from django.utils.translation import gettext, gettext_lazy, gettext_noop
from rest_framework import serializers

from .base import (
    ModelOption,
    ModelQuestion,
    ModelTask,
    Observation,
    QualityCriterion,
    Score,
    StrictSerializer,
    TaskKind,
)
from .checks import check_unique

ID_PATTERN = r"^[A-Za-z0-9_-]+$"
MAX_SHOWN = 8
DEFAULT_SHOW = 3

# Our wording of the two questions pairs of a model-editing ranking study.
DEFAULT_CRITERIA = [
    {
        "id": "consistency",
        "title": "Consistency with the new fact",
        "most": "Which passage is MOST consistent with the new fact, reading as if it were true?",
        "least": "Which passage is LEAST consistent with the new fact: it ignores it, or says otherwise?",
    },
    {
        "id": "fluency",
        "title": "Fluency",
        "most": "Which passage is MOST fluent: natural, correct, like something a person would write?",
        "least": "Which passage is LEAST fluent: awkward, broken, repetitive or wandering?",
    },
]


def letter(index: int) -> str:
    return chr(ord("A") + index)


class Criterion(StrictSerializer):
    id = serializers.RegexField(ID_PATTERN, max_length=60)
    title = serializers.CharField(max_length=120, required=False)
    most = serializers.CharField(max_length=500)
    least = serializers.CharField(max_length=500)


class RankingConfig(StrictSerializer):
    criteria = serializers.ListField(child=Criterion(), min_length=1, max_length=6, required=False)
    show = serializers.IntegerField(min_value=2, max_value=MAX_SHOWN, default=DEFAULT_SHOW)

    def validate(self, data: dict) -> dict:
        criteria = data.get("criteria") or DEFAULT_CRITERIA
        criteria = check_unique(criteria, "id", "criteria", "Criterion id {!r} is used twice.")
        for criterion in criteria:
            criterion.setdefault("title", criterion["id"].replace("_", " ").capitalize())
        return {"criteria": criteria, "show": data.get("show", DEFAULT_SHOW)}


class Passage(StrictSerializer):
    system = serializers.CharField(max_length=100)
    text = serializers.CharField(max_length=50000)


class RankingPayload(StrictSerializer):
    fact = serializers.CharField(max_length=5000)
    passages = serializers.ListField(child=Passage(), min_length=2, max_length=26)

    def validate(self, data: dict) -> dict:
        message = "Each passage needs a different system ({!r} wrote two)."
        data["passages"] = check_unique(data["passages"], "system", "passages", message)
        show = settings_of(self.context["config"])["show"]
        if len(data["passages"]) < show:
            raise serializers.ValidationError(
                {
                    "passages": [
                        f"The study shows {show} passages per page; this item has {len(data['passages'])}."
                    ]
                }
            )
        return data


class RankingAnswer(StrictSerializer):
    """``{"shown": [system…], "choices": {criterion: {"most": system, "least": system}}}``.

    Messages never name a system: they may be shown on the page before the answer is stored.
    With ``incomplete`` in the context (an import's ``--allow-incomplete``) whole criteria
    may be left out, but at least one is given, and each one given has its MOST and LEAST.
    """

    shown = serializers.ListField(child=serializers.CharField(), allow_empty=False)
    choices = serializers.JSONField()

    def validate(self, data: dict) -> dict:
        item, settings = self.context["item"], settings_of(self.context["config"])
        shown = check_shown(data["shown"], item, settings["show"], self.context.get("state") or {})
        choices = data["choices"]
        if not isinstance(choices, dict):
            raise serializers.ValidationError({"choices": ["Expected an object: criterion → choice."]})
        errors: dict[str, Any] = {
            str(key): ["Not a question on this page."] for key in choices if key not in _ids(settings)
        }
        checked = {}
        incomplete = self.context.get("incomplete", False)
        for criterion in settings["criteria"]:
            if incomplete and choices.get(criterion["id"]) is None:
                continue
            try:
                checked[criterion["id"]] = check_choice(choices.get(criterion["id"]), criterion, shown)
            except serializers.ValidationError as exc:
                errors[criterion["id"]] = exc.detail
        if not errors and not checked:
            errors[""] = [gettext("Give the MOST and the LEAST passage for at least one criterion.")]
        if errors:
            raise serializers.ValidationError({"choices": errors})
        return {"shown": shown, "choices": checked}


class RankingGold(StrictSerializer):
    """Gold for attention checks: some criteria's MOST and/or LEAST, by system."""

    choices = serializers.JSONField()

    def validate(self, data: dict) -> dict:
        item, settings = self.context["item"], settings_of(self.context["config"])
        systems = [p["system"] for p in item.payload["passages"]]
        if len(systems) != settings["show"]:
            raise serializers.ValidationError(
                {"choices": [f"An item with gold must hold exactly {settings['show']} passages (all shown)."]}
            )
        choices = data["choices"]
        if not isinstance(choices, dict) or not choices:
            raise serializers.ValidationError(
                {"choices": ["Give the expected choice for at least one criterion."]}
            )
        errors: dict[str, Any] = {}
        checked = {}
        for key, value in choices.items():
            criterion = next((c for c in settings["criteria"] if c["id"] == key), None)
            if criterion is None:
                errors[str(key)] = ["Not a criterion of this study."]
                continue
            try:
                checked[key] = check_choice(value, criterion, systems, partial=True)
            except serializers.ValidationError as exc:
                errors[key] = exc.detail
        if errors:
            raise serializers.ValidationError({"choices": errors})
        return {"choices": checked}


def _ids(settings: dict) -> list[str]:
    return [c["id"] for c in settings["criteria"]]


def check_shown(shown: list[str], item, show: int, state: dict) -> list[str]:
    systems = {p["system"] for p in item.payload["passages"]}
    if len(shown) != show:
        raise serializers.ValidationError({"shown": [f"A page shows {show} passages; got {len(shown)}."]})
    if len(set(shown)) != len(shown):
        raise serializers.ValidationError({"shown": ["A passage is listed twice."]})
    if not set(shown) <= systems:
        raise serializers.ValidationError(
            {"shown": ["Lists a system that wrote none of this item's passages."]}
        )
    if state.get("shown") and list(shown) != list(state["shown"]):
        raise serializers.ValidationError({"shown": ["Does not match the passages shown on this page."]})
    return list(shown)


# A criterion's end left out (lazy: translated when the error is raised, in the page's language).
PICK_END = {
    "most": gettext_lazy("%(criterion)s: pick the MOST passage."),
    "least": gettext_lazy("%(criterion)s: pick the LEAST passage."),
}


def check_choice(choice, criterion: dict, allowed: list[str], *, partial: bool = False) -> dict:
    """One criterion's ``{"most", "least"}``: among the passages shown, and not the same one."""
    title = criterion["title"]
    if not isinstance(choice, dict):
        raise serializers.ValidationError(
            [gettext("%(criterion)s: pick the MOST and the LEAST passage.") % {"criterion": title}]
        )
    errors = {
        str(key): ["Only 'most' and 'least' are answered."] for key in choice if key not in ("most", "least")
    }
    for end in ("most", "least"):
        if choice.get(end) in (None, ""):
            if not partial:
                errors[end] = [PICK_END[end] % {"criterion": title}]
        elif choice[end] not in allowed:
            errors[end] = [f"{title}: the {end.upper()} choice is not one of the passages on the page."]
    if not errors and choice.get("most") and choice.get("most") == choice.get("least"):
        errors["least"] = [
            gettext("%(criterion)s: MOST and LEAST must be different passages.") % {"criterion": title}
        ]
    if errors or (partial and not choice):
        raise serializers.ValidationError(errors or [f"{title}: give MOST or LEAST."])
    return {end: choice[end] for end in ("most", "least") if choice.get(end)}


def settings_of(config: dict) -> dict:
    """The study's criteria and page size: its stored config, which ``RankingConfig``
    validated on the way in (filling the defaults), read as it stands."""
    return {"criteria": config["criteria"], "show": config["show"]}


class Ranking(TaskKind):
    name = "ranking"
    # What a datasheet (HEDS) says of the kind's evaluations (``TaskKind.evaluation``).
    evaluation: ClassVar[dict[str, Any]] = {
        "input": "text: multiple sentences",
        "output": "text: multiple sentences (passages of several systems)",
        "relative": True,
        "extrinsic": False,
        "objective": False,
        "elicitation": "relative quality estimation (including ranking)",
    }
    agreement_per_answer = True  # agreement_values below
    report = "scoring.reports.ranking.RankingReport"
    label = gettext_noop("MOST/LEAST ranking of passages from different systems")
    template = "annotation/kinds/ranking.html"
    Config = RankingConfig
    Payload = RankingPayload
    Answer = RankingAnswer
    Gold = RankingGold

    def compares_systems_only(self, config: dict) -> bool:
        """A ranking asks nothing but MOST and LEAST of the shown systems."""
        return True

    def export_fields(self, config: dict) -> list[tuple[str, tuple[str, ...]]]:
        """``choice.<criterion>.most`` and ``.least``: the chosen system, one column each."""
        return [
            (f"choice.{criterion}.{side}", ("choices", criterion, side))
            for criterion in _ids(settings_of(config))
            for side in ("most", "least")
        ]

    def prepare_assignment(self, item, rng: random.Random) -> dict:
        """Which systems this page shows, in display order (letters by position)."""
        systems = [p["system"] for p in item.payload["passages"]]
        return {"shown": rng.sample(systems, settings_of(item.study.config)["show"])}

    def page_context(self, item, assignment) -> dict:
        settings = settings_of(item.study.config)
        shown = shown_order(item, assignment.state if assignment else {}, settings["show"])
        return self._context(item, shown, settings)

    def _context(self, item, shown: list[str], settings: dict) -> dict:
        texts = {p["system"]: p["text"] for p in item.payload["passages"]}
        letters = [letter(i) for i in range(len(shown))]
        criteria = [
            {
                **criterion,
                "rows": [
                    {
                        "end": end,
                        "question": criterion[end],
                        "field": f"{criterion['id']}-{end}",
                        "selected": "",
                    }
                    for end in ("most", "least")
                ],
            }
            for criterion in settings["criteria"]
        ]
        passages = [{"letter": letters[i], "text": texts[system]} for i, system in enumerate(shown)]
        return {"fact": item.payload["fact"], "passages": passages, "letters": letters, "criteria": criteria}

    def answer_from_form(self, data: QueryDict, item, assignment) -> dict:
        shown = list(assignment.state.get("shown", []))
        by_letter = {letter(i): system for i, system in enumerate(shown)}
        choices = {}
        for criterion in settings_of(item.study.config)["criteria"]:
            choices[criterion["id"]] = {
                end: by_letter.get(data.get(f"{criterion['id']}-{end}", ""), "") for end in ("most", "least")
            }
        return {"shown": shown, "choices": choices}

    def import_answer(self, item, answer: dict) -> tuple[dict, dict]:
        """Answers collected elsewhere name systems directly; their ``shown`` is the state."""
        validated = self.validate_answer(item, answer)
        return validated, {"shown": validated["shown"]}

    def import_incomplete(self, item, answer: dict, refused) -> tuple[dict, dict, tuple[str, ...]]:
        """Whole criteria may be missing (listed as ``choices.<criterion>``); ``shown`` may
        not (the best-worst scores count every passage shown), nor half a criterion (a MOST
        without its LEAST has no place in the agreement or best-worst figures)."""
        validated = self.validate_answer(item, answer, incomplete=True)
        criteria = _ids(settings_of(item.study.config))
        missing = tuple(f"choices.{key}" for key in criteria if key not in validated["choices"])
        return validated, {"shown": validated["shown"]}, missing

    def review_context(self, item, answer: dict) -> dict:
        settings = settings_of(item.study.config)
        shown = shown_order(item, {"shown": answer.get("shown")}, settings["show"])
        context = self._context(item, shown, settings)
        letters = {system: letter(i) for i, system in enumerate(shown)}
        for criterion in context["criteria"]:
            chosen = answer.get("choices", {}).get(criterion["id"], {})
            for row in criterion["rows"]:
                row["selected"] = letters.get(chosen.get(row["end"]), "")
        return {**context, "answer": answer, "readonly": True}

    answerable_by_model = True

    def model_task(self, item, state: dict) -> ModelTask:
        """The fact and the passages under their letters, in the order of ``state``; per
        criterion a MOST and a LEAST question answered with a letter."""
        page = self.model_page(item, state)
        lines = [f"New fact: {page['fact']}"]
        for passage in page["passages"]:
            lines += ["", f"Passage {passage['letter']}:", passage["text"]]
        options = tuple(ModelOption(letter_, letter_, f"passage {letter_}") for letter_ in page["letters"])
        questions = tuple(
            ModelQuestion(
                f"{criterion['id']}.{row['end']}", f"{criterion['id']}.{row['end']}", row["question"], options
            )
            for criterion in page["criteria"]
            for row in criterion["rows"]
        )
        return ModelTask("\n".join(lines), questions)

    def answer_from_model(self, item, state: dict, chosen, scores=None) -> dict:
        """Letters back to systems. A MOST and LEAST on the same passage is settled by the
        scores (LEAST goes to the likeliest other passage); without scores the kind refuses it."""
        shown = list(state["shown"])
        by_letter = {letter(i): system for i, system in enumerate(shown)}
        choices = {}
        for criterion in settings_of(item.study.config)["criteria"]:
            most, least = chosen.get(f"{criterion['id']}.most"), chosen.get(f"{criterion['id']}.least")
            least_scores = (scores or {}).get(f"{criterion['id']}.least")
            if most == least and least_scores:
                others = {value: score for value, score in least_scores.items() if value != most}
                least = max(others, key=lambda value: others[value]) if others else least
            choices[criterion["id"]] = {"most": by_letter.get(most, ""), "least": by_letter.get(least, "")}
        return {"shown": shown, "choices": choices}

    def model_choices(self, item, state: dict, answer: dict) -> dict:
        letters = {
            system: letter(i) for i, system in enumerate(answer.get("shown") or state.get("shown", []))
        }
        return {
            f"{criterion}.{end}": letters[system]
            for criterion, choice in answer.get("choices", {}).items()
            for end, system in choice.items()
            if system in letters
        }

    def score(self, item, answer: dict) -> Score | None:
        if not item.gold:
            return None
        mismatched = [
            f"{criterion}.{end}"
            for criterion, expected in item.gold["choices"].items()
            for end, system in expected.items()
            if answer["choices"].get(criterion, {}).get(end) != system
        ]
        return Score(correct=not mismatched, details={"mismatched": mismatched})

    def quality_criteria(self, config: dict) -> list[QualityCriterion]:
        """Each criterion of the study: a MOST and a LEAST passage among those shown."""
        settings = settings_of(config)
        letters = [letter(index) for index in range(settings["show"])]
        values = tuple(f"{side} {name}" for side in ("MOST", "LEAST") for name in letters)
        shown = "one of several options (a MOST and a LEAST passage)"
        elicitation = str(self.evaluation["elicitation"])
        return [
            QualityCriterion(
                c["id"], f"{c['most']} / {c['least']}", values, shown, True, elicitation, c.get("title", "")
            )
            for c in settings["criteria"]
        ]

    def agreement_values(self, item, answer: dict) -> list[Observation]:
        """Per criterion the MOST and LEAST system (nominal), and per shown system its
        best-worst value +1 / 0 / -1 (ordinal, unit ``<item>#<system>``)."""
        unit = item.external_id
        values = []
        for criterion, choice in answer["choices"].items():
            values.append(Observation(unit, f"{criterion}.most", choice["most"], "nominal"))
            values.append(Observation(unit, f"{criterion}.least", choice["least"], "nominal"))
            for system in answer["shown"]:
                score = 1 if system == choice["most"] else -1 if system == choice["least"] else 0
                values.append(Observation(f"{unit}#{system}", criterion, score, "ordinal"))
        return values


def shown_order(item, state: dict, show: int) -> list[str]:
    """The recorded display order; the file's order where none was recorded (examples)."""
    shown = (state or {}).get("shown")
    if shown:
        return list(shown)
    return [p["system"] for p in item.payload["passages"]][:show]
