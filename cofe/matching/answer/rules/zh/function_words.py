"""zh-function-words: function characters and hedging words carry no content."""

from functools import lru_cache

from cofe.matching.answer._rules import DROP, Token, TokenRule, Unit, register
from cofe.matching.answer._tables import table
from cofe.matching.answer.rules.zh._words import stop_characters


@lru_cache(maxsize=1)
def _function_words() -> frozenset[str]:
    # words that only hedge a quantity or carry a verb: function words, as English's "about"
    return frozenset(table("zh")["function_words"])


def _read(t: Token) -> Unit | None:
    if stop_characters().issuperset(t.token) or t.token in _function_words():
        return DROP
    return None


FUNCTION_WORDS = register(
    TokenRule(
        "zh-function-words",
        "A word of Chinese function characters only, or a hedging word (左右, 大约), is dropped.",
        "zh",
        "cjk",
        _read,
        reaches=(("的", ""), ("左右", ""), ("这个", "")),
        misses=("北京", "少于"),
    )
)
