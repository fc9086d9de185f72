"""stopwords: English function words carry no content ("US" and "IT" in capitals do)."""

from cofe.matching.answer._rules import DROP, Token, TokenRule, Unit, register
from cofe.matching.answer._text import FUNCTION
from cofe.matching.answer.rules.en._words import is_stopword


def _read(t: Token) -> Unit | None:
    if not is_stopword(t.token):
        return None
    # "US" and "IT" in capitals name something; as content they stay function words
    return ("", FUNCTION, t.token, t.acronym) if t.acronym else DROP


STOPWORDS = register(
    TokenRule(
        "stopwords",
        "An English function word (nltk's list and a few more) is no content unit.",
        "en",
        "word",
        _read,
        reaches=(("the", ""), ("would", ""), ("Inc", ""), ("IT", "")),
        misses=("castle", "Visa"),
    )
)
