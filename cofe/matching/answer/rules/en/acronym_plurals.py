"""acronym-plurals: "MSPs" is the plural of the acronym "MSP"."""

from cofe.matching.answer._rules import Token, TokenRule, Unit, register


def _read(t: Token) -> Unit | None:
    if t.acronym and t.acronym != t.raw:
        t.token = t.acronym.casefold()
    return None


ACRONYM_PLURALS = register(
    TokenRule(
        "acronym-plurals",
        "An acronym with a plural s is the acronym: MSPs is MSP.",
        "en",
        "word",
        _read,
        reaches=(("MSPs", "msp"), ("FCCs", "fcc")),
        misses=("MSP", "castles"),
    )
)
