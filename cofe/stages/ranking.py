"""Retrieval and reranking: where in a ranked list each information point becomes complete.

Strict mode takes the union of the filtered chunks up to a rank, chunk by
chunk (no match across two chunks). cofe-rag mode reproduces the reference
evaluator: the filtered chunks are concatenated and searched as one string.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from cofe.matching import CompiledSample, MatchMode
from cofe.runlog import ChunkRef
from cofe.stages._context import RunContext, Scope
from cofe.stages._judgements import RankedHits


def judge_ranked(
    ctx: RunContext,
    cs: CompiledSample,
    ranked: Sequence[ChunkRef],
    scope: Scope,
) -> RankedHits:
    # an id the corpus lacks keeps its rank (the pipeline did put it there) but holds no text
    ids = [item.chunk_id for item in ranked]
    units = list(map(ctx.chunk_pos.get, ids))
    unknown = (
        tuple(i for i, unit in zip(ids, units, strict=True) if unit is None)
        if None in units
        else ()
    )
    if scope.eligible is None:
        passing = tuple(unit is not None for unit in units)
    else:
        passing = tuple(map(scope.eligible.__contains__, units))
        if ctx.derived:  # a derived item counts when its sources do
            derived = ctx.derived
            passing = tuple(
                ok or (unit in derived and ctx.derived_passes(unit, scope))
                for ok, unit in zip(passing, units, strict=True)
            )
    mentions = tuple(map(scope.mentions_coarse.__contains__, units))
    # flatten (point, slot) so each rank only looks at slots still unfound
    slots = [(p, slot) for p, point in enumerate(cs.points) for slot in point.slots]
    slot_rank: list[int | None] = [None] * len(slots)
    open_slots = list(range(len(slots)))
    chunks = ctx.chunks
    exact_only = ctx.config.fuzzy is None
    joined = ctx.config.mode is MatchMode.COFE_RAG
    keywords = ctx.index.keywords
    empty = ctx.index.find("") if joined else None
    if empty is not None:  # "" is in every string, even an empty one (as in the reference)
        for s in open_slots:
            if empty in slots[s][1]:
                slot_rank[s] = 1
        open_slots = [s for s in open_slots if slot_rank[s] is None]
    if joined:
        if open_slots:
            _joined_ranks(ctx, units, passing, slots, open_slots, slot_rank)
        open_slots = []
    for rank, (unit, ok) in enumerate(zip(units, passing, strict=True), start=1):
        if not open_slots:
            break
        if not ok:
            continue
        assert unit is not None  # only known chunks pass
        if exact_only:
            in_chunk = chunks.text(unit)
            found = [s for s in open_slots if any(keywords[i] in in_chunk for i in slots[s][1])]
        else:
            found = [s for s in open_slots if any(chunks.has(unit, i) for i in slots[s][1])]
        if found:
            for s in found:
                slot_rank[s] = rank
            open_slots = [s for s in open_slots if slot_rank[s] is None]

    point_ranks: list[int | None] = []
    missing: list[tuple[str, ...]] = []
    position = 0
    for point in cs.points:
        ranks = slot_rank[position : position + len(point.slots)]
        position += len(point.slots)
        if None in ranks:
            missing.append(
                tuple(shown for shown, r in zip(point.keywords, ranks, strict=True) if r is None)
            )
            point_ranks.append(None)
        else:  # held whole: complete at the rank of its last keyword
            missing.append(())
            point_ranks.append(max(ranks))  # type: ignore[type-var]
    doc_ids = tuple(map(ctx.chunk_doc_by_id.get, ids))
    derivation: tuple[tuple[str, str] | None, ...] = ()
    if ctx.derived and any(missing):
        derivation = _derivation_losses(ctx, cs, units, passing, missing, scope)
    return RankedHits(
        tuple(point_ranks), passing, mentions, doc_ids, tuple(missing), unknown, derivation
    )


def _joined_ranks(
    ctx: RunContext,
    units: list[int | None],
    passing: tuple[bool, ...],
    slots: list[tuple[int, tuple[int, ...]]],
    open_slots: list[int],
    slot_rank: list[int | None],
) -> None:
    """cofe-rag mode: the rank at which each open slot is first in the passing chunks' texts
    joined in rank order (a keyword may run across two chunks, as in the reference).

    The joined text is searched once per keyword, not once per rank: a keyword is in the
    text of the first r ranks exactly when its first occurrence ends within them, so its
    rank is that of the chunk where the first occurrence ends."""
    texts, ends, ranks = [], [], []
    length = 0
    for rank, (unit, ok) in enumerate(zip(units, passing, strict=True), start=1):
        if ok:
            assert unit is not None  # only known chunks pass
            text = ctx.chunks.text(unit)
            length += len(text)
            texts.append(text)
            ends.append(length)
            ranks.append(rank)
    joined = "".join(texts)
    keywords = ctx.index.keywords
    rank_of: dict[int, int | None] = {}
    for s in open_slots:
        best: int | None = None
        for i in slots[s][1]:
            if i in rank_of:
                r = rank_of[i]
            else:
                keyword = keywords[i]
                at = joined.find(keyword)
                r = rank_of[i] = None if at < 0 else ranks[bisect_left(ends, at + len(keyword))]
            if r is not None and (best is None or r < best):
                best = r
        slot_rank[s] = best


def _derivation_losses(
    ctx: RunContext,
    cs: CompiledSample,
    units: list[int | None],
    passing: tuple[bool, ...],
    missing: list[tuple[str, ...]],
    scope: Scope,
) -> tuple[tuple[str, str] | None, ...]:
    """Per point missing from the list: the first derived item in it whose leaves (in scope)
    hold the whole point, with the leaf holding most of it -- or None."""
    chunks, eligible = ctx.chunks, scope.eligible

    def has(unit: int, slot: tuple[int, ...]) -> bool:
        return any(chunks.has(unit, i) for i in slot)  # postings, text or fuzzy: the index's test

    derived = [u for u, ok in zip(units, passing, strict=True) if ok and u in ctx.derived]
    out: list[tuple[str, str] | None] = []
    for point, absent in zip(cs.points, missing, strict=True):
        found = None
        for unit in derived if absent else ():
            leaves = [
                leaf for leaf in ctx.leaves.get(unit, ()) if eligible is None or leaf in eligible
            ]
            held = [[leaf for leaf in leaves if has(leaf, slot)] for slot in point.slots]
            if leaves and all(held):
                best = max(leaves, key=lambda leaf: sum(leaf in h for h in held))
                found = (ctx.chunk_ids[unit], ctx.chunk_ids[best])
                break
        out.append(found)
    return tuple(out)
