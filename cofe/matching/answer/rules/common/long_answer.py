"""long-answer: in a long-form answer, words settle a description neither way -- it may say
the description in words of its own, and shares common words with it by chance."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._reading import Fragment
from cofe.matching.answer._rules import Case, Decider, register

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading

_LONG = (
    "Gifting a home can trigger gift taxes if the value exceeds the annual exclusion, which is "
    "around thirteen thousand dollars per giver per recipient per year. A couple could jointly "
    "give more each year without incurring gift taxes. Structuring the transaction as a loan "
    "with market-rate interest, forgiving portions as annual gifts, or placing the property in "
    "a trust are other strategies. These options have their own tax implications, so consulting "
    "an accountant or a lawyer is advisable for precise planning and for compliance."
)


def _decide(m: AnswerMatcher, r: Reading) -> Fragment | None:
    """Only a description: two units or more that count, some missing, none of them a figure
    or a name (a figure or a name is said as itself, however long the answer)."""
    missing = r.missing
    if not missing or len(r.evidence) < 2 or missing & (r.frag.numbers | r.frag.names):
        return None
    if not m.long:
        return None
    return Fragment(
        Decision.UNDECIDED,
        r.text,
        r.shown(),
        "a long answer may put a description in words of its own",
    )


LONG_ANSWER = register(
    Decider(
        "long-answer",
        "A description partly or wholly unsaid in a long-form answer: undecided, never blamed.",
        "common",
        _decide,
        reaches=(
            Case(_LONG, "deduct a certain amount", Decision.UNDECIDED),
            Case(_LONG, "gift taxes exceed exemption", Decision.UNDECIDED),
        ),
        misses=(
            Case("The weather was mild.", "massive exodus to the cities", Decision.ABSENT),
            Case(_LONG, "promissory", Decision.ABSENT),
            Case(_LONG, "a gift of 200,000 dollars", Decision.ABSENT),
        ),
    )
)
