"""The domain's tables; one module per entity."""

from .assignment import Assignment
from .enrollment import Enrollment
from .idempotency import IdempotencyKey
from .item import AttentionCheck, Item
from .job import Job
from .participant import Participant
from .response import Response
from .study import Study

__all__ = [
    "Assignment",
    "AttentionCheck",
    "Enrollment",
    "IdempotencyKey",
    "Item",
    "Job",
    "Participant",
    "Response",
    "Study",
]
