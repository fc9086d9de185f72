"""A fragment being decided (:class:`Reading`) and what is decided (:class:`Fragment`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._units import Units

if TYPE_CHECKING:
    from cofe.matching.answer._rules import Binder


@dataclass(frozen=True, slots=True)
class Fragment:
    decision: Decision
    text: str
    missing: tuple[str, ...] = ()  # units not in the answer, for evidence
    contradiction: str = ""  # another value the answer states instead (or a note)
    reading: str = ""  # how the fragment was read, when not as written ("New York")
    rules: tuple[str, ...] = ()  # the binders that accounted for units, then the decider


@dataclass(slots=True)
class Reading:
    """One fragment as the binders account for its units and the deciders settle it."""

    text: str
    frag: Units
    whole_names: tuple[str, ...]
    # the units that count: every unit, until the ``asked`` binder sets aside the question's
    evidence: frozenset[str]
    accounted: frozenset[str] = frozenset()
    # each binder that accounted for units, with the units it was first to account for
    bound: list[tuple[Binder, frozenset[str]]] = field(default_factory=list)

    @property
    def everything(self) -> frozenset[str]:
        return self.frag.all

    @property
    def missing(self) -> frozenset[str]:
        return self.evidence - self.accounted

    def account(self, binder: Binder, found: frozenset[str]) -> None:
        new = found - self.accounted
        if new:
            self.bound.append((binder, new))
            self.accounted |= new

    def set_aside(self, binder: Binder, evidence: frozenset[str]) -> None:
        """Only ``evidence`` counts from now on (named among the rules if it is less)."""
        if evidence != self.evidence:
            self.bound.append((binder, frozenset()))
        self.evidence = evidence

    def shown(self) -> tuple[str, ...]:
        """The missing units as a person reads them, sorted."""
        return tuple(sorted(self.frag.shown(unit) for unit in self.missing))

    def traced(self, ignore: frozenset[str] = frozenset()) -> bool:
        """A binder accounted for a unit that shows the answer touches the fragment (units in
        ``ignore`` show nothing: a currency is beside every amount)."""
        return any(
            (binder.trace == "always" and found - ignore)
            or (binder.trace == "evidence" and (found - ignore) & self.evidence)
            for binder, found in self.bound
        )
