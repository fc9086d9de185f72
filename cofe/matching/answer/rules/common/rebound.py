"""rebound: every figure said, but beside another name ("Hangzhou in 1279 ... in 1276")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._reading import Fragment
from cofe.matching.answer._rules import Case, Decider, register
from cofe.matching.answer.rules.common._figures_said import another_figure

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


def _rebound(m: AnswerMatcher, r: Reading) -> str:
    # only beside a name: a common word ("investment", "年") recurs beside other figures,
    # across sentences the tokens do not mark
    frag = r.frag
    for number, unit in frag.measured:
        if unit in frag.names and (number, unit) not in m._measured:
            said = another_figure(m, number, unit)
            if said:
                return f"the answer gives {frag.shown(unit)!r} another figure, {said}"
    for unit, number in frag.preceding:
        if unit in frag.names and (unit, number) not in m._preceding:
            said = another_figure(m, number, unit, before=True)
            if said:
                return f"the answer gives {frag.shown(unit)!r} another figure, {said}"
    return ""


def _decide(m: AnswerMatcher, r: Reading) -> Fragment | None:
    if r.missing or not r.frag.numbers:
        return None
    rebound = _rebound(m, r)
    return Fragment(Decision.UNDECIDED, r.text, (), rebound) if rebound else None


REBOUND = register(
    Decider(
        "rebound",
        "Words and figures all said, but a name's figure is another one beside it: undecided.",
        "common",
        _decide,
        reaches=(
            Case(
                "He took Hangzhou in 1279 and won at Yamen in 1276.",
                "Hangzhou in 1276",
                Decision.UNDECIDED,
            ),
        ),
        misses=(Case("He took Hangzhou in 1276.", "Hangzhou in 1276"),),
    )
)
