"""Chunking stage: is each point still findable in the chunk corpus, and in one chunk?

A keyword in the parsed text but in no chunk in scope was lost by chunking.
Chunk offsets tell how: when it sits in a stretch of the document that no
chunk covers, the chunker dropped the text (``chunk_dropped``); when it is in chunks of
its document that do not name the entity (the coarse scope keeps them out), chunking parted
the fact from its name (``chunk_unanchored``); otherwise a chunk boundary cut it
(``chunk_split``). Without offsets the cut is inferred.

A point whose keywords are all in chunks in scope, but in no one chunk together
(a table row's label in one chunk, its figure in the next), was split by a
boundary as well: when no item of the context holds it whole either, chunking
lost it (``chunk_split``, ``split_points``), not retrieval -- a figure without
its label is of no use to a generator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cofe.diagnose import Verdict
from cofe.matching import CompiledSample
from cofe.runlog import ChunkRef
from cofe.stages._context import RunContext, Scope, Source
from cofe.stages._judgements import CorpusHits, RankedHits

CUT = "cut"
DROPPED = "dropped"
UNANCHORED = "unanchored"  # only in chunks of the document that do not name the entity
ABSENT = "absent"  # in no chunk in scope, and no parsed text says whether parsing lost it
_KIND = {
    CUT: Verdict.CHUNK_SPLIT,
    DROPPED: Verdict.CHUNK_DROPPED,
    UNANCHORED: Verdict.CHUNK_UNANCHORED,
    ABSENT: Verdict.NOT_IN_CORPUS,
}


def judge_chunking(ctx: RunContext, cs: CompiledSample, scope: Scope, source: Source) -> CorpusHits:
    hits, intact, missing, why, example, kinds, anchored = [], [], [], [], [], [], []
    cut: list[tuple[str, ...]] = []
    dropped: list[tuple[str, ...]] = []
    eligible, mentions = scope.eligible, scope.mentions_coarse
    for point in cs.points:
        slot_units: list[set[int]] = []
        absent: list[str] = []
        reasons: list[str] = []
        fates: list[str] = []
        for shown, slot in zip(point.keywords, point.slots, strict=True):
            units = _units_holding(ctx, slot, eligible)
            slot_units.append(units)
            if units:
                continue
            absent.append(shown)
            fate, reason = _lost_how(ctx, slot, scope, source)
            fates.append(fate)
            reasons.append(reason)
        # a keyword in no chunk in scope: no chunk holds the point whole
        whole = set.intersection(*slot_units) if slot_units and not absent else set()
        hits.append(not absent)
        intact.append(bool(whole))
        missing.append(tuple(absent))
        why.append(tuple(reasons))
        example.append(ctx.chunk_ids[min(whole)] if whole else None)
        # several kinds of loss in one point: the first in verdict order tells
        kinds.append(
            _KIND[min(fates, key=_FATE_ORDER.__getitem__)] if fates else Verdict.CHUNK_SPLIT
        )
        cut.append(tuple(k for k, f in zip(absent, fates, strict=True) if f == CUT))
        dropped.append(tuple(k for k, f in zip(absent, fates, strict=True) if f == DROPPED))
        anchored.append((not whole.isdisjoint(mentions)) if whole and cs.coarse else None)
    return CorpusHits(
        tuple(hits),
        tuple(intact),
        tuple(missing),
        tuple(why),
        tuple(example),
        tuple(kinds),
        tuple(cut),
        tuple(dropped),
        tuple(anchored),
    )


_ORDER = [
    Verdict.CHUNK_DROPPED,
    Verdict.CHUNK_UNANCHORED,
    Verdict.NOT_IN_CORPUS,
    Verdict.CHUNK_SPLIT,
]
# each fate's place in that order, read per lost keyword
_FATE_ORDER = {fate: _ORDER.index(verdict) for fate, verdict in _KIND.items()}


def _units_holding(
    ctx: RunContext, slot: tuple[int, ...], eligible: set[int] | frozenset[int] | None
) -> set[int]:
    """Eligible chunks holding any alternative of a keyword: from the posting lists."""
    chunks = ctx.chunks
    if eligible is None:
        units = set().union(*(chunks.units_with(ident) for ident in slot))
    elif (
        ctx.config.fuzzy is None
        and len(slot) == 1
        and (one := chunks.postings(slot[0])) is not None
    ):  # the common case: one spelling, exact (often in no chunk at all)
        units = {u for u in one if u in eligible} if one else set()
    else:
        postings = [chunks.postings(ident) for ident in slot]
        if ctx.config.fuzzy is None and all(p is not None for p in postings):
            units = {u for p in postings for u in p if u in eligible}  # type: ignore[union-attr]
        else:
            units = {u for u in eligible if any(chunks.has(u, ident) for ident in slot)}
    return units - ctx.derived if ctx.derived else units


def _lost_how(
    ctx: RunContext, slot: tuple[int, ...], scope: Scope, source: Source
) -> tuple[str, str]:
    """Why a keyword is in no chunk in scope: (cut or dropped, the reason for people)."""
    # the documents whose parsed text holds the keyword, from the posting lists
    holding = {ctx.doc_ids[u] for ident in slot for u in ctx.docs.units_with(ident)}
    docs: set[str] | frozenset[str]
    if source.doc is not None:
        docs = {source.doc} if source.doc in holding else set()
    else:
        docs = holding if scope.docs is None else holding & scope.docs
    if docs:  # the first document by name tells (most keywords a sample misses are in none)
        doc = min(docs)
        in_chunks = {ctx.chunk_doc[u] for ident in slot for u in ctx.chunker_units_with(ident)}
        if doc in in_chunks:
            return UNANCHORED, (
                f"only in chunks of {doc!r} outside the sample's scope (chunks that do not "
                "name the entity, or outside the source span)"
            )
        gaps = ctx.gaps(doc)
        if gaps is None:
            return CUT, (
                f"in the parsed text of {doc!r} but in no chunk: cut by a chunk boundary "
                "(inferred: the chunks carry no offsets)"
            )
        dropped = _in_gap(ctx, doc, slot, gaps)
        if dropped is not None:
            return DROPPED, (
                f"in the parsed text of {doc!r} at characters {dropped[0]}-{dropped[1]}, "
                "which no chunk covers: the chunker dropped that text"
            )
        return CUT, f"in the parsed text of {doc!r} but in no chunk: cut by a chunk boundary"
    if any(ctx.chunker_units_with(ident) for ident in slot):
        return ABSENT, "only in chunks of documents outside the sample's scope"
    if len(ctx.docs) == 0:
        return ABSENT, (
            "in no chunk (the run records no parsed text, so parsing and chunking "
            "cannot be told apart)"
        )
    return ABSENT, "in no chunk and in no parsed document in scope"


def _in_gap(
    ctx: RunContext, doc: str, slot: tuple[int, ...], gaps: list[tuple[int, int]]
) -> tuple[int, int] | None:
    """The uncovered stretch (with a keyword's length of margin) holding the keyword, if any."""
    raw = ctx.docs.raw(ctx.doc_pos[doc])
    keywords = ctx.index.keywords
    for start, end in gaps:
        for ident in slot:
            margin = len(keywords[ident]) + 8
            window = ctx.normalize(raw[max(0, start - margin) : end + margin])
            if keywords[ident] in window:
                return start, end
    return None


def split_points(
    ctx: RunContext,
    cs: CompiledSample,
    corpus: CorpusHits,
    reached: RankedHits,
    items: Sequence[ChunkRef],
) -> tuple[bool, ...]:
    """Per point: its keywords are all in chunks in scope but no one chunk holds them
    together (``corpus``), and no item the generator received (``items``, judged as
    ``reached``: the ones in scope count) holds it whole either -- chunking lost it."""
    if all(intact or not hit for hit, intact in zip(corpus.hits, corpus.intact, strict=True)):
        return (False,) * len(cs.points)  # the common case: nothing to look at
    units = _passing_units(ctx, reached, items)
    return tuple(
        hit and not intact and not any(_holds(ctx, u, point.slots) for u in units)
        for point, hit, intact in zip(cs.points, corpus.hits, corpus.intact, strict=True)
    )


def split_why(
    ctx: RunContext,
    cs: CompiledSample,
    scope: Scope,
    reached: RankedHits,
    items: Sequence[ChunkRef],
    name: str,
) -> Callable[[int], str]:
    """The evidence of a split point, for people: which keyword landed in which chunks, and
    what the context (``name``) got of it."""
    shown = 3

    def why(p: int) -> str:
        point = cs.points[p]
        units = _passing_units(ctx, reached, items)
        landed, received = [], []
        for keyword, slot in zip(point.keywords, point.slots, strict=True):
            holding = sorted(_units_holding(ctx, slot, scope.eligible))
            ids = ", ".join(repr(ctx.chunk_ids[u]) for u in holding[:shown])
            more = f" and {len(holding) - shown} more" if len(holding) > shown else ""
            landed.append(f"{keyword!r} in chunk(s) {ids}{more}")
            ranks = [
                rank
                for rank, unit in enumerate(units, start=1)
                if unit is not None and _holds(ctx, unit, (slot,))
            ]
            received.append(f"{keyword!r} " + (f"at rank {ranks[0]}" if ranks else "absent"))
        anywhere = set.intersection(*(_units_holding(ctx, s, None) for s in point.slots))
        how = (
            f"(chunk {ctx.chunk_ids[min(anywhere)]!r}, outside the sample's scope, does)"
            if anywhere
            else "a chunk boundary split it"
        )
        return (
            f"no chunk in scope holds the whole point, {how}: "
            + "; ".join(landed)
            + f"; and no item of the {name} holds it whole ({', '.join(received)})"
        )

    return why


def _passing_units(
    ctx: RunContext, reached: RankedHits, items: Sequence[ChunkRef]
) -> list[int | None]:
    """Per position of a judged list: its unit when it counts for the sample (in scope)."""
    return [
        ctx.chunk_pos.get(item.chunk_id) if ok else None
        for item, ok in zip(items, reached.passes, strict=False)
    ]


def _holds(ctx: RunContext, unit: int | None, slots: Sequence[tuple[int, ...]]) -> bool:
    """One item holds every keyword (any alternative of each): the index's test."""
    if unit is None:
        return False
    chunks = ctx.chunks
    return all(any(chunks.has(unit, ident) for ident in slot) for slot in slots)
