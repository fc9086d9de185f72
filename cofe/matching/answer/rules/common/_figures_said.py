"""What the figure deciders share: another figure the answer puts beside a unit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._figures import rounds_to

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher


def another_figure(m: AnswerMatcher, number: str, unit: str, *, before: bool = False) -> str:
    """A figure the answer puts beside ``unit`` (after it, or ``before`` it: "Hangzhou in
    1279") that is another value of ``number``'s kind ("220 feet" for "720 feet"; not
    "4 年", a duration, for "2000 年", a year; not a rounding, "2.5 billion" of "2.46
    billion"); "" if none."""
    pairs = ((n, w) for w, n in m._preceding) if before else m._measured
    for said, beside in pairs:
        if (
            beside == unit
            and said != number
            and len(said) == len(number)
            and not rounds_to(number, said)
        ):
            return said
    return ""
