"""What the answer step decides about a point, by which rule, and why."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Decision(StrEnum):
    """Whether an answer conveys an information point (or one of its fragments)."""

    PRESENT = "present"
    PARTIAL = "partial"  # some fragments conveyed, others established absent
    ABSENT = "absent"
    UNDECIDED = "undecided"  # partial overlap the offline matcher cannot settle
    DECLINED = "declined"  # the answer says it cannot give this point (ranked as absent)

    @property
    def conveyed(self) -> bool | None:
        """True / False when settled (a partial point is not conveyed whole); None undecided."""
        if self is Decision.UNDECIDED:
            return None
        return self is Decision.PRESENT


# best first, where decisions are compared (the best alternative of a slot): a declined
# fragment is as far from conveyed as an absent one
RANK = {
    Decision.PRESENT: 0,
    Decision.UNDECIDED: 1,
    Decision.PARTIAL: 2,
    Decision.ABSENT: 3,
    Decision.DECLINED: 3,
}


class DecidedBy(StrEnum):
    """What decided: the words themselves, the paraphrase matcher, or the LLM judge."""

    VERBATIM = "verbatim"
    PARAPHRASE = "paraphrase"
    JUDGE = "judge"
    REFUSAL = "refusal"  # the answer declines the point (cofe.refusal's rules)


@dataclass(frozen=True, slots=True)
class PointDecision:
    decision: Decision
    rule: DecidedBy
    why: str = ""  # evidence a person can check: what was (not) found
    # the names of the matcher's rules that decided (cofe.matching.answer), in order
    rules: tuple[str, ...] = ()
