"""English synonyms for the answer step: words sharing a WordNet synset.

An answer rewords: "rejected it immediately" comes back as "turned it down at once",
"excess energy" as "surplus energy", "permitted" as "allowed". A word of an information
point counts as said when the answer says another member of one of its synsets -- the rule
METEOR's synonym module uses to match a translation against its reference. The table
(``cofe/_data/wordnet/synonyms.txt.gz``, built from Princeton WordNet 3.0 by
``benchmarks/build_wordnet_synonyms.py``; its licence beside it) holds each synset's
members as the matcher reads them: Snowball stems, a multi-word lemma as its stems joined
by a space, each with the rank of that sense among the member's senses. Read once per
process, on the first fragment a word count leaves short.

Only a word's first ``SENSES`` senses count, on both sides: WordNet lists every sense a
word has, and its rare ones join unrelated words ("pass" is "die" in its 13th verb sense,
"time" is "multiplication"). Only synonymy: no hypernyms ("vehicle" is not "car") and no
related forms, which let wrong answers through on the dev set. The caller keeps names,
numbers and units of measure away from it.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_TABLE = Path(__file__).resolve().parent.parent / "_data" / "wordnet" / "synonyms.txt.gz"
# A word's senses read: WordNet orders them by frequency in its tagged corpus. Three keeps
# the everyday synonyms ("allowed" for "permitted", "surplus" for "excess") and drops the
# senses that join unrelated words.
SENSES = 3
# object pronouns a phrasal verb takes inside it: "turned it down" says "turn down"
_INSIDE = ("it", "them", "him", "her", "this", "that")
_CLAUSE = re.compile(r"[.,;:!?()\[\]{}\"“”«»]|\s[-–—]\s")
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True, slots=True)
class _Table:
    # stem -> the synsets among its first SENSES senses (tuples: a set costs about four
    # times the memory, and most words have one or two)
    words: dict[str, tuple[int, ...]]
    # synset -> its members for which it is among their first SENSES senses
    members: tuple[tuple[str, ...], ...]


@lru_cache(maxsize=1)
def _table() -> _Table:
    words: dict[str, tuple[int, ...]] = {}
    members: list[tuple[str, ...]] = []
    with gzip.open(_TABLE, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            kept = []
            for entry in line.rstrip("\n").split("\t"):
                member, _, rank = entry.rpartition(":")
                if int(rank) <= SENSES:
                    kept.append(member)
                    if " " not in member:
                        words[member] = (*words.get(member, ()), number)
            members.append(tuple(kept))
    return _Table(words, tuple(members))


@dataclass(slots=True)
class SaidWords:
    """What one answer says, read for synonyms: its content words' stems (not its names:
    "Turkey" says nothing about "bomb") and its clauses as stem sequences for phrases."""

    stems: frozenset[str]
    clauses: tuple[str, ...]  # " turn it down at onc " per clause: phrases never span one

    @classmethod
    def read(cls, text: str, stem: Callable[[str], str], names: Collection[str]) -> SaidWords:
        """``names``: the answer's words written as names (capitalised inside a sentence),
        lower-cased; ``stem``: the matcher's stemmer."""
        clauses = []
        stems: set[str] = set()
        for clause in _CLAUSE.split(text.lower()):
            tokens = [(word, stem(word)) for word in _WORD.findall(clause)]
            if tokens:
                clauses.append(" " + " ".join(s for _, s in tokens) + " ")
                stems.update(s for word, s in tokens if word not in names)
        return cls(frozenset(stems), tuple(clauses))

    def _says(self, phrase: str) -> bool:
        first, _, rest = phrase.partition(" ")
        wanted = f" {phrase} "
        if any(wanted in clause for clause in self.clauses):
            return True
        if " " in rest:  # a three-word phrase: no pronoun inside
            return False
        return any(f" {first} {pronoun} {rest} " in c for c in self.clauses for pronoun in _INSIDE)

    def synonym(self, unit: str, beside: Collection[str]) -> bool:
        """The answer says a synonym of ``unit`` (a stem) -- not one of the words in
        ``beside`` (the fragment's own units: "light" said once is not also "bright")."""
        table = _table()
        for synset in table.words.get(unit, ()):
            for member in table.members[synset]:
                if member == unit:
                    continue
                if " " in member:
                    if self._says(member):
                        return True
                elif member in self.stems and member not in beside:
                    return True
        return False


def has_synonyms(unit: str) -> bool:
    """WordNet knows the stem among a word's first senses (most words a fragment lacks)."""
    return unit in _table().words
