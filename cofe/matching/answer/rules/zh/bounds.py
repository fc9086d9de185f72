"""zh-bounds: words that bound a quantity read as one direction ("不到" = "少于" = "<")."""

from functools import lru_cache

from cofe.matching.answer._rules import Token, TokenRule, Unit, register
from cofe.matching.answer._tables import table
from cofe.matching.answer._text import PLAIN


@lru_cache(maxsize=1)
def _directions() -> dict[str, str]:
    zh = table("zh")
    return {**dict.fromkeys(zh["less"], "<"), **dict.fromkeys(zh["more"], ">")}


def _read(t: Token) -> Unit | None:
    direction = _directions().get(t.token)
    return None if direction is None else (direction, PLAIN, t.token, "")


# so that "少于十分钟" and "不到十分钟" read alike and "高于" never passes for "低于"; a
# fragment's direction is required as a name is (an answer without it is undecided)
BOUNDS = register(
    TokenRule(
        "zh-bounds",
        "A Chinese word bounding a quantity is its direction: < (不到, 少于) or > (超过, 以上).",
        "zh",
        "cjk",
        _read,
        reaches=(("不到", "<"), ("少于", "<"), ("超过", ">")),
        misses=("北京", "到达"),
    )
)
