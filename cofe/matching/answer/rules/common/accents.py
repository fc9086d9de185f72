"""accents: Latin letters read without diacritics ("Taihō" = "Taiho", "Łódź" = "Lodz")."""

import re
import unicodedata
from functools import lru_cache

from cofe.matching.answer._rules import substitution
from cofe.matching.answer._tables import table

_ACCENTED = re.compile(r"[\u00c0-\u024f\u1e00-\u1eff]")


@lru_cache(maxsize=1000)
def _plain(char: str) -> str:
    letters: dict[str, str] = table("en")["letters"]
    if char in letters:  # letters of their own, with no accent to take off
        return letters[char]
    plain = "".join(c for c in unicodedata.normalize("NFD", char) if not unicodedata.combining(c))
    return plain or char


ACCENTS = substitution(
    "accents",
    "Latin letters with diacritics read without them: answers often drop macrons and accents.",
    "common",
    _ACCENTED,
    lambda match: _plain(match[0]),
    lambda text: not text.isascii() and _ACCENTED.search(text) is not None,
    reaches=(("the Taihō Code", "the Taiho Code"), ("Łódź", "Lodz"), ("Straße", "Strasse")),
    misses=("the Taiho Code", "北京"),
)
