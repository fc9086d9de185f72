"""zh-measures: Chinese units of measure by the matcher's one name ("公里" = "千米" = km)."""

from cofe.matching.answer._rules import Token, TokenRule, Unit, register
from cofe.matching.answer._text import PLAIN
from cofe.matching.answer.rules.zh._words import measures


def _read(t: Token) -> Unit | None:
    return (measures().get(t.token, t.token), PLAIN, t.token, "")  # any Chinese word: itself


MEASURES = register(
    TokenRule(
        "zh-measures",
        "A Chinese word: its unit of measure's one name (公里 -> km), else the word itself.",
        "zh",
        "cjk",
        _read,
        reaches=(("公里", "km"), ("千米", "km"), ("北京", "北京")),
        misses=("km", "5"),
    )
)
