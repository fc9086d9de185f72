"""other-value: the answer states another figure beside the fragment's unit: absent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._reading import Fragment
from cofe.matching.answer._rules import Case, Decider, register
from cofe.matching.answer.rules.common._figures_said import another_figure

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


def _decide(m: AnswerMatcher, r: Reading) -> Fragment | None:
    frag = r.frag
    missing_numbers = frag.numbers & r.missing
    if not missing_numbers or len(frag.numbers) > 1:
        return None  # with several figures, another one beside the same unit may be apart
    for number, unit in frag.measured:
        said = another_figure(m, number, unit) if number in missing_numbers else ""
        if said and number in frag.written:  # read in a base unit: say it in that unit
            other = f"the answer says {said} {unit}s where it asks {number}"
        elif said:
            other = f"the answer says {said} {frag.shown(unit)}"
        else:
            continue
        return Fragment(Decision.ABSENT, r.text, r.shown(), other)
    return None


OTHER_VALUE = register(
    Decider(
        "other-value",
        "The fragment's one figure is missing and the answer puts another beside its unit.",
        "common",
        _decide,
        reaches=(Case("The facade is 220 feet long.", "720 feet", Decision.ABSENT),),
        misses=(Case("The facade is long.", "720 feet", Decision.ABSENT),),
    )
)
