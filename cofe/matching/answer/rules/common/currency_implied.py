"""currency-implied: the fragment's currency, when the answer gives the figure and names no
currency at all ("25.9 billion" for "$25.9 billion": the question's context fixes it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._rules import Binder, Case, register

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading

CURRENCIES = frozenset(("usd", "eur", "gbp", "cny", "jpy"))


def _bind(m: AnswerMatcher, r: Reading) -> frozenset[str]:
    """Only once every figure of the fragment is accounted for, and only when the answer
    states no currency (one that names another -- "25.9 billion euros" -- is not met)."""
    if r.frag.numbers - r.accounted or CURRENCIES & m._answer:
        return frozenset()
    return frozenset(u for u in r.missing if u in CURRENCIES)


CURRENCY_IMPLIED = register(
    Binder(
        "currency-implied",
        "The fragment's currency, when the answer gives its figure and names no currency.",
        "common",
        _bind,
        reaches=(Case("Revenue was 25.9 billion in 2023.", "$25.9 billion"),),
        misses=(
            Case("Revenue was 25.9 billion euros.", "$25.9 billion", Decision.UNDECIDED),
            Case("Revenue was 24 billion.", "$25.9 billion", Decision.ABSENT),
        ),
        applies=lambda m, r: bool(CURRENCIES & r.missing),
        trace="never",
    )
)
