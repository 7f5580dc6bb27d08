"""The domain's tables; one module per entity."""

from .adjudication import Adjudication
from .assignment import Assignment
from .enrollment import Enrollment
from .exam import Exam, ExamAttempt
from .game import PlayerStats
from .idempotency import IdempotencyKey
from .item import AttentionCheck, Item
from .job import Job
from .model_output import ModelOutput
from .participant import Participant
from .response import Response
from .study import Study

__all__ = [
    "Adjudication",
    "Assignment",
    "AttentionCheck",
    "Enrollment",
    "Exam",
    "ExamAttempt",
    "IdempotencyKey",
    "Item",
    "Job",
    "ModelOutput",
    "Participant",
    "PlayerStats",
    "Response",
    "Study",
]
