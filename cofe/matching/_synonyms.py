"""English synonyms for the answer step: words sharing a WordNet synset.

An answer rewords: "rejected" comes back as "turned it down", "excess energy" as "surplus
energy", "permitted" as "allowed". A word of an information point counts as said when the
answer says another member of one of its synsets -- the rule METEOR's synonym module uses
to match a translation against its reference. The table
(``cofe/_data/wordnet/synonyms.txt.gz``, built from Princeton WordNet 3.0 by
``benchmarks/build_wordnet_synonyms.py``; its licence beside it) holds each synset's
members as lemmas, a multi-word lemma with its words joined by a space, each with the rank
of that sense among the member's senses in its part of speech. Words are read as lemmas,
not stems (a stem cannot tell "author" from "authority"): WordNet's own way, its irregular
forms (``irregular.txt.gz``: "went" -> "go"; a plural that is its own word, "physics",
stays itself) and otherwise its suffix rules ("allowed" -> "allow", "casings" ->
"casing"), every reading a lemma WordNet has. Read once per process, on the
first fragment a word count leaves short.

Only a word's first ``SENSES`` senses in each part of speech count, on both sides: WordNet
lists every sense a word has, and its rare ones join unrelated words ("pass" is "die" in
its 13th verb sense). Only synonymy: no hypernyms ("vehicle" is not "car") and no related
forms, which let wrong answers through on the dev set. The caller keeps names, numbers and
units of measure away from it.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_FOLDER = Path(__file__).resolve().parent.parent / "_data" / "wordnet"
# A word's senses read, per part of speech: WordNet orders them by frequency in its tagged
# corpus. Three keeps the everyday synonyms ("allowed" for "permitted", "surplus" for
# "excess") and drops the senses that join unrelated words.
SENSES = 3
# object pronouns a phrasal verb takes inside it: "turned it down" says "turn down"
_INSIDE = frozenset(("it", "them", "him", "her", "this", "that"))
# where a phrase cannot run on: punctuation (also Chinese and full-width), a line break
_CLAUSE = re.compile(r"[.,;:!?()\[\]{}\"“”«»\n，。；：！？（）、]|\s[-–—]\s")
_WORD = re.compile(r"[a-z]+")
# WordNet's rules of detachment (morphy): inflected ending -> the lemma's ending
_SUFFIXES = (
    ("ies", "y"),
    ("ses", "s"),
    ("xes", "x"),
    ("zes", "z"),
    ("ches", "ch"),
    ("shes", "sh"),
    ("men", "man"),
    ("es", "e"),
    ("es", ""),
    ("s", ""),
    ("ed", "e"),
    ("ed", ""),
    ("ing", "e"),
    ("ing", ""),
    ("er", ""),
    ("er", "e"),
    ("est", ""),
    ("est", "e"),
)


@dataclass(frozen=True, slots=True)
class _Table:
    # lemma -> the synsets among its first SENSES senses (tuples: a set costs about four
    # times the memory, and most words have one or two)
    lemmas: dict[str, tuple[int, ...]]
    # synset -> its members for which it is among their first SENSES senses
    members: tuple[tuple[str, ...], ...]
    irregular: dict[str, tuple[str, ...]]  # "went" -> ("go",)
    known: frozenset[str]  # every single-word lemma, whatever its senses: a reading's test


@lru_cache(maxsize=1)
def _table() -> _Table:
    lemmas: dict[str, tuple[int, ...]] = {}
    members: list[tuple[str, ...]] = []
    known: set[str] = set()
    with gzip.open(_FOLDER / "synonyms.txt.gz", "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            kept = []
            for entry in line.rstrip("\n").split("\t"):
                member, _, rank = entry.rpartition(":")
                known.add(member)
                if int(rank) <= SENSES:
                    kept.append(member)
                    lemmas[member] = (*lemmas.get(member, ()), number)
            members.append(tuple(kept))
    irregular: dict[str, tuple[str, ...]] = {}
    with gzip.open(_FOLDER / "irregular.txt.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            form, _, bases = line.rstrip("\n").partition("\t")
            irregular[form] = tuple(bases.split())
    return _Table(lemmas, tuple(members), irregular, frozenset(known))


@lru_cache(maxsize=100_000)
def lemmas_of(word: str) -> frozenset[str]:
    """The lemmas a lower-case word can be a form of: itself (a function word inside a
    phrase, "down" in "turn down", is its own), its irregular lemmas, and what the suffix
    rules make of it that WordNet has."""
    table = _table()
    if word in table.irregular:  # "went", and "physics" (never "physic")
        return frozenset((word, *table.irregular[word]))
    found = {word}
    for ending, replacement in _SUFFIXES:
        if word.endswith(ending) and len(word) > len(ending) + 1:
            base = word[: -len(ending)] + replacement
            if base in table.known:
                found.add(base)
    return frozenset(found)


# lemmas whose irregular forms are degrees, not tenses: "better" and "best" are not "good"
_COMPARED = frozenset("good bad well ill far much many little late old".split())


@dataclass(slots=True)
class SaidWords:
    """What one answer says, read for synonyms: per clause, each word's lemmas and stem
    (names left out: "Turkey" says nothing about a "bomb")."""

    clauses: tuple[tuple[tuple[frozenset[str], str], ...], ...]
    said: frozenset[str]  # every lemma of every word: most members are not, a quick no

    @classmethod
    def read(cls, text: str, stem: Callable[[str], str], names: Collection[str]) -> SaidWords:
        """``names``: the answer's words written as names, lower-cased; ``stem``: the
        matcher's stemmer, to know which answer words the fragment itself uses."""
        clauses = []
        said: set[str] = set()
        for clause in _CLAUSE.split(text.lower()):
            words = tuple(
                (frozenset() if word in names else lemmas_of(word), stem(word))
                for word in _WORD.findall(clause)
            )
            if words:
                clauses.append(words)
                for lemmas, _ in words:
                    said |= lemmas
        return cls(tuple(clauses), frozenset(said))

    def _says(self, member: str, beside: Collection[str]) -> bool:
        parts = member.split(" ")
        if parts[0] not in self.said or parts[-1] not in self.said:
            return False
        width = len(parts)
        for words in self.clauses:
            for i in range(len(words) - width + 1):
                if all(parts[k] in words[i + k][0] for k in range(width)) and not all(
                    words[i + k][1] in beside for k in range(width)
                ):
                    return True
                if (  # "turned it down" says "turn down"
                    width == 2
                    and i + 2 < len(words)
                    and parts[0] in words[i][0]
                    and words[i + 1][1] in _INSIDE
                    and parts[1] in words[i + 2][0]
                ):
                    return True
        return False

    def synonym(self, word: str, beside: Collection[str]) -> bool:
        """The answer says a synonym of ``word`` (as the fragment wrote it, lower case), or
        the word in a form its stem does not show ("seen" for "saw", "rose" for "risen") --
        not through words whose stems are in ``beside`` (the fragment's own units: "light"
        said once is not also "bright")."""
        table = _table()
        own = lemmas_of(word)
        if not own.isdisjoint(_COMPARED):  # "best": WordNet joins it to "better" too
            return False
        for lemma in own:
            if lemma != word and self._inflected(lemma, beside):
                return True
            for synset in table.lemmas.get(lemma, ()):
                for member in table.members[synset]:
                    if member not in own and self._says(member, beside):
                        return True
        return False

    def _inflected(self, lemma: str, beside: Collection[str]) -> bool:
        """An answer word that is another irregular form of ``lemma``, not the lemma itself
        ("seen" for "saw", not "see": "will see" is not "saw")."""
        if lemma not in self.said:
            return False
        return any(
            lemma in lemmas and stem != lemma and stem not in beside
            for words in self.clauses
            for lemmas, stem in words
        )


def has_synonyms(word: str) -> bool:
    """WordNet knows the word among some lemma's first senses (most words a fragment
    lacks)."""
    table = _table()
    return any(lemma in table.lemmas for lemma in lemmas_of(word))
