"""months: a month's abbreviation is the month ("Sept" = "September")."""

from cofe.matching.answer._rules import Token, TokenRule, Unit, register
from cofe.matching.answer._tables import table


def _read(t: Token) -> Unit | None:
    t.token = table("en")["months"].get(t.token, t.token)
    return None


MONTHS = register(
    TokenRule(
        "months",
        "A month's abbreviation read as the month: Sept is September.",
        "en",
        "word",
        _read,
        reaches=(("Sept", "septemb"), ("Jan", "januari")),
        misses=("may", "castle"),
    )
)
