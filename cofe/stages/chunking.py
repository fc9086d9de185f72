"""Chunking stage: is each point still findable in the chunk corpus, and in one chunk?"""

from __future__ import annotations

from cofe.matching import CompiledSample
from cofe.stages._context import RunContext, Scope
from cofe.stages._judgements import CUT_BY_BOUNDARY, CorpusHits


def judge_chunking(
    ctx: RunContext, cs: CompiledSample, scope: Scope, source_doc: str | None
) -> CorpusHits:
    hits, intact, missing, why, example = [], [], [], [], []
    for point in cs.points:
        slot_units: list[set[int]] = []
        absent: list[str] = []
        reasons: list[str] = []
        for shown, slot in zip(point.keywords, point.slots, strict=True):
            units = _units_holding(ctx, slot, scope.eligible)
            slot_units.append(units)
            if units:
                continue
            absent.append(shown)
            if _in_some_chunk(ctx, slot, source_doc):
                reasons.append("only in chunks that fail the coarse/source filter")
            elif _in_document(ctx, slot, source_doc):
                reasons.append(CUT_BY_BOUNDARY)
            else:
                reasons.append("in no chunk")
        whole = set.intersection(*slot_units) if slot_units else set()
        hits.append(not absent)
        intact.append(bool(whole))
        missing.append(tuple(absent))
        why.append(tuple(reasons))
        example.append(ctx.chunk_ids[min(whole)] if whole else None)
    return CorpusHits(tuple(hits), tuple(intact), tuple(missing), tuple(why), tuple(example))


def _units_holding(ctx: RunContext, slot: tuple[int, ...], eligible: set[int] | None) -> set[int]:
    """Eligible chunks holding any alternative of a keyword, walking the smaller side."""
    chunks = ctx.chunks
    if eligible is None:
        return set().union(*(chunks.units_with(ident) for ident in slot))
    postings = [chunks.postings(ident) for ident in slot]
    if (
        ctx.config.fuzzy is None
        and all(p is not None for p in postings)
        and sum(len(p) for p in postings) <= len(eligible)  # type: ignore[arg-type]
    ):
        return {unit for p in postings for unit in p if unit in eligible}  # type: ignore[union-attr]
    return {unit for unit in eligible if any(chunks.has(unit, ident) for ident in slot)}


def _in_some_chunk(ctx: RunContext, slot: tuple[int, ...], source_doc: str | None) -> bool:
    """Is the keyword in any chunk at all (of the source document, when it is known)?"""
    if source_doc is not None and source_doc in ctx.doc_units:
        return any(
            ctx.chunks.has(unit, ident) for unit in ctx.doc_units[source_doc] for ident in slot
        )
    return any(ctx.chunks.units_with(ident) for ident in slot)


def _in_document(ctx: RunContext, slot: tuple[int, ...], source_doc: str | None) -> bool:
    docs = ctx.docs
    if len(docs) == 0:
        return False
    if source_doc is not None and source_doc in ctx.doc_pos:
        unit = ctx.doc_pos[source_doc]
        return any(docs.has(unit, ident) for ident in slot)
    return any(docs.units_with(ident) for ident in slot)
