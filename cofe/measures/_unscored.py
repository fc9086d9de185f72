from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Unscored:
    """A measure that could not be computed for a sample, and why (never a silent NaN)."""

    reason: str
