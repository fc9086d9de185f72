"""zh-swapped: a Chinese character replaced inside the same phrase ("东开普" as "西开普")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching._normalize import is_cjk
from cofe.matching.answer._decision import Decision
from cofe.matching.answer._reading import Fragment
from cofe.matching.answer._rules import Case, Decider, register
from cofe.matching.answer._text import cjk_unit

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


def swapped(fragment: str, answer: str, missing: frozenset[str]) -> str:
    """One character carries a word's meaning (a direction, a rank, a synonym): the swap
    cannot be settled by characters. The answer's phrase, or ""."""
    chars = {char for unit in missing if cjk_unit(unit) for char in unit}
    for i, char in enumerate(fragment):
        if char not in chars or i == 0 or i + 1 >= len(fragment):
            continue
        before, after = fragment[i - 1], fragment[i + 1]
        if not (is_cjk(before) and is_cjk(after)):
            continue
        start = answer.find(before)
        while start != -1 and start + 2 < len(answer):
            if answer[start + 2] == after and answer[start + 1] != char:
                return answer[start : start + 3]
            start = answer.find(before, start + 1)
    return ""


def _decide(m: AnswerMatcher, r: Reading) -> Fragment | None:
    found = swapped(r.frag.text, m._text, r.missing) if r.frag.text else ""
    if not found:
        return None
    return Fragment(Decision.UNDECIDED, r.text, (*r.shown(), f"{found} in the answer"))


SWAPPED = register(
    Decider(
        "zh-swapped",
        "A character of the fragment replaced by another inside the same three: undecided.",
        "zh",
        _decide,
        reaches=(Case("机场位于南非西开普省", "南非东开普省", Decision.UNDECIDED),),
        misses=(Case("他们决定捐献土地建校。", "捐献土地建校"),),
    )
)
