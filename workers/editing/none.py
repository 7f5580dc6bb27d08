"""The control: no edit. Passages come from the original model."""

from __future__ import annotations

from workers.lm.loading import LoadedLM

from .base import AppliedEdit
from .requests import EditRequest

NAME = "none"


def system_name(lm: LoadedLM) -> str:
    return lm.spec.tag


def touched_parameters(lm: LoadedLM, hp: dict) -> list[str]:
    return []


def apply(lm: LoadedLM, requests: list[EditRequest], hp: dict) -> AppliedEdit:
    return AppliedEdit(method=NAME, system=system_name(lm))
