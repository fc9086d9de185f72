"""abbreviation: "United Kingdom" said as "UK", "FCC" spelt out as its name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._rules import Binder, Case, register
from cofe.matching.answer._units import initialisms, unit

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


def _bind(m: AnswerMatcher, r: Reading) -> frozenset[str]:
    covered: set[str] = set()
    for letters, names in initialisms(r.text).items():
        if letters in m._acronyms:
            covered |= names
    if r.frag.acronyms:
        spelt = initialisms(m._answer_text)
        for acronym in r.frag.acronyms & spelt.keys():
            found = unit(acronym)
            if found is not None:
                covered.add(found[0])
    return frozenset(covered) & r.missing


def _applies(m: AnswerMatcher, r: Reading) -> bool:
    missing = r.missing
    return bool(missing) and bool(r.frag.acronyms or (m._acronyms and r.frag.names & missing))


ABBREVIATION = register(
    Binder(
        "abbreviation",
        "Capitalised words the answer writes as their acronym, or an acronym it spells out.",
        "en",
        _bind,
        reaches=(
            Case(
                "The bill went to the Supreme Court of the UK.",
                "Supreme Court of the United Kingdom",
            ),
            Case("a logo based on the Federal Communications Commission seal", "seal of the FCC"),
        ),
        misses=(Case("The weather was mild.", "United Kingdom", Decision.ABSENT),),
        applies=_applies,
        trace="never",
    )
)
