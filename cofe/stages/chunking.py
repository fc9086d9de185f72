"""Chunking stage: is each point still findable in the chunk corpus, and in one chunk?"""

from __future__ import annotations

from collections.abc import Callable

from cofe.matching import CompiledSample
from cofe.stages._context import RunContext
from cofe.stages._judgements import CorpusHits


def judge_chunking(
    ctx: RunContext, cs: CompiledSample, passes: Callable[[int], bool], source_doc: str | None
) -> CorpusHits:
    chunks = ctx.chunks
    hits, intact, missing, why, example = [], [], [], [], []
    for point in cs.points:
        slot_units: list[set[int]] = []
        absent: list[str] = []
        reasons: list[str] = []
        for shown, slot in zip(point.keywords, point.slots, strict=True):
            anywhere = set().union(*(chunks.units_with(ident) for ident in slot))
            eligible = {unit for unit in anywhere if passes(unit)}
            slot_units.append(eligible)
            if eligible:
                continue
            absent.append(shown)
            if anywhere:
                reasons.append("only in chunks that fail the coarse/source filter")
            elif _in_document(ctx, slot, source_doc):
                reasons.append("in the parsed document but in no chunk (cut by a chunk boundary)")
            else:
                reasons.append("in no chunk")
        whole = set.intersection(*slot_units) if slot_units else set()
        hits.append(not absent)
        intact.append(bool(whole))
        missing.append(tuple(absent))
        why.append(tuple(reasons))
        example.append(ctx.chunk_ids[min(whole)] if whole else None)
    return CorpusHits(tuple(hits), tuple(intact), tuple(missing), tuple(why), tuple(example))


def _in_document(ctx: RunContext, slot: tuple[int, ...], source_doc: str | None) -> bool:
    docs = ctx.docs
    if len(docs) == 0:
        return False
    if source_doc is not None and source_doc in ctx.doc_pos:
        unit = ctx.doc_pos[source_doc]
        return any(docs.has(unit, ident) for ident in slot)
    return any(docs.units_with(ident) for ident in slot)
