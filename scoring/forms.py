"""The plan page's form: the target of a planned study, as ``manage.py plan`` takes it."""

from __future__ import annotations

from django import forms

from annotation.models import Study
from scoring.planning import (
    DEFAULT_ALPHA,
    DEFAULT_POWER,
    AgreementPlan,
    AgreementTarget,
    ComparisonTarget,
    HybridPlan,
    HybridTarget,
    Plan,
    PlanChoices,
    plan_agreement,
    plan_comparison,
    plan_hybrid,
)

# Fewer simulated studies than the command's default: the page answers while one waits.
PAGE_SIMULATIONS = 400


class PlanForm(forms.Form):
    """Either two systems and a difference (with power and level) or an alpha interval width;
    where the study has a judge, also the hybrid question (``judge_answers`` with a mean's
    ``width`` or a comparison: ``manage.py plan --judge-answers``). The ranges are the
    service's to check (its errors come back on these fields)."""

    question = forms.CharField(max_length=60)
    first = forms.CharField(max_length=200, required=False, label="System A")
    second = forms.CharField(max_length=200, required=False, label="System B")
    difference = forms.FloatField(
        required=False,
        help_text="a scale: mean rating of A less B, in scale points; a pick: A's share of the picks "
        "less B's (a win rate of 60% is 0.2)",
    )
    power = forms.FloatField(initial=DEFAULT_POWER, required=False)
    alpha = forms.FloatField(initial=DEFAULT_ALPHA, required=False, label="Significance level")
    agreement_width = forms.FloatField(
        required=False, label="Alpha interval width", help_text="instead of a comparison"
    )
    price = forms.FloatField(required=False, label="Price per answer")
    judge_answers = forms.IntegerField(
        required=False,
        label="Judge answers",
        help_text="the hybrid question: beside this many answers of the study's judge (on items no "
        "person answers), how many human answers reach the target",
    )
    width = forms.FloatField(
        required=False,
        label="Mean interval width",
        help_text="with judge answers, instead of a comparison: the widest 95% interval of the "
        "question's mean",
    )

    def __init__(self, *args, choices: PlanChoices | None = None, **kwargs):
        """``choices``: the study's questions and systems, offered as lists (free text where
        the study names none: a kind whose questions the page cannot list); the hybrid
        question's fields only where a judge answered."""
        super().__init__(*args, **kwargs)
        if choices is None:
            return
        if not choices.judged:
            del self.fields["judge_answers"], self.fields["width"]
        if choices.questions:
            self.fields["question"] = forms.ChoiceField(choices=choices.questions)
        if choices.systems:
            offered = [("", "—"), *((name, name) for name in choices.systems)]
            for name, label in (("first", "System A"), ("second", "System B")):
                self.fields[name] = forms.ChoiceField(choices=offered, required=False, label=label)

    def clean(self) -> dict:
        data = super().clean() or {}
        comparing = bool(data.get("first") or data.get("second") or data.get("difference") is not None)
        if data.get("judge_answers") is not None:
            if data.get("agreement_width") is not None:
                raise forms.ValidationError("With judge answers: a mean's width or a comparison, not alpha.")
            if comparing == (data.get("width") is not None):
                raise forms.ValidationError(
                    "With judge answers, give a mean interval width, or two systems and a difference."
                )
        elif data.get("width") is not None:
            self.add_error("width", "The width of a mean is planned beside judge answers.")
        elif comparing == (data.get("agreement_width") is not None):
            raise forms.ValidationError("Give two systems and a difference, or an alpha interval width.")
        if comparing and not (
            data.get("first") and data.get("second") and data.get("difference") is not None
        ):
            raise forms.ValidationError("A comparison needs system A, system B and the difference.")
        return data

    def plan(self, study: Study) -> Plan | AgreementPlan | HybridPlan:
        """The service's plan for the valid form (``InputError`` for a target it refuses)."""
        data = self.cleaned_data
        if data.get("judge_answers") is not None:
            return plan_hybrid(study, self._hybrid_target(data))
        if data.get("agreement_width") is not None:
            target = AgreementTarget(data["question"], data["agreement_width"])
            return plan_agreement(study, target, price=data["price"], simulations=PAGE_SIMULATIONS)
        comparison = ComparisonTarget(
            data["first"],
            data["second"],
            data["question"],
            data["difference"],
            DEFAULT_POWER if data["power"] is None else data["power"],
            DEFAULT_ALPHA if data["alpha"] is None else data["alpha"],
        )
        return plan_comparison(study, comparison, price=data["price"], simulations=PAGE_SIMULATIONS)

    @staticmethod
    def _hybrid_target(data: dict) -> HybridTarget:
        comparing = data.get("width") is None
        return HybridTarget(
            question=data["question"],
            judge_answers=data["judge_answers"],
            width=data.get("width"),
            compare=(data["first"], data["second"]) if comparing else None,
            difference=data.get("difference"),
            power=DEFAULT_POWER if data["power"] is None else data["power"],
            alpha=DEFAULT_ALPHA if data["alpha"] is None else data["alpha"],
        )
