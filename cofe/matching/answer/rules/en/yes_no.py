"""yes-no: a fragment that is only "yes" or "no" (the gist of a yes/no question) is settled
by the word the answer opens with: "Yes, ..." conveys "yes", "No. ..." states the other.
An answer that opens otherwise is left open (words cannot tell "It is capital-intensive"
from a hedge)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from cofe.matching.answer._decision import Decision
from cofe.matching.answer._reading import Fragment
from cofe.matching.answer._rules import Case, Decider, register

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading

_POLAR = re.compile(r"\W*(yes|no)\W*", re.I)
# the answer's opening word, after markdown marks, a heading and a courtesy ("Short answer:")
_OPENING = re.compile(
    r"[\s*_#>\-]*(?:(?:short |direct |the )?answer\s*[:\-]\s*[\s*_]*)?(yes|no)\b(?!\s+(?:one|longer|more|less|doubt|matter|other)\b)",
    re.I,
)


def _decide(m: AnswerMatcher, r: Reading) -> Fragment | None:
    polar = _POLAR.fullmatch(r.text)
    if polar is None:
        return None
    said = _OPENING.match(m._answer_text)
    if said is None:
        return None  # opens otherwise: left to the deciders after it (no-content: undecided)
    if said[1].lower() == polar[1].lower():
        return Fragment(Decision.PRESENT, r.text)
    return Fragment(
        Decision.ABSENT, r.text, (polar[1].lower(),), f"the answer opens with {said[1]!r}"
    )


YES_NO = register(
    Decider(
        "yes-no",
        'A fragment that is only "yes" or "no", settled by the word the answer opens with.',
        "en",
        _decide,
        reaches=(
            Case(
                "Yes, 3M is a capital-intensive business.",
                "Yes",
                question="Is 3M capital-intensive?",
            ),
            Case("**No.** The company did not pay a dividend.", "yes", Decision.ABSENT),
            Case("Short answer: no -- it did not.", "No"),
        ),
        misses=(
            Case("3M is a capital-intensive business.", "yes", Decision.UNDECIDED),
            Case("No one knows the answer, but yes, it was.", "yes", Decision.UNDECIDED),
            Case("Yes, it was.", "yes sir", Decision.ABSENT),
        ),
    )
)
