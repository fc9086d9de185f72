"""complete: every unit that counts is accounted for: present."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._reading import Fragment
from cofe.matching.answer._rules import Case, Decider, register

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


def _decide(m: AnswerMatcher, r: Reading) -> Fragment | None:
    return None if r.missing else Fragment(Decision.PRESENT, r.text)


COMPLETE = register(
    Decider(
        "complete",
        "Every unit of the fragment that counts is said or accounted for by a binder: present.",
        "common",
        _decide,
        reaches=(Case("It took five years.", "5 years"),),
        misses=(Case("It became a weekly show.", "regular weekly show"),),
    )
)
