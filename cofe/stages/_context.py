"""Everything judged once per run: keyword ids, normalised and scanned chunks and documents."""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from cofe.evalset import EvalSample
from cofe.matching import (
    CompiledSample,
    KeywordIndex,
    UnitIndex,
    compile_sample,
    normalizer,
    register_keywords,
)
from cofe.runlog import RunLog
from cofe.stages._config import ScoreConfig


@dataclass(frozen=True, slots=True)
class Scope:
    """Per sample: the chunks allowed to count (None = all) and those mentioning a coarse keyword."""

    eligible: set[int] | None
    mentions_coarse: set[int]


class RunContext:
    """The run's corpus prepared for matching: each text is normalised and scanned once."""

    def __init__(
        self, run: RunLog, samples: Iterable[EvalSample], config: ScoreConfig, *, workers: int = 1
    ) -> None:
        self.config = config
        self.normalize = normalizer(config.mode)
        self.index = KeywordIndex()
        samples = list(samples)
        cache = register_keywords(samples, self.index, config.mode, workers)
        self.compiled: dict[str, CompiledSample] = {
            sample.id: compile_sample(sample, self.index, config.mode, cache) for sample in samples
        }

        chunks = list(run.chunks.values())
        self.chunk_ids = [chunk.chunk_id for chunk in chunks]
        self.chunk_pos = {chunk_id: unit for unit, chunk_id in enumerate(self.chunk_ids)}
        self.chunk_doc = [chunk.doc_id for chunk in chunks]
        self.chunk_doc_by_id = dict(zip(self.chunk_ids, self.chunk_doc, strict=True))
        self.doc_units: dict[str, set[int]] = defaultdict(set)
        for unit, doc_id in enumerate(self.chunk_doc):
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
        self._resolved: dict[str, str | None] = {}

        fuzzy = {"fuzzy_ratio": config.fuzzy, "fuzzy_min_chars": config.fuzzy_min_chars}
        self.chunks = UnitIndex(
            [chunk.text for chunk in chunks],
            self.index,
            self.normalize,
            indexed=self._corpus_wide(samples),
            workers=workers,
            **fuzzy,
        )
        # documents are read only for the samples that name them: normalised on demand
        self.docs = UnitIndex(
            [doc.text for doc in documents], self.index, self.normalize, lazy=True, **fuzzy
        )

    def _corpus_wide(self, samples: list[EvalSample]) -> set[int]:
        """Keywords looked up across the whole chunk corpus, so worth posting lists.

        Coarse keywords always (they pick a sample's eligible chunks); fine
        keywords only of samples that no filter narrows to a few chunks.
        """
        ids: set[int] = set()
        for sample in samples:
            compiled = self.compiled[sample.id]
            ids.update(compiled.coarse)
            source = self.resolve_doc(sample.source.doc) if sample.source else None
            narrowed = (self.config.coarse_filter and compiled.coarse) or (
                self.config.same_source and source is not None
            )
            if not narrowed:
                ids.update(
                    ident for point in compiled.points for slot in point.slots for ident in slot
                )
        return ids

    def resolve_doc(self, name: str) -> str | None:
        """The doc id a sample's ``source.doc`` names, or None when unknown or ambiguous."""
        if name not in self._resolved:
            self._resolved[name] = None
            base = os.path.basename(name)
            for key in (name, base, os.path.splitext(base)[0]):
                found = self._doc_names.get(key)
                if found and len(found) == 1:
                    self._resolved[name] = next(iter(found))
                    break
        return self._resolved[name]

    def scope(self, compiled: CompiledSample, source_doc: str | None) -> Scope:
        """Which chunks mention the sample's entity, and which may count for it."""
        coarse: set[int] = set()
        for ident in compiled.coarse:
            coarse.update(self.chunks.units_with(ident))
        eligible: set[int] | None = None  # None: every chunk counts
        if self.config.coarse_filter and compiled.coarse:
            eligible = coarse
        if self.config.same_source and source_doc is not None:
            in_doc = self.doc_units.get(source_doc, set())
            eligible = set(in_doc) if eligible is None else eligible & in_doc
        return Scope(eligible, coarse)
