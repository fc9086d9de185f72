"""What the date rules share: the names of the months."""

from functools import lru_cache

from cofe.matching.answer._tables import table
from cofe.matching.answer._text import ANY_DIGIT


@lru_cache(maxsize=1)
def month_names() -> tuple[str, ...]:
    return tuple(table("en")["month_names"])


def has_date_signs(text: str) -> bool:
    return ("/" in text or "." in text or "-" in text) and ANY_DIGIT.search(text) is not None
