"""synonym: an English word said as another member of a WordNet synset ("surplus" energy)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from cofe.matching import _synonyms
from cofe.matching.answer._decision import Decision
from cofe.matching.answer._figures import after_number, measures
from cofe.matching.answer._rules import Binder, Case, register
from cofe.matching.answer._tables import table
from cofe.matching.answer._text import names_in, stem
from cofe.matching.answer.rules.en.number_words import number_words

if TYPE_CHECKING:
    from cofe.matching.answer._matcher import AnswerMatcher
    from cofe.matching.answer._reading import Reading


@lru_cache(maxsize=1)
def no_synonyms() -> frozenset[str]:
    """Words no synonym stands in for: a count or a unit is a fact ("three days" is not
    "three years", "millions" not "billions", though WordNet joins them)."""
    words = (
        *number_words(),
        *table("en")["scales"],
        *measures(),
        *measures().values(),
        *after_number().values(),
        *table("en")["no_synonyms"],
    )
    return frozenset(stem(word) for word in words)


def _synonym(m: AnswerMatcher, unit: str, r: Reading) -> bool:
    """Never for a name ("Bush" is not "shrub"), a number word, a unit of measure or a word
    beside a figure ("three days" is not "three years", though WordNet has "day" for
    "year")."""
    frag = r.frag
    word = frag.shown(unit)  # as the fragment wrote it: WordNet reads lemmas, not stems
    if (
        not unit.isascii()
        or not unit.isalpha()
        or unit in no_synonyms()
        or unit in frag.names
        or any(unit == beside for _, beside in frag.measured)
        or not _synonyms.has_synonyms(word)
    ):
        return False
    if m._said_words is None:
        text = m._answer_text
        m._said_words = _synonyms.SaidWords.read(text, stem, names_in(text))
    return m._said_words.synonym(word, frag.all)


def _bind(m: AnswerMatcher, r: Reading) -> frozenset[str]:
    return frozenset(u for u in r.missing if _synonym(m, u, r))


SYNONYM = register(
    Binder(
        "synonym",
        "An English word whose WordNet synset (first senses) holds a word of the answer.",
        "en",
        _bind,
        reaches=(
            Case("Its job is to pass on surplus energy.", "excess energy"),
            Case("Newman turned it down.", "rejected"),
        ),
        misses=(
            Case("He planted a shrub in the garden.", "Bush planted", Decision.UNDECIDED),
            Case("It took three years to build.", "three days", Decision.UNDECIDED),
        ),
        trace="evidence",
    )
)
