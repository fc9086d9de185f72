"""Everything judged once per run: keyword ids, normalised and scanned chunks and documents."""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from cofe.config import CoarseScope, ScoreConfig
from cofe.evalset import EvalSample
from cofe.matching import (
    CompiledSample,
    KeywordIndex,
    MatchMode,
    UnitIndex,
    compile_sample,
    normalizer,
    register_keywords,
    strict_tokens,
)
from cofe.measures import ClaimLabels, Unscored
from cofe.runlog import Chunk, RunLog


@dataclass(frozen=True, slots=True)
class Source:
    """A sample's source document as resolved against the run: an id, or why there is none."""

    doc: str | None
    problem: str | None = None  # set when the sample names a source the run cannot pin down


NO_SOURCE = Source(None)
TOKENS_KEPT = 20_000
"""Chunks whose strict tokens ``RunContext.chunk_tokens`` keeps at a time."""


@dataclass(frozen=True, slots=True)
class Scope:
    """Per sample: the chunks allowed to count (None = all), those naming the entity, and
    the documents in scope (None = all) whose parsed text the parse judge reads."""

    eligible: set[int] | frozenset[int] | None
    mentions_coarse: set[int]
    docs: frozenset[str] | None


class RunContext:
    """The run's corpus prepared for matching: each text is normalised and scanned once."""

    def __init__(
        self, run: RunLog, samples: Iterable[EvalSample], config: ScoreConfig, *, workers: int = 1
    ) -> None:
        self.config = config
        self.workers = workers
        # the LLM judge's claim labels per sample (``cofe judge``), filled by the scorer
        self.claims: dict[str, ClaimLabels | Unscored] = {}
        self.normalize = normalizer(config.mode)
        samples = list(samples)
        compile_samples = self._register(samples)
        exact = config.fuzzy is None
        if not exact:  # which keywords get posting lists depends on the compiled samples
            compile_samples()

        chunks = list(run.chunks.values())
        self._chunks = chunks
        self.chunk_ids = [chunk.chunk_id for chunk in chunks]
        self.chunk_pos = {chunk_id: unit for unit, chunk_id in enumerate(self.chunk_ids)}
        self.chunk_doc = [chunk.doc_id for chunk in chunks]
        # items a pipeline built from corpus chunks (windows, citations, summaries, entities,
        # relations: any kind but "chunk") are what the generator read, not what the chunker
        # produced: the chunking stage, its coverage and the corpus' chunks per document are
        # the chunker's own; a derived item's documents are those of its leaves
        self.derived = frozenset(unit for unit, chunk in enumerate(chunks) if chunk.is_derived)
        self.leaves, self.unknown_sources = _leaves(chunks, self.chunk_pos, self.derived)
        docs_of: list[str | frozenset[str]] = list(self.chunk_doc)
        for unit, leaves in self.leaves.items():
            if leaves:
                found = {self.chunk_doc[leaf] for leaf in leaves}
                docs_of[unit] = next(iter(found)) if len(found) == 1 else frozenset(found)
        self.chunk_doc_by_id = dict(zip(self.chunk_ids, docs_of, strict=True))
        self.doc_units: dict[str, set[int]] = defaultdict(set)
        for unit, doc_id in enumerate(self.chunk_doc):
            if unit not in self.derived:
                self.doc_units[doc_id].add(unit)
        documents = list(run.documents.values())
        self.doc_ids = [doc.doc_id for doc in documents]
        self.doc_pos = {doc_id: unit for unit, doc_id in enumerate(self.doc_ids)}
        # a sample may name its source by doc id, file name, path or stem
        names: dict[str, set[str]] = defaultdict(set)
        for doc in documents:
            base = os.path.basename(doc.source)
            for name in (doc.doc_id, doc.source, base, os.path.splitext(base)[0]):
                names[name].add(doc.doc_id)
        for doc_id in self.doc_units:
            names[doc_id].add(doc_id)
        self._doc_names = names
        self._resolved: dict[str, Source] = {}
        self._eligible_by_docs: dict[frozenset[str], frozenset[int]] = {}
        self._gaps: dict[str, list[tuple[int, int]] | None] = {}
        # per chunk, its strict tokens (ROUGE), made once: pools and contexts share chunks
        self._tokens: dict[int, tuple[str, ...]] = {}

        self._doc_texts = [doc.text for doc in documents]
        # a document that is one chunk (a short page, an FAQ entry) is scanned once, as that
        # chunk; its document index reads what the chunk's scan found
        self._one_chunk = _one_chunk_documents(
            self._doc_texts, self.doc_ids, self.doc_units, chunks
        )
        self.chunks = UnitIndex(
            [chunk.text for chunk in chunks],
            self.index,
            self.normalize,
            indexed=self._corpus_wide(samples),
            workers=workers,
            fuzzy_ratio=config.fuzzy,
            fuzzy_min_chars=config.fuzzy_min_chars,
            remember=self._one_chunk.values() if exact else (),
            # exact matching indexes every keyword, all registered already: the samples
            # compile while the workers scan the chunks
            meanwhile=compile_samples if exact else None,
        )
        # one Aho-Corasick pass over the documents too: a keyword's documents are a posting
        # list, never a scan of every document per sample (fuzzy matching keeps lazy texts)
        self.docs = self._doc_index()

    def _doc_index(self) -> UnitIndex:
        """The documents' look-ups for this batch's keywords (exact matching: one scan)."""
        exact = self.config.fuzzy is None
        # the chunks were scanned for every keyword of the batch (``_corpus_wide``), as the
        # documents are: what a one-chunk document's chunk holds is what the document holds
        known = {
            doc: (self.chunks.text(unit), self.chunks.found[unit])
            for doc, unit in self._one_chunk.items()
            if exact
        }
        self.chunks.found = {}
        return UnitIndex(
            self._doc_texts,
            self.index,
            self.normalize,
            indexed=range(len(self.index.keywords)) if exact else (),
            lazy=not exact,
            workers=self.workers,
            fuzzy_ratio=self.config.fuzzy,
            fuzzy_min_chars=self.config.fuzzy_min_chars,
            known=known,
        )

    def bind(self, samples: Iterable[EvalSample]) -> None:
        """Score another batch of samples over the same corpus (the streaming scorer): their
        keywords replace the previous batch's, the normalised corpus is kept and scanned once
        more for the new keywords -- memory stays flat in the number of samples. Fuzzy
        matching scans the chunks for this batch's corpus-wide keywords only, and reads the
        documents lazily again (as the first batch does); its approximate look-ups are
        remembered per batch."""
        samples = list(samples)
        compile_samples = self._register(samples)
        self.claims = {}
        self._eligible_by_docs.clear()
        if self.config.fuzzy is None:
            self.chunks.rebind(
                self.index,
                self._corpus_wide(samples),
                workers=self.workers,
                remember=self._one_chunk.values(),
                meanwhile=compile_samples,
            )
            known = {doc: self.chunks.found[unit] for doc, unit in self._one_chunk.items()}
            self.chunks.found = {}
            self.docs.rebind(
                self.index, range(len(self.index.keywords)), workers=self.workers, known=known
            )
        else:
            compile_samples()
            self.chunks.rebind(self.index, self._corpus_wide(samples), workers=self.workers)
            self.docs = self._doc_index()

    def _register(self, samples: list[EvalSample]) -> Callable[[], None]:
        """A new keyword index holding every keyword of these samples; returned: the
        compiling of the samples against it, done when convenient (while the workers scan
        the chunks, for exact matching)."""
        self.index = index = KeywordIndex()
        mode = self.config.mode
        cache = register_keywords(samples, index, mode, self.workers)
        self.compiled: dict[str, CompiledSample] = {}

        def compile_samples() -> None:
            self.compiled = {s.id: compile_sample(s, index, mode, cache) for s in samples}

        return compile_samples

    def _corpus_wide(self, samples: list[EvalSample]) -> Iterable[int]:
        """Keywords given posting lists over the chunk corpus.

        Exact matching: all of them (one Aho-Corasick pass costs about as much as
        normalising the corpus, and then no look-up scans it). Fuzzy matching:
        coarse keywords, and fine keywords of samples that no filter narrows.
        """
        if self.config.fuzzy is None:
            return range(len(self.index.keywords))
        ids: set[int] = set()
        narrowing = self.config.scope is not CoarseScope.OFF
        for sample in samples:
            compiled = self.compiled[sample.id]
            ids.update(compiled.coarse)
            narrowed = (narrowing and compiled.coarse) or (
                self.config.same_source and self.source(sample).doc is not None
            )
            if not narrowed:
                ids.update(
                    ident for point in compiled.points for slot in point.slots for ident in slot
                )
        return ids

    def source(self, sample: EvalSample) -> Source:
        """The document a sample's ``source.doc`` names, or the problem with the name."""
        if sample.source is None:
            return NO_SOURCE
        name = sample.source.doc
        found = self._resolved.get(name)
        if found is None:
            found = self._resolved[name] = self._resolve(name)
        return found

    def _resolve(self, name: str) -> Source:
        base = os.path.basename(name)
        for key in (name, base, os.path.splitext(base)[0]):
            docs = self._doc_names.get(key)
            if not docs:
                continue
            if len(docs) == 1:
                return Source(next(iter(docs)))
            shown = ", ".join(sorted(docs)[:4])
            return Source(None, f"source {name!r} names several documents of the run: {shown}")
        return Source(None, f"source {name!r} names no document of the run")

    def scope(self, sample: EvalSample, compiled: CompiledSample, source: Source) -> Scope:
        """Which chunks name the sample's entity, and which may count for it.

        Document scope: every chunk of a document that names the entity (in some
        chunk), and of the sample's own source document, counts. When no chunk
        names the entity at all the sample is scored without the coarse filter
        (the scorer reports it as a label problem).
        """
        mentions: set[int] = set()
        for ident in compiled.coarse:
            mentions.update(self.chunks.units_with(ident))
        scope = self.config.scope if compiled.coarse else CoarseScope.OFF
        eligible: set[int] | frozenset[int] | None = None
        docs: frozenset[str] | None = None
        if scope is CoarseScope.CHUNK:
            eligible = mentions
        elif scope is CoarseScope.DOCUMENT and (mentions or source.doc is not None):
            # a summary naming the entity does not bring its own document name into scope
            named = {self.chunk_doc[unit] for unit in mentions if unit not in self.derived}
            if source.doc is not None:
                named.add(source.doc)
            docs = frozenset(named)
            eligible = self._eligible_by_docs.get(docs)
            if eligible is None:
                eligible = self._eligible_by_docs[docs] = frozenset(
                    unit for doc in docs for unit in self.doc_units.get(doc, ())
                )
        if self.config.same_source and source.doc is not None:
            in_source = self._source_units(sample, source.doc)
            eligible = in_source if eligible is None else eligible & in_source
            docs = frozenset([source.doc])
        return Scope(eligible, mentions, docs)

    def _source_units(self, sample: EvalSample, doc: str) -> set[int]:
        """Chunks of the source document; of its recorded span when there is one."""
        units = self.doc_units.get(doc, set())
        span = sample.source
        if span is None or span.start is None or span.end is None:
            return set(units)
        inside = set()
        for unit in units:
            chunk = self._chunks[unit]
            if chunk.start is None or chunk.end is None:
                return set(units)  # no offsets: the span cannot be placed
            if chunk.start < span.end and chunk.end > span.start:
                inside.add(unit)
        return inside

    def derived_passes(self, unit: int, scope: Scope) -> bool:
        """Whether a derived item counts for a sample: some leaf of it is eligible (an item
        whose sources are unknown: its own document is in scope)."""
        eligible = scope.eligible
        if eligible is None:
            return True
        leaves = self.leaves.get(unit)
        if leaves:
            return any(leaf in eligible for leaf in leaves)
        return scope.docs is not None and self.chunk_doc[unit] in scope.docs

    def chunk_tokens(self, unit: int) -> Sequence[str]:
        """The strict tokens of a chunk (ROUGE reads them whatever the matching mode). In
        strict mode they are its normal form, split; in the others the strict tokeniser's
        regex runs on the raw text, so they are made once per chunk: the same chunks come back
        in sample after sample's pool and context. At most ``TOKENS_KEPT`` chunks are kept,
        so a big corpus does not hold them all, and their words are interned: a corpus
        repeats its words, which are then held once."""
        if self.config.mode is MatchMode.STRICT:
            return self.chunks.text(unit).split()
        tokens = self._tokens.get(unit)
        if tokens is None:
            if len(self._tokens) >= TOKENS_KEPT:
                self._tokens.clear()
            words = strict_tokens(self.chunks.raw(unit))
            tokens = self._tokens[unit] = tuple(map(sys.intern, words))
        return tokens

    def chunker_units_with(self, keyword: int) -> list[int] | set[int]:
        """The chunker's chunks (not derived ones) holding a keyword."""
        units = self.chunks.units_with(keyword)
        return units if not self.derived else [u for u in units if u not in self.derived]

    def gaps(self, doc: str) -> list[tuple[int, int]] | None:
        """Character spans of a document's parsed text that no chunk covers.

        None when some chunk of the document has no offsets (a cut and dropped
        text can then not be told apart). Stretches of whitespace only are left out:
        a chunker that splits at a space or a line break dropped no text, and a keyword
        across such a boundary was cut, not dropped.
        """
        if doc in self._gaps:
            return self._gaps[doc]
        spans = []
        for unit in self.doc_units.get(doc, ()):
            if unit in self.derived:
                continue
            chunk = self._chunks[unit]
            if chunk.start is None or chunk.end is None:
                self._gaps[doc] = None
                return None
            spans.append((chunk.start, chunk.end))
        raw = self.docs.raw(self.doc_pos[doc]) if doc in self.doc_pos else ""
        found, covered = [], 0
        for start, end in sorted(spans):
            if start > covered:
                found.append((covered, start))
            covered = max(covered, end)
        if covered < len(raw):
            found.append((covered, len(raw)))
        found = [(start, end) for start, end in found if raw[start:end].strip()]
        self._gaps[doc] = found
        return found


def _one_chunk_documents(
    texts: list[str], doc_ids: list[str], doc_units: dict[str, set[int]], chunks: list[Chunk]
) -> dict[int, int]:
    """Documents (by position) whose text is exactly that of their one chunk (its position)."""
    found = {}
    for position, (text, doc_id) in enumerate(zip(texts, doc_ids, strict=True)):
        units = doc_units.get(doc_id)
        if units is not None and len(units) == 1:
            (unit,) = units
            if chunks[unit].text == text:
                found[position] = unit
    return found


def _leaves(
    chunks: list[Chunk], position: dict[str, int], derived: frozenset[int]
) -> tuple[dict[int, tuple[int, ...]], dict[str, list[str]]]:
    """Per derived item: the corpus chunks it was built from, through derived sources (a
    summary of summaries), in order; and per item, the source ids the run does not hold."""
    leaves: dict[int, tuple[int, ...]] = {}
    unknown: dict[str, list[str]] = {}

    def resolve(unit: int, path: frozenset[int]) -> tuple[int, ...]:
        if unit in leaves:
            return leaves[unit]
        found: dict[int, None] = {}
        chunk = chunks[unit]
        for source in chunk.derived_from or ():
            at = position.get(source)
            if at is None:
                unknown.setdefault(chunk.chunk_id, []).append(source)
            elif at not in derived:
                found[at] = None
            elif at not in path:  # a cycle of derivations ends where it began
                found.update(dict.fromkeys(resolve(at, path | {at})))
        leaves[unit] = tuple(found)
        return leaves[unit]

    for unit in sorted(derived):
        resolve(unit, frozenset([unit]))
    return leaves, unknown
