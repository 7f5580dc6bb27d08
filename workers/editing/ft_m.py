"""FT-M: FT-L's fine-tuning with the target teacher-forced after the prompt (see ``ft``)."""

from __future__ import annotations

from workers.lm.loading import LoadedLM

from . import ft
from .base import AppliedEdit
from .hparams import FtMHparams
from .requests import EditRequest

NAME = "ft_m"


def system_name(lm: LoadedLM) -> str:
    return "FT_M"


def touched_parameters(lm: LoadedLM, hp: FtMHparams) -> list[str]:
    return ft.touched_parameters(lm, hp)


def apply(lm: LoadedLM, requests: list[EditRequest], hp: FtMHparams) -> AppliedEdit:
    return ft.fine_tune(lm, requests, hp, teacher_forced=True, method=NAME, system=system_name(lm))
