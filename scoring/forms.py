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
    Plan,
    PlanChoices,
    plan_agreement,
    plan_comparison,
)

# Fewer simulated studies than the command's default: the page answers while one waits.
PAGE_SIMULATIONS = 400


class PlanForm(forms.Form):
    """Either two systems and a difference (with power and level) or an alpha interval width;
    the ranges are the service's to check (its errors come back on these fields)."""

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

    def __init__(self, *args, choices: PlanChoices | None = None, **kwargs):
        """``choices``: the study's questions and systems, offered as lists (free text where
        the study names none: a kind whose questions the page cannot list)."""
        super().__init__(*args, **kwargs)
        if choices is None:
            return
        if choices.questions:
            self.fields["question"] = forms.ChoiceField(choices=choices.questions)
        if choices.systems:
            offered = [("", "—"), *((name, name) for name in choices.systems)]
            for name, label in (("first", "System A"), ("second", "System B")):
                self.fields[name] = forms.ChoiceField(choices=offered, required=False, label=label)

    def clean(self) -> dict:
        data = super().clean() or {}
        comparing = bool(data.get("first") or data.get("second") or data.get("difference") is not None)
        if comparing == (data.get("agreement_width") is not None):
            raise forms.ValidationError("Give two systems and a difference, or an alpha interval width.")
        if comparing and not (
            data.get("first") and data.get("second") and data.get("difference") is not None
        ):
            raise forms.ValidationError("A comparison needs system A, system B and the difference.")
        return data

    def plan(self, study: Study) -> Plan | AgreementPlan:
        """The service's plan for the valid form (``InputError`` for a target it refuses)."""
        data = self.cleaned_data
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
