"""no-content: a fragment with no content unit (function words only) is undecided."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._reading import Fragment
from cofe.matching.answer._rules import Case, Decider, register

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


def _decide(m: AnswerMatcher, r: Reading) -> Fragment | None:
    return None if r.everything else Fragment(Decision.UNDECIDED, r.text)


NO_CONTENT = register(
    Decider(
        "no-content",
        "A fragment of function words only says nothing the words can check: undecided.",
        "common",
        _decide,
        reaches=(Case("It was there.", "it was", Decision.UNDECIDED),),
        misses=(Case("It was there.", "castle", Decision.ABSENT),),
    )
)
