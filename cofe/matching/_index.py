"""Find every keyword of an eval set in a text with one Aho-Corasick pass."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

import ahocorasick
from rapidfuzz import fuzz, process


class KeywordIndex:
    """Distinct normalised keywords, each with an integer id, and their automaton."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self.keywords: list[str] = []
        self._automaton: ahocorasick.Automaton | None = None

    def add(self, normalized: str) -> int:
        ident = self._ids.get(normalized)
        if ident is None:
            ident = self._ids[normalized] = len(self.keywords)
            self.keywords.append(normalized)
            self._automaton = None
        return ident

    def _built(self) -> ahocorasick.Automaton | None:
        if self._automaton is None and self.keywords:
            automaton = ahocorasick.Automaton()
            for ident, keyword in enumerate(self.keywords):
                automaton.add_word(keyword, ident)
            automaton.make_automaton()
            self._automaton = automaton
        return self._automaton

    def scan(self, normalized_text: str) -> set[int]:
        """Ids of the keywords that occur in an already normalised text."""
        automaton = self._built()
        if automaton is None or not normalized_text:
            return set()
        return {ident for _, ident in automaton.iter(normalized_text)}


class UnitIndex:
    """Texts (chunks, documents) normalised once and scanned once for all keywords.

    ``has`` and ``units_with`` answer exact matches from the scan; with a fuzzy
    error ratio they also accept an approximate match (rapidfuzz partial ratio)
    for keywords long enough for that to mean something, computed lazily.
    """

    def __init__(
        self,
        texts: Sequence[str],
        index: KeywordIndex,
        normalize: Callable[[str], str],
        *,
        fuzzy_ratio: float | None = None,
        fuzzy_min_chars: int = 6,
    ) -> None:
        self.index = index
        self.normalized = [normalize(text) for text in texts]
        self.found = [index.scan(text) for text in self.normalized]
        self._postings: dict[int, list[int]] | None = None
        self.fuzzy_cutoff = None if not fuzzy_ratio else 100.0 * (1.0 - fuzzy_ratio)
        self.fuzzy_min_chars = fuzzy_min_chars
        self._fuzzy_units: dict[int, set[int]] = {}

    def __len__(self) -> int:
        return len(self.normalized)

    def _fuzzy_ok(self, keyword: int) -> bool:
        text = self.index.keywords[keyword]
        return self.fuzzy_cutoff is not None and len(text.replace(" ", "")) >= self.fuzzy_min_chars

    def has(self, unit: int, keyword: int) -> bool:
        if keyword in self.found[unit]:
            return True
        if not self._fuzzy_ok(keyword):
            return False
        return unit in self._fuzzy(keyword)

    def units_with(self, keyword: int) -> list[int] | set[int]:
        if self._postings is None:
            postings: dict[int, list[int]] = defaultdict(list)
            for unit, found in enumerate(self.found):
                for ident in found:
                    postings[ident].append(unit)
            self._postings = dict(postings)
        exact = self._postings.get(keyword, [])
        if not self._fuzzy_ok(keyword):
            return exact
        return self._fuzzy(keyword).union(exact)

    def _fuzzy(self, keyword: int) -> set[int]:
        units = self._fuzzy_units.get(keyword)
        if units is None:
            matches = process.extract(
                self.index.keywords[keyword],
                self.normalized,
                scorer=fuzz.partial_ratio,
                score_cutoff=self.fuzzy_cutoff,
                limit=None,
            )
            units = self._fuzzy_units[keyword] = {position for _, _, position in matches}
        return units


def fuzzy_in(keyword: str, text: str, ratio: float | None, min_chars: int = 6) -> bool:
    """Approximate containment for a single text (used for answers)."""
    if not ratio or len(keyword.replace(" ", "")) < min_chars or not text:
        return False
    return fuzz.partial_ratio(keyword, text, score_cutoff=100.0 * (1.0 - ratio)) > 0
