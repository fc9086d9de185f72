"""zh-half-day: the half of the day before a Chinese time ("晚上9点" = "下午9点")."""

from functools import lru_cache

from cofe.matching.answer._rules import Token, TokenRule, Unit, register
from cofe.matching.answer._tables import inverted, table
from cofe.matching.answer._text import PLAIN


@lru_cache(maxsize=1)
def _halves() -> dict[str, str]:
    return inverted(table("zh")["half_day"])


def _read(t: Token) -> Unit | None:
    half = _halves().get(t.token)
    return None if half is None else (half, PLAIN, t.token, "")


HALF_DAY = register(
    TokenRule(
        "zh-half-day",
        "A word for the morning or the evening is its half of the day (上午 / 下午), required.",
        "zh",
        "cjk",
        _read,
        reaches=(("晚上", "下午"), ("早上", "上午")),
        misses=("中午", "北京"),
    )
)
