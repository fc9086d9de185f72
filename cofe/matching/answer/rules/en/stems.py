"""stems: an English word by its Snowball stem ("salaries" = "salary")."""

from cofe.matching.answer._rules import Token, TokenRule, Unit, register
from cofe.matching.answer._text import STEM, stem


def _read(t: Token) -> Unit | None:
    return (stem(t.spelt or t.token), STEM, t.token, t.acronym)  # Snowball English: ASCII


STEMS = register(
    TokenRule(
        "stems",
        "An English word read as its Snowball stem (PyStemmer: C speed).",
        "en",
        "word",
        _read,
        reaches=(("salaries", "salari"), ("Replicating", "replic")),
        misses=("the", "1998"),
    )
)
