"""The control: no edit. Passages come from the original model."""

from __future__ import annotations

from workers.lm.loading import LoadedLM

from .base import AppliedEdit
from .hparams import NoneHparams
from .requests import EditRequest

NAME = "none"


def system_name(lm: LoadedLM) -> str:
    return lm.spec.tag


def touched_parameters(lm: LoadedLM, hp: NoneHparams) -> list[str]:
    return []


def apply(lm: LoadedLM, requests: list[EditRequest], hp: NoneHparams) -> AppliedEdit:
    return AppliedEdit(method=NAME, system=system_name(lm))
