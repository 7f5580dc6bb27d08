"""The domain's tables; one module per entity."""

from .adjudication import Adjudication
from .assignment import Assignment
from .enrollment import Enrollment
from .erasure import Erasure
from .exam import Exam, ExamAttempt
from .game import PlayerStats
from .idempotency import IdempotencyKey
from .invitation import ResearcherInvitation
from .item import AttentionCheck, Item
from .job import Job
from .judge import JudgeEndpoint, JudgeExchange
from .model_output import ModelOutput
from .participant import Participant
from .platform import (
    Platform,
    PlatformBonus,
    PlatformCall,
    PlatformDecision,
    PlatformEvent,
    PlatformStudy,
    ResearcherToken,
)
from .response import Response
from .simulatability import FollowUp, ModelExplanation
from .study import Study, StudyShare
from .version import StudyVersion

__all__ = [
    "Adjudication",
    "Assignment",
    "AttentionCheck",
    "Enrollment",
    "Erasure",
    "Exam",
    "ExamAttempt",
    "FollowUp",
    "IdempotencyKey",
    "Item",
    "Job",
    "JudgeEndpoint",
    "JudgeExchange",
    "ModelExplanation",
    "ModelOutput",
    "Participant",
    "Platform",
    "PlatformBonus",
    "PlatformCall",
    "PlatformDecision",
    "PlatformEvent",
    "PlatformStudy",
    "PlayerStats",
    "ResearcherInvitation",
    "ResearcherToken",
    "Response",
    "Study",
    "StudyShare",
    "StudyVersion",
]
