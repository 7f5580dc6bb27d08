"""The value type every statistic in ``stats`` returns.

A figure is never just a float: reports need how many observations it rests on, and an
undefined figure (no variation, too few raters) must say why instead of raising.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Estimate:
    """A computed figure: ``value`` (NaN when undefined, with ``reason``), ``n`` and extras."""

    value: float
    n: int = 0
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def __float__(self) -> float:
        return float(self.value)

    @property
    def defined(self) -> bool:
        return not math.isnan(self.value)

    @classmethod
    def undefined(cls, reason: str, n: int = 0, **details: Any) -> Estimate:
        return cls(math.nan, n=n, reason=reason, details=details)
