"""English synonyms for the answer step: words sharing a WordNet synset.

An answer rewords: "rejected it immediately" comes back as "turned it down at once",
"excess energy" as "surplus energy", "permitted" as "allowed". A word of an information
point counts as said when the answer says a word of one of its synsets -- the rule
METEOR's synonym module uses to match a translation against its reference. The table
(``cofe/_data/wordnet/synonyms.txt.gz``, built from Princeton WordNet 3.0 by
``benchmarks/build_wordnet_synonyms.py``; its licence beside it) holds each synset's
members as the matcher reads them: Snowball stems, a multi-word lemma as its stems joined
by a space. Read once per process, on the first fragment a word count left short.

Only synonymy: no hypernyms ("vehicle" is not "car") and no related forms, which let
wrong answers through on the dev set. Names and numbers never go through it (the
matcher requires them exactly).
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_TABLE = Path(__file__).resolve().parent.parent / "_data" / "wordnet" / "synonyms.txt.gz"
_WORD = re.compile(r"[a-z]+")
# object pronouns a phrasal verb takes inside it: "turned it down" says "turn down"
_INSIDE = frozenset("it them him her this that".split())


@dataclass(frozen=True, slots=True)
class _Table:
    # tuples, not sets: a set costs about four times the memory, and most words have one
    words: dict[str, tuple[int, ...]]  # stem -> the synsets it is a member of
    phrases: dict[tuple[str, ...], tuple[int, ...]]  # multi-word lemma (stems) -> synsets
    starts: frozenset[str]  # first stems of the phrases: where a scan can stop early


@lru_cache(maxsize=1)
def _table() -> _Table:
    words: dict[str, tuple[int, ...]] = {}
    phrases: dict[tuple[str, ...], tuple[int, ...]] = {}
    with gzip.open(_TABLE, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            for member in line.rstrip("\n").split("\t"):
                if " " in member:
                    key = tuple(member.split(" "))
                    phrases[key] = (*phrases.get(key, ()), number)
                else:
                    words[member] = (*words.get(member, ()), number)
    return _Table(words, phrases, frozenset(p[0] for p in phrases))


def synsets(stem: str) -> tuple[int, ...]:
    """The synsets a stemmed word is a member of (none for a word WordNet lacks)."""
    return _table().words.get(stem, ())


def said(stems: Iterable[str], text: str, stem: Callable[[str], str]) -> frozenset[int]:
    """Every synset a text says: those of its content stems, and of the multi-word lemmas
    its words spell ("at once", "turn down", also "turned it down"). ``stem`` is the
    matcher's stemmer (a callable on one lower-case word)."""
    table = _table()
    found: set[int] = set()
    for word in stems:
        found.update(table.words.get(word, ()))
    tokens = [stem(t) for t in _WORD.findall(text.lower())]
    phrases = table.phrases
    for i, first in enumerate(tokens):
        if first not in table.starts:
            continue
        for width in (2, 3):
            found.update(phrases.get(tuple(tokens[i : i + width]), ()))
        if i + 2 < len(tokens) and tokens[i + 1] in _INSIDE:
            found.update(phrases.get((first, tokens[i + 2]), ()))
    return frozenset(found)
