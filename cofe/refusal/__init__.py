"""Answers that decline: named rules over data, English and Chinese.

``read_decline(answer)`` finds an answer's first decline, the rule that found it and its
extent (whole, partial, or answered anyway); ``refusal_reason`` / ``is_refusal`` say whether
the answer declines as a whole. The phrases are data (``cofe/_data/refusal/rules.toml``),
each rule with the answers it must and must not reach, which are its tests.
"""

from cofe.refusal._read import (
    Decline,
    Extent,
    fold,
    is_refusal,
    read_decline,
    refusal_reason,
    undeclined,
)
from cofe.refusal._rules import Kind, RefusalRule, RuleError, parse_rules, rules

__all__ = [
    "Decline",
    "Extent",
    "Kind",
    "RefusalRule",
    "RuleError",
    "fold",
    "is_refusal",
    "parse_rules",
    "read_decline",
    "refusal_reason",
    "rules",
    "undeclined",
]
