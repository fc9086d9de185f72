"""figure-declined: in an answer that declines part of what it is asked, a fragment's figure
stated in no form (not its digits, not rounded, not converted, not its last digits) was
declined, not reworded: absent. Outside a decline such a figure stays open (words may say
it: "a third", "the eighties"); an answer that says it cannot give the figure and gives no
form of it has not given it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._reading import Fragment
from cofe.matching.answer._rules import Case, Decider, register
from cofe.matching.answer.rules.common.figure_missing import untold

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


def _decide(m: AnswerMatcher, r: Reading) -> Fragment | None:
    if not m.declining or any(binder.name == "converted" for binder, _ in r.bound):
        return None
    for number in sorted(r.missing & r.frag.numbers):
        if not untold(m, r, number):
            continue
        return Fragment(
            Decision.ABSENT,
            r.text,
            r.shown(),
            f"the answer declines and states {r.frag.shown(number)} in no form",
        )
    return None


_DECLINES = (
    "To find the percentage we would need the number of girls in the coastal areas, "
    "which the context does not give; most prostitutes are aged 9-18."
)

FIGURE_DECLINED = register(
    Decider(
        "figure-declined",
        "An answer that declines, and the fragment's figure in no form: absent (declined).",
        "common",
        _decide,
        reaches=(
            Case(_DECLINES, "30%", Decision.ABSENT, declining=True),
            Case(
                "文中没有提到具体面积，只说它位于城北。",
                "约1200公顷",
                Decision.ABSENT,
                declining=True,
            ),
        ),
        misses=(
            Case(_DECLINES, "30%", Decision.UNDECIDED),  # no decline read: words may say it
            Case(
                "The context does not give the exact share; it was about thirty percent.",
                "30%",
                declining=True,
            ),
            Case("The context does not say; roughly 29.6% by one count.", "30%", declining=True),
            Case(
                "It lasted a few years; the context gives no date.",
                "3 years",
                Decision.UNDECIDED,
                declining=True,
            ),
        ),
    )
)
