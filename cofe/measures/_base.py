"""Measures are immutable values whose name is also their CLI spelling and column.

``KeywordRecall(cutoff=4)`` is written ``KeywordRecall@4`` everywhere. A measure
says *what* is measured (``compute``, a pure function of plain values), where
it applies (``STEPS``) and what it reads (``evaluate``, from a ``StepView``);
the scorer decides which measures a run's shape allows and fills the views.

A new measure is one subclass, registered by its ``NAME`` with ``@register``: it says
where it applies (``STEPS``), what a run must have for it (``NEEDS``), and whether every
scoring takes it (``DEFAULT``) or only one that asks for it (``cofe score --measures``).
Registration is explicit so that an abstract base (``JudgedMeasure``, no ``NAME``) is never
a measure, and a second class under a taken name is refused instead of replacing the
first. A package can ship measures under the ``cofe.measures`` entry-point group: they are
loaded, and registered, the first time a name is not found (docs/DESIGN.md, "Adding a
measure").
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar, TypeVar

from cofe._errors import ConfigurationError, InputError
from cofe.measures._unscored import Unscored
from cofe.measures._view import Step, StepView


class Need(StrEnum):
    """What a run must have for a measure to be taken (beyond its steps)."""

    RERANKER = "reranker"  # a reranker, and the pool it reordered recorded
    JUDGED = "judged"  # claim labels from `cofe judge`
    TOP_K = "top_k"  # a known number of chunks the generator received


class Cutoff(StrEnum):
    """How a measure is read at a ranked step (the pool, the context) when a scoring plans it.

    ``NONE``: whole, no cutoff. ``TOP_K``: at the run's top-K -- at the pool, top-K else the
    pool's own cutoff; at the context only when top-K is known. ``EACH``: at every cutoff the
    step has -- the pool at its own cutoff and at top-K, the context at top-K (whole when
    unknown); measures of this kind are listed cutoff by cutoff."""

    NONE = "none"
    TOP_K = "top_k"
    EACH = "each"


ENTRY_POINTS = "cofe.measures"
"""The entry-point group a package ships measures under (each entry: a module or a class)."""


@dataclass(frozen=True)
class Measure:
    cutoff: int | None = None
    name: str = field(init=False, repr=False, compare=False)

    NAME: ClassVar[str] = ""
    NEEDS_CUTOFF: ClassVar[bool] = False
    STEPS: ClassVar[frozenset[Step]] = frozenset()  # where in the chain it applies
    HIGHER_IS_BETTER: ClassVar[bool] = True  # which way a comparison calls a run "best"
    NEEDS: ClassVar[frozenset[Need]] = frozenset()  # what a run must have for it
    # taken by every scoring whose run allows it (after cofe's own, at each step); False:
    # only when asked for by name. cofe's own (cofe.measures.OWN) are always taken
    DEFAULT: ClassVar[bool] = False
    # how a scoring reads it at a ranked step; None: TOP_K when it needs a cutoff, else NONE
    CUTOFF: ClassVar[Cutoff | None] = None
    # the steps a scoring takes it at unasked (None: all its STEPS); by name, only there too
    TAKEN_AT: ClassVar[frozenset[Step] | None] = None
    REGISTRY: ClassVar[dict[str, type[Measure]]] = {}  # filled by register()

    def __post_init__(self) -> None:
        if self.NEEDS_CUTOFF and self.cutoff is None:
            raise InputError(f"{self.NAME} needs a cutoff, e.g. {self.NAME}@4")
        if self.cutoff is not None and self.cutoff < 1:
            raise InputError(f"{self.NAME}: cutoff must be at least 1, got {self.cutoff}")
        # the spelling is read for every score row: computed once
        spelling = self.NAME if self.cutoff is None else f"{self.NAME}@{self.cutoff}"
        object.__setattr__(self, "name", spelling)

    def __str__(self) -> str:
        return self.name

    @classmethod
    def cutoff_rule(cls) -> Cutoff:
        """How a scoring reads it at a ranked step (``CUTOFF``, else from ``NEEDS_CUTOFF``)."""
        if cls.CUTOFF is not None:
            return cls.CUTOFF
        return Cutoff.TOP_K if cls.NEEDS_CUTOFF else Cutoff.NONE

    @classmethod
    def taken_at(cls) -> frozenset[Step]:
        """The steps a scoring takes it at (``TAKEN_AT``, else its ``STEPS``)."""
        return cls.STEPS if cls.TAKEN_AT is None else cls.TAKEN_AT

    def evaluate(self, view: StepView) -> float | Unscored:
        """The measure for one sample at one step, from what the step's view holds."""
        raise NotImplementedError


M = TypeVar("M", bound=type[Measure])


def register(cls: M) -> M:
    """Register a measure class under its ``NAME`` (a class decorator). A class with no
    ``NAME`` is a base, not a measure, and a ``NAME`` another class holds is taken: both
    are refused (``TypeError``, ``ValueError``: mistakes in the measure's code)."""
    if not cls.NAME:
        raise TypeError(f"{cls.__qualname__} has no NAME: a base class is not registered")
    held = Measure.REGISTRY.get(cls.NAME)
    if held is not None and held is not cls:
        raise ValueError(
            f"a measure named {cls.NAME!r} is already registered "
            f"({held.__module__}.{held.__qualname__})"
        )
    Measure.REGISTRY[cls.NAME] = cls
    return cls


def _register_shipped(loaded: object) -> None:
    """What an entry point names -- a measure class, or a module of them -- registered (a
    class its module registered already is left as it is)."""
    found = [loaded] if isinstance(loaded, type) else list(vars(loaded).values())
    for value in found:
        if isinstance(value, type) and issubclass(value, Measure) and value.NAME:
            register(value)


_loaded: list[bool] = []


def load_plugins() -> None:
    """Import the measures other packages ship (entry-point group ``cofe.measures``), once;
    a plugin that fails to load is named in the error."""
    if _loaded:
        return
    _loaded.append(True)
    from importlib.metadata import entry_points  # only when a name is not cofe's own

    for entry in entry_points(group=ENTRY_POINTS):
        try:
            _register_shipped(entry.load())
        except Exception as error:  # a third party's import error, whatever it is
            raise ConfigurationError(
                f"the measure plugin {entry.name!r} ({entry.value}) failed to load: {error}"
            ) from error


_SPELLING = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9]*)(?:@(?P<cutoff>\d+))?$")


def parse_measure(text: str) -> Measure:
    """``"KeywordRecall@4"`` -> ``KeywordRecall(cutoff=4)``."""
    match = _SPELLING.match(text.strip())
    if match and match["name"] not in Measure.REGISTRY:
        load_plugins()
    if not match or match["name"] not in Measure.REGISTRY:
        known = ", ".join(sorted(Measure.REGISTRY))
        raise InputError(f"unknown measure {text!r}; known: {known}")
    cutoff = int(match["cutoff"]) if match["cutoff"] else None
    return Measure.REGISTRY[match["name"]](cutoff)


_SPEC = re.compile(r"^(?:(?P<step>[a-z-]+)/)?(?P<measure>[^/]+)$")


def parse_measures(text: str) -> tuple[tuple[Step | None, Measure], ...]:
    """A list of measures as ``cofe score --measures`` takes it: comma-separated, each
    ``[step/]Name[@cutoff]`` (``"KeywordRecall@4,answer/PointRecall,nDCG@10"``); the
    name's case does not matter. Without a step, a measure is taken at every step it
    applies to. Raises ValueError naming the spelling that cannot be read."""
    load_plugins()
    by_lower = {name.lower(): name for name in Measure.REGISTRY}
    steps = {step.value: step for step in Step}
    out: list[tuple[Step | None, Measure]] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        spec = _SPEC.match(part)
        if spec is None:
            raise InputError(f"cannot read measure {part!r}: write [step/]Name[@cutoff]")
        step: Step | None = None
        if spec["step"] is not None:
            step = steps.get(spec["step"])
            if step is None:
                raise InputError(
                    f"unknown step {spec['step']!r} in {part!r}; steps: {', '.join(steps)}"
                )
        name, _, cutoff = spec["measure"].partition("@")
        canonical = by_lower.get(name.lower())
        if canonical is None:
            close = difflib.get_close_matches(name.lower(), by_lower, n=3)
            hint = f"; did you mean {', '.join(by_lower[c] for c in close)}?" if close else ""
            raise InputError(f"unknown measure {name!r} in {part!r}{hint}")
        measure = parse_measure(canonical + (f"@{cutoff}" if cutoff else ""))
        if step is not None and step not in measure.STEPS:
            where = ", ".join(s.value for s in Step if s in measure.STEPS)
            raise InputError(f"{measure.name} is not measured at {step.value} (only at {where})")
        if (step, measure) not in out:
            out.append((step, measure))
    if not out:
        raise InputError("no measure given")
    return tuple(out)


def spell_measures(chosen: tuple[tuple[Step | None, Measure], ...]) -> str:
    """The canonical spelling of a parsed list (what a scoring records)."""
    return ",".join(m.name if s is None else f"{s.value}/{m.name}" for s, m in chosen)


def top(ranks_cutoff: int | None, rank: int | None) -> bool:
    """Is a 1-based rank inside the cutoff (no cutoff: any found rank counts)?"""
    return rank is not None and (ranks_cutoff is None or rank <= ranks_cutoff)
