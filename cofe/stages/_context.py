"""Everything judged once per run: keyword ids, normalised and scanned chunks and documents."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import PurePath

from cofe.evalset import EvalSample
from cofe.matching import CompiledSample, KeywordIndex, UnitIndex, compile_sample, normalizer
from cofe.runlog import RunLog
from cofe.stages._config import ScoreConfig


class RunContext:
    """The run's corpus prepared for matching: each text is normalised and scanned once."""

    def __init__(self, run: RunLog, samples: Iterable[EvalSample], config: ScoreConfig) -> None:
        self.config = config
        self.normalize = normalizer(config.mode)
        self.index = KeywordIndex()
        # every keyword is registered before any text is scanned, so one pass finds them all
        self.compiled: dict[str, CompiledSample] = {
            sample.id: compile_sample(sample, self.index, config.mode) for sample in samples
        }
        fuzzy = {"fuzzy_ratio": config.fuzzy, "fuzzy_min_chars": config.fuzzy_min_chars}

        chunks = list(run.chunks.values())
        self.chunk_ids = [chunk.chunk_id for chunk in chunks]
        self.chunk_pos = {chunk_id: unit for unit, chunk_id in enumerate(self.chunk_ids)}
        self.chunk_doc = [chunk.doc_id for chunk in chunks]
        self.chunks = UnitIndex(
            [chunk.text for chunk in chunks], self.index, self.normalize, **fuzzy
        )
        self.chunks_per_doc = Counter(self.chunk_doc)

        documents = list(run.documents.values())
        self.doc_ids = [doc.doc_id for doc in documents]
        self.doc_pos = {doc_id: unit for unit, doc_id in enumerate(self.doc_ids)}
        self.docs = UnitIndex([doc.text for doc in documents], self.index, self.normalize, **fuzzy)

        # a sample may name its source by doc id, file name, path or stem
        names: dict[str, set[str]] = defaultdict(set)
        for doc in documents:
            for name in (
                doc.doc_id,
                doc.source,
                PurePath(doc.source).name,
                PurePath(doc.source).stem,
            ):
                names[name].add(doc.doc_id)
        for doc_id in self.chunks_per_doc:
            names[doc_id].add(doc_id)
        self._doc_names = names

    def resolve_doc(self, name: str) -> str | None:
        """The doc id a sample's ``source.doc`` names, or None when unknown or ambiguous."""
        for key in (name, PurePath(name).name, PurePath(name).stem):
            found = self._doc_names.get(key)
            if found and len(found) == 1:
                return next(iter(found))
        return None

    def mentions_coarse(self, compiled: CompiledSample, unit: int) -> bool:
        if self.config.fuzzy is None:
            return not self.chunks.found[unit].isdisjoint(compiled.coarse)
        return any(self.chunks.has(unit, ident) for ident in compiled.coarse)

    def chunk_filter(
        self, compiled: CompiledSample, source_doc: str | None
    ) -> Callable[[int], bool]:
        """Which chunks may count for a sample: coarse filter, then optional same-source filter."""
        coarse = compiled.coarse if self.config.coarse_filter else ()
        same_source = self.config.same_source and source_doc is not None
        chunk_doc = self.chunk_doc
        exact_only = self.config.fuzzy is None
        if not coarse and not same_source:
            return lambda unit: True
        coarse_set = frozenset(coarse)
        found = self.chunks.found

        def passes(unit: int) -> bool:
            if same_source and chunk_doc[unit] != source_doc:
                return False
            if not coarse_set:
                return True
            if exact_only:
                return not coarse_set.isdisjoint(found[unit])
            return self.mentions_coarse(compiled, unit)

        return passes
