"""Measures are immutable values whose name is also their CLI spelling and column.

``KeywordRecall(cutoff=4)`` is written ``KeywordRecall@4`` everywhere. A measure
says *what* is measured (``compute``, a pure function of plain values), where
it applies (``STEPS``) and what it reads (``evaluate``, from a ``StepView``);
the scorer decides which measures a run's shape allows and fills the views.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from cofe.measures._unscored import Unscored
from cofe.measures._view import Step, StepView


@dataclass(frozen=True)
class Measure:
    cutoff: int | None = None
    name: str = field(init=False, repr=False, compare=False)

    NAME: ClassVar[str] = ""
    NEEDS_CUTOFF: ClassVar[bool] = False
    STEPS: ClassVar[frozenset[Step]] = frozenset()  # where in the chain it applies
    HIGHER_IS_BETTER: ClassVar[bool] = True  # which way a comparison calls a run "best"
    REGISTRY: ClassVar[dict[str, type[Measure]]] = {}

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        Measure.REGISTRY[cls.NAME] = cls

    def __post_init__(self) -> None:
        if self.NEEDS_CUTOFF and self.cutoff is None:
            raise ValueError(f"{self.NAME} needs a cutoff, e.g. {self.NAME}@4")
        if self.cutoff is not None and self.cutoff < 1:
            raise ValueError(f"{self.NAME}: cutoff must be at least 1, got {self.cutoff}")
        # the spelling is read for every score row: computed once
        spelling = self.NAME if self.cutoff is None else f"{self.NAME}@{self.cutoff}"
        object.__setattr__(self, "name", spelling)

    def __str__(self) -> str:
        return self.name

    def evaluate(self, view: StepView) -> float | Unscored:
        """The measure for one sample at one step, from what the step's view holds."""
        raise NotImplementedError


_SPELLING = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9]*)(?:@(?P<cutoff>\d+))?$")


def parse_measure(text: str) -> Measure:
    """``"KeywordRecall@4"`` -> ``KeywordRecall(cutoff=4)``."""
    match = _SPELLING.match(text.strip())
    if not match or match["name"] not in Measure.REGISTRY:
        known = ", ".join(sorted(Measure.REGISTRY))
        raise ValueError(f"unknown measure {text!r}; known: {known}")
    cutoff = int(match["cutoff"]) if match["cutoff"] else None
    return Measure.REGISTRY[match["name"]](cutoff)


def top(ranks_cutoff: int | None, rank: int | None) -> bool:
    """Is a 1-based rank inside the cutoff (no cutoff: any found rank counts)?"""
    return rank is not None and (ranks_cutoff is None or rank <= ranks_cutoff)
