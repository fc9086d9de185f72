"""Where keywords occur in a set of normalised texts (chunks or documents).

Exact containment is a substring test on normalised text: the strict normal
form puts a space on each side of every token, so a test of ``" kw "`` only
ever matches whole tokens. ``indexed`` keywords (for exact matching: all of
them) get posting lists from one Aho-Corasick pass over all texts, so every
look-up -- including the ones that explain a miss ("in no chunk", "only in
another document") -- reads a posting list instead of rescanning the corpus:
scoring stays linear in samples and in corpus size.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from operator import itemgetter
from typing import TypeVar

import ahocorasick

from cofe._parallel import fork_imap

T = TypeVar("T")
_SECOND = itemgetter(1)


class KeywordIndex:
    """Distinct normalised keywords, each with an integer id."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self.keywords: list[str] = []
        # the last automaton built, by its keyword ids: the chunks and the documents are
        # usually scanned for the same keywords, and building it is a tenth of a scan
        self._built: tuple[frozenset[int], ahocorasick.Automaton | None] | None = None

    def add(self, normalized: str) -> int:
        ident = self._ids.get(normalized)
        if ident is None:
            ident = self._ids[normalized] = len(self.keywords)
            self.keywords.append(normalized)
        return ident

    def find(self, normalized: str) -> int | None:
        """The id of a keyword, if it was added."""
        return self._ids.get(normalized)

    def automaton(self, ids: Iterable[int]) -> ahocorasick.Automaton | None:
        """An Aho-Corasick automaton finding the given keywords (None when there are none)."""
        wanted = frozenset(ids)
        if self._built is not None and self._built[0] == wanted:
            return self._built[1]
        automaton = ahocorasick.Automaton()
        for ident in wanted:
            if self.keywords[ident]:  # the empty keyword is in every text: see UnitIndex
                automaton.add_word(self.keywords[ident], ident)
        if len(automaton):
            automaton.make_automaton()
        self._built = (wanted, automaton if len(automaton) else None)
        return self._built[1]


def scan(automaton: ahocorasick.Automaton | None, normalized_text: str) -> set[int]:
    """Ids of the automaton's keywords that occur in a normalised text."""
    if automaton is None or not normalized_text:
        return set()
    # each match is (end, id): the ids picked in C, not in a Python loop (a long document
    # has thousands of matches)
    return set(map(_SECOND, automaton.iter(normalized_text)))


class UnitIndex:
    """Normalised texts and keyword look-ups over them; see the module docstring.

    With ``lazy=True`` a text is normalised the first time it is needed (for
    documents, of which a run usually needs few). With a fuzzy error ratio,
    keywords long enough for it also match approximately (rapidfuzz partial
    ratio), computed on demand and remembered.
    """

    def __init__(
        self,
        texts: Sequence[str],
        index: KeywordIndex,
        normalize: Callable[[str], str],
        *,
        indexed: Iterable[int] = (),
        lazy: bool = False,
        fuzzy_ratio: float | None = None,
        fuzzy_min_chars: int = 6,
        workers: int = 1,
        known: Mapping[int, tuple[str, set[int]]] | None = None,
        remember: Iterable[int] = (),
        meanwhile: Callable[[], None] | None = None,
    ) -> None:
        """``known``: units whose normalised text and keywords another index already found
        (a document that is one chunk), not scanned again; ``remember``: units whose
        keywords are kept for such another index (``found``); ``meanwhile``: work of this
        process's own, done while the workers scan (once the first slice is back)."""
        self.index = index
        self._texts = texts
        self._normalize = normalize
        self._postings: dict[int, list[int]] = {}
        self._searched: dict[int, list[int]] = {}
        self.found: dict[int, set[int]] = {}  # the keywords of the units to ``remember``
        indexed = set(indexed)
        if lazy and not indexed:
            self._normalized: list[str | None] = [None] * len(texts)
            if meanwhile is not None:
                meanwhile()
        else:
            automaton = index.automaton(indexed)
            parts = _while_scanning(
                fork_imap(
                    _scan_slice,
                    (texts, automaton, normalize, known or {}),
                    len(texts),
                    slice_size=5_000,
                    workers=workers,
                ),
                meanwhile,
            )
            self._normalized = [text for normalized, _ in parts for text in normalized]
            self._set_postings(indexed, [found for _, part in parts for found in part], remember)
        self.fuzzy_cutoff = None if not fuzzy_ratio else 100.0 * (1.0 - fuzzy_ratio)
        self.fuzzy_min_chars = fuzzy_min_chars
        self._fuzzy_units: dict[int, set[int]] = {}

    def __len__(self) -> int:
        return len(self._normalized)

    def _set_postings(
        self, indexed: set[int], found_per_unit: list[set[int]], remember: Iterable[int] = ()
    ) -> None:
        postings: dict[int, list[int]] = defaultdict(list)
        for unit, ids in enumerate(found_per_unit):
            for ident in ids:
                postings[ident].append(unit)
        self.found = {unit: found_per_unit[unit] for unit in remember}
        # every indexed keyword gets a list, so absence is known without searching
        self._postings = {
            ident: postings.get(ident, [])
            if self.index.keywords[ident]
            else list(range(len(self._normalized)))  # "" is in every text
            for ident in indexed
        }

    def rebind(
        self,
        index: KeywordIndex,
        indexed: Iterable[int],
        *,
        workers: int = 1,
        known: Mapping[int, set[int]] | None = None,
        remember: Iterable[int] = (),
        meanwhile: Callable[[], None] | None = None,
    ) -> None:
        """Look up another set of keywords in the same texts: the normalised texts are kept,
        the posting lists and remembered searches replaced (one scan of the texts);
        ``known``, ``remember`` and ``meanwhile`` as when built, for the keywords only."""
        self.index = index
        self._searched, self._fuzzy_units = {}, {}
        indexed = set(indexed)
        automaton = index.automaton(indexed)
        texts = [self.text(unit) for unit in range(len(self))]
        parts = _while_scanning(
            fork_imap(
                _rescan_slice,
                (texts, automaton, known or {}),
                len(texts),
                slice_size=5_000,
                workers=workers,
            ),
            meanwhile,
        )
        self._set_postings(indexed, [found for part in parts for found in part], remember)

    def text(self, unit: int) -> str:
        """The normalised text of a unit."""
        normalized = self._normalized[unit]
        if normalized is None:
            normalized = self._normalized[unit] = self._normalize(self._texts[unit])
        return normalized

    def raw(self, unit: int) -> str:
        """The text of a unit as given, before normalisation."""
        return self._texts[unit]

    def all_texts(self) -> list[str]:
        return [self.text(unit) for unit in range(len(self))]

    def _fuzzy_ok(self, keyword: int) -> bool:
        if self.fuzzy_cutoff is None:  # exact matching: asked for every keyword looked up
            return False
        return len(self.index.keywords[keyword].replace(" ", "")) >= self.fuzzy_min_chars

    def has(self, unit: int, keyword: int) -> bool:
        exact = self._postings.get(keyword)
        if exact is not None:  # postings are in unit order: a binary search, not a text scan
            at = bisect_left(exact, unit)
            if at < len(exact) and exact[at] == unit:
                return True
        elif self.index.keywords[keyword] in self.text(unit):
            return True
        return self._fuzzy_ok(keyword) and unit in self._fuzzy(keyword)

    def postings(self, keyword: int) -> list[int] | None:
        """The posting list of an indexed keyword (exact matches), or None: no search is made."""
        return self._postings.get(keyword)

    def units_with(self, keyword: int) -> list[int] | set[int]:
        """Every unit holding the keyword: from the postings, or searched once and remembered."""
        exact = self._postings.get(keyword)
        if exact is not None and self.fuzzy_cutoff is None:
            return exact  # the common case, asked for every keyword a sample misses
        if exact is None:
            exact = self._searched.get(keyword)
            if exact is None:
                needle = self.index.keywords[keyword]
                exact = self._searched[keyword] = [
                    u for u, t in enumerate(self.all_texts()) if needle in t
                ]
        if not self._fuzzy_ok(keyword):
            return exact
        return self._fuzzy(keyword).union(exact)

    def _fuzzy(self, keyword: int) -> set[int]:
        units = self._fuzzy_units.get(keyword)
        if units is None:
            from rapidfuzz import fuzz, process  # only --fuzzy needs it (~0.02 s to load)

            matches = process.extract(
                self.index.keywords[keyword],
                self.all_texts(),
                scorer=fuzz.partial_ratio,
                score_cutoff=self.fuzzy_cutoff,
                limit=None,
            )
            units = self._fuzzy_units[keyword] = {position for _, _, position in matches}
        return units


def _while_scanning(
    scanned: Iterator[tuple[tuple[int, int], T]], meanwhile: Callable[[], None] | None
) -> list[T]:
    """The slices' results in order, ``meanwhile`` done once the first is back (the workers
    then scan the rest while this process does its own work)."""
    parts = []
    for _, part in scanned:
        parts.append(part)
        if meanwhile is not None:
            meanwhile()
            meanwhile = None
    if meanwhile is not None:  # nothing to scan
        meanwhile()
    return parts


def _scan_slice(
    state: tuple[
        Sequence[str],
        ahocorasick.Automaton | None,
        Callable[[str], str],
        Mapping[int, tuple[str, set[int]]],
    ],
    bounds: tuple[int, int],
) -> tuple[list[str], list[set[int]]]:
    texts, automaton, normalize, known = state
    normalized, found = [], []
    for unit in range(*bounds):
        given = known.get(unit)
        if given is None:
            text = normalize(texts[unit])
            given = text, scan(automaton, text)
        normalized.append(given[0])
        found.append(given[1])
    return normalized, found


def _rescan_slice(
    state: tuple[Sequence[str], ahocorasick.Automaton | None, Mapping[int, set[int]]],
    bounds: tuple[int, int],
) -> list[set[int]]:
    normalized, automaton, known = state
    return [
        known[unit] if unit in known else scan(automaton, normalized[unit])
        for unit in range(*bounds)
    ]


def fuzzy_in(keyword: str, text: str, ratio: float | None, min_chars: int = 6) -> bool:
    """Approximate containment for a single text (used for answers)."""
    if not ratio or len(keyword.replace(" ", "")) < min_chars or not text:
        return False
    from rapidfuzz import fuzz  # only --fuzzy needs it (~0.02 s to load)

    return fuzz.partial_ratio(keyword, text, score_cutoff=100.0 * (1.0 - ratio)) > 0
