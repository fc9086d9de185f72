"""The English word tables the en rules share (cofe/_data/matching/en.json)."""

from functools import lru_cache

from cofe.matching._labels import STOPWORDS
from cofe.matching.answer._tables import table


@lru_cache(maxsize=1)
def extra_stopwords() -> frozenset[str]:
    """Function words beyond nltk's list: what contractions expand to, a company's legal
    form ("Visa Inc." is "Visa"), comparatives of a quantity ("less than" = "under")."""
    return frozenset(table("en")["stopword_extras"])


def is_stopword(word: str) -> bool:
    return word in STOPWORDS or word in extra_stopwords()
