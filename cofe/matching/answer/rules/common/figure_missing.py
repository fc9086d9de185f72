"""figure-missing: the answer gives another figure where the fragment has one -- beside the
same unit ("57米" where "2846米" is asked), or a bare
figure of as many digits (a year for a year) -- and states the fragment's figure in no form
(not its digits, not rounded, not converted, not its last digits): not conveyed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._reading import Fragment
from cofe.matching.answer._rules import Case, Decider, register
from cofe.matching.answer._text import NOT_DIGIT
from cofe.matching.answer.rules.common.no_trace import touched

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


def untold(m: AnswerMatcher, r: Reading, number: str) -> bool:
    """The answer states the fragment's figure in no form: not its digits, not rounded, not
    converted, not its last digits ("八十年代" for the 1980s, "'98" for 1998; ``touched``).
    A one-digit figure ("1", "6") never counts: as often a counting word ("一位") as one."""
    digits = NOT_DIGIT.sub("", number)
    return (
        len(digits.lstrip("0")) >= 2
        and not touched(m, number, r.frag)
        # its last digits, also of a time ("20:10"), which ``touched`` reads by its hour
        and not any(len(said) >= 2 and digits.endswith(said) for said in m._digits)
    )


def _instead(m: AnswerMatcher, r: Reading, number: str) -> str:
    """The figure the answer gives in the fragment figure's place ("" if none, or if the
    answer may state the figure in a form the units do not read)."""
    if not untold(m, r, number):
        return ""
    digits = NOT_DIGIT.sub("", number)
    units = {u for n, u in r.frag.measured if n == number}
    if units:
        found = sorted(f"{n} {u}" for n, u in m._measured if u in units and n != number)
    else:
        bound = {n for n, _ in m._measured}
        found = sorted(
            n for n in m._numbers if n not in bound and len(NOT_DIGIT.sub("", n)) == len(digits)
        )
    return found[0] if found else ""


def _decide(m: AnswerMatcher, r: Reading) -> Fragment | None:
    if any(binder.name == "converted" for binder, _ in r.bound):
        return None  # the answer restates the fragment's figures in another unit ("0.5-1.4 m")
    for number in sorted(r.missing & r.frag.numbers):
        said = _instead(m, r, number)
        if said:
            return Fragment(
                Decision.ABSENT,
                r.text,
                r.shown(),
                f"the answer gives {said} in its place, and {r.frag.shown(number)} in no form",
            )
    return None


FIGURE_MISSING = register(
    Decider(
        "figure-missing",
        "Another figure in the fragment figure's place, and the fragment's in no form: absent.",
        "common",
        _decide,
        reaches=(
            Case("支洞里有一根长57米的石枝。", "全长2846米", Decision.ABSENT),
            Case("The bridge opened in 1932.", "opened in 1937", Decision.ABSENT),
        ),
        misses=(
            Case("从二十世纪八十年代起，湖里才有了鱼。", "1980年代", Decision.UNDECIDED),
            Case("大约四分之三的居民都生活在市内。", "75%的居民", Decision.UNDECIDED),
            Case("截至2010年底，共建成三条线路。", "2010年12月31日", Decision.UNDECIDED),
            Case("It runs about 2.8 km.", "2,846 metres"),
            Case("Seas will rise by 0.5-1.4 meters.", "50–140 cm", Decision.UNDECIDED),
        ),
    )
)
