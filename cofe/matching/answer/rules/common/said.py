"""said: a unit the answer writes (a Chinese word wherever the answer writes it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._rules import Binder, Case, register
from cofe.matching.answer._text import cjk_unit

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


def _bind(m: AnswerMatcher, r: Reading) -> frozenset[str]:
    answer, text = m._answer, m._text
    # a Chinese word counts wherever the answer writes it, however jieba cut the answer
    return frozenset(u for u in r.missing if u in answer or (cjk_unit(u) and u in text))


SAID = register(
    Binder(
        "said",
        "A unit of the fragment that is a unit of the answer (the plain case).",
        "common",
        _bind,
        reaches=(Case("The Current Annual Salaries were high.", "current annual salary"),),
        misses=(Case("The weather was mild.", "massive exodus", Decision.ABSENT),),
    )
)
