"""british-spellings: "armour" = "armor", "programme" = "program", "centre" = "center"."""

import re
from functools import lru_cache

from cofe.matching.answer._rules import Token, TokenRule, Unit, register
from cofe.matching.answer._tables import table


@lru_cache(maxsize=1)
def _spellings() -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(p), r) for p, r in table("en")["spellings"])


@lru_cache(maxsize=1)
def _endings() -> tuple[str, ...]:
    return tuple(table("en")["spelling_endings"])


def american(word: str) -> str:
    if not word.endswith(_endings()):  # most words: one C call, no regex
        return word
    for pattern, replacement in _spellings():
        if pattern.search(word):
            return pattern.sub(replacement, word)
    return word


def _read(t: Token) -> Unit | None:
    if len(t.token) >= 5:
        spelt = american(t.token)
        if spelt != t.token:
            t.spelt = spelt
    return None


# both sides are respelt the same way, so a respelling that makes a non-word ("flour" ->
# "flor") changes nothing
BRITISH_SPELLINGS = register(
    TokenRule(
        "british-spellings",
        "A British spelling read as the American one before stemming (armour -> armor).",
        "en",
        "word",
        _read,
        reaches=(("armour", "armor"), ("programme", "program"), ("organised", "organ")),
        misses=("armor", "four"),
    )
)
