from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Unscored:
    """A measure that could not be computed for a sample, and why (never a silent NaN)."""

    reason: str


def value_or(value: T | None, missing: Unscored, why: str | None = None) -> T | Unscored:
    """``value``, or -- when there is none -- why: ``why`` when one was given, else
    ``missing`` (the measure's own words for "not computed")."""
    if value is not None:
        return value
    return Unscored(why) if why else missing
