"""converted: a figure the answer states in another unit of the same kind ("764 miles")."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._figures import kind, same_quantity
from cofe.matching.answer._rules import Binder, Case, register

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading

_NEGATIVE = re.compile(r"[−–-]\s?\d|\bminus\b|\bbelow (?:zero|freezing)\b", re.I)


def _signed(m: AnswerMatcher, r: Reading) -> bool:
    """A minus sign by a figure, on either side: the units carry no sign, so "-10 °C"
    would convert as 10 °C (50 °F)."""
    return bool(_NEGATIVE.search(m._answer_text) or _NEGATIVE.search(r.frag.source))


def _bind(m: AnswerMatcher, r: Reading) -> frozenset[str]:
    out: set[str] = set()
    for number, unit in r.frag.measured:
        measured = kind(unit)
        if not measured:
            continue
        for said in m._measured:
            if (
                said[1] != unit
                and kind(said[1]) == measured
                and not (measured == "temperature" and _signed(m, r))
                and same_quantity((number, unit), said)
            ):
                out |= {number, unit}
    return frozenset(out)


CONVERTED = register(
    Binder(
        "converted",
        "A figure with its unit, stated in another unit of its kind within both roundings.",
        "common",
        _bind,
        reaches=(
            Case("Until 1932 a length of 764 miles was accepted.", "1,230 kilometres"),
            Case("The record is 46 degrees Celsius.", "115 °F"),
        ),
        misses=(
            Case("It fell to −10 °C.", "50 °F", Decision.UNDECIDED),
            Case("It is 2000 km long.", "1,200 miles", Decision.UNDECIDED),
        ),
        applies=lambda m, r: bool(r.frag.measured and r.frag.numbers - r.accounted),
    )
)
