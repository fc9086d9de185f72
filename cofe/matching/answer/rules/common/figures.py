"""figures: a token with digits is a figure, leading zeros dropped; "1" mostly an article."""

from cofe.matching.answer._rules import Token, TokenRule, Unit, register
from cofe.matching.answer._text import FIGURE, PLAIN


def _read(t: Token) -> Unit | None:
    if t.token.isalpha():
        return None
    token = t.token.lstrip("0") or "0"
    # "one" is mostly an article ("one of the largest"): a content word, not a figure
    return (token, PLAIN if token == "1" else FIGURE, token, "")


FIGURES = register(
    TokenRule(
        "figures",
        "A token with digits is a figure (or a code: 5a, b737), leading zeros dropped.",
        "common",
        "figure",
        _read,
        reaches=(("1998", "1998"), ("007", "7"), ("b737", "b737"), ("1", "1")),
        misses=("castle", "US"),
    )
)
