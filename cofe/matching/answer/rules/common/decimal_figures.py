"""decimal-figures: a decimal kept whole by the decimals rule is one figure ("30.0" = 30)."""

from cofe.matching.answer._rules import Token, TokenRule, Unit, register
from cofe.matching.answer._text import FIGURE


def _read(t: Token) -> Unit | None:
    token = t.token
    if not (token[0].isdigit() and "dot" in token):
        return None
    figure = token.replace("dot", ".")
    if figure[-1] == "0" and figure.replace(".", "").isdigit():
        figure = figure.rstrip("0").rstrip(".")  # "30.0" is 30, "2.50" is 2.5
    return (figure, FIGURE, token, "")


DECIMAL_FIGURES = register(
    TokenRule(
        "decimal-figures",
        "A decimal figure without the trailing zeros of its decimals (30.0 is 30, 2.50 is 2.5).",
        "common",
        "figure",
        _read,
        reaches=(("3dot5", "3.5"), ("30dot0", "30"), ("2dot50", "2.5")),
        misses=("35", "dotcom"),
    )
)
