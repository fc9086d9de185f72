"""The oracle of a sample: the chunks that hold each point it lost, found as the scorer finds them.

A point is held by a chunk when every keyword (any alternative of each) is in that one chunk
-- the index's own test (``cofe.matching``), over the chunks the sample's scope lets count
(``RunContext.scope``), so an oracle never hands the generator a chunk the scorer would not
have counted. Among the holders one in the sample's gold passage (its recorded source span)
comes first -- a chunk elsewhere that shares the point's words is not the evidence --, then
the least intrusive one: one the run already put in the context, else in the pool, else one of
the source document, else the first.

Where no chunk holds a point whole (chunking cut or dropped it), the *source span* holding it
whole becomes one extra item: the sample's recorded source span when its text holds the
point, else the stretch of the source document from the first to the last chunk holding a
piece of it. It is a derived item (``kind="oracle-span"``, built from those chunks), so the
chunking stage of the replayed scoring never counts it as a chunk the chunker made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cofe.evalset import EvalSample, keyword_alternatives
from cofe.runlog import Chunk, RunLog, SampleRecord
from cofe.stages import RunContext, ScoreConfig

SPAN_KIND = "oracle-span"


@dataclass(frozen=True)
class SampleOracle:
    """What the oracle hands the pipeline for one sample.

    ``chunks``: one item per lost point (deduplicated), in point order; ``spans``: the points
    given as source spans (chunking cut them); ``missing``: points no chunk and no span holds
    (parsing lost them, or the run records no text holding them) -- a sample with any is not
    replayed; ``in_pool`` / ``in_context``: every oracle chunk was already there in the run.
    """

    sample_id: str
    points: tuple[int, ...]
    chunks: tuple[Chunk, ...]
    spans: tuple[int, ...]
    missing: tuple[int, ...]
    in_pool: bool
    in_context: bool

    @property
    def usable(self) -> bool:
        return bool(self.chunks) and not self.missing


def find_oracles(
    log: RunLog,
    samples: Sequence[EvalSample],
    lost: dict[str, list[int]],
    config: ScoreConfig,
    top_k: int | None,
) -> dict[str, SampleOracle]:
    """Per sample: the oracle of the points ``lost[sample_id]`` (indices into fine_keywords)."""
    ctx = RunContext(log, samples, config)
    found = {}
    for sample in samples:
        record = log.records.get(sample.id)
        found[sample.id] = _oracle(ctx, log, sample, lost.get(sample.id, []), record, top_k)
    return found


def _oracle(
    ctx: RunContext,
    log: RunLog,
    sample: EvalSample,
    points: list[int],
    record: SampleRecord | None,
    top_k: int | None,
) -> SampleOracle:
    compiled = ctx.compiled[sample.id]
    source = ctx.source(sample)
    scope = ctx.scope(sample, compiled, source)
    pool = [r.chunk_id for r in (record.pool or [])] if record else []
    if record is not None and record.context is not None:
        context = [r.chunk_id for r in record.context]
    else:
        context = pool[: top_k or 0]
    order = {chunk_id: i for i, chunk_id in enumerate(context)}
    for i, chunk_id in enumerate(pool):
        order.setdefault(chunk_id, len(context) + i)
    beyond = len(context) + len(pool)  # after every chunk the run retrieved (not tied with one)
    gold = _gold_passage(ctx, log, sample, source.doc)
    chosen: list[Chunk] = []
    spans, missing = [], []
    for p in points:
        if p >= len(compiled.points):
            missing.append(p)
            continue
        slots = compiled.points[p].slots
        holders = _holders(ctx, slots, scope.eligible)
        if holders:
            # the gold passage first: a chunk that merely shares the point's words (a year,
            # a name in another story) is not the evidence a perfect retriever would return
            best = min(
                holders,
                key=lambda u: (
                    not gold(u),
                    order.get(ctx.chunk_ids[u], beyond),
                    ctx.chunk_doc[u] != source.doc,
                    u,
                ),
            )
            chosen.append(log.chunks[ctx.chunk_ids[best]])
            continue
        span = _span(ctx, log, sample, source.doc, slots, p)
        if span is None:
            missing.append(p)
        else:
            chosen.append(span)
            spans.append(p)
    unique = list({c.chunk_id: c for c in chosen}.values())
    ids = {c.chunk_id for c in unique}
    return SampleOracle(
        sample.id,
        tuple(points),
        tuple(unique),
        tuple(spans),
        tuple(missing),
        in_pool=bool(ids) and ids <= set(pool),
        in_context=bool(ids) and ids <= set(context),
    )


def _gold_passage(
    ctx: RunContext, log: RunLog, sample: EvalSample, doc_id: str | None
) -> Callable[[int], bool]:
    """Whether a chunk lies in the sample's gold passage: its recorded source span (start and
    end in the source document) overlapped by the chunk's offsets. Where the run cannot place
    it (no span, no offsets, a span past the parsed text), no chunk is preferred for it."""
    ref = sample.source
    if (
        doc_id is None
        or doc_id not in log.documents
        or ref is None
        or ref.start is None
        or ref.end is None
        or ref.end > len(log.documents[doc_id].text)
    ):
        return lambda unit: False
    start, end = ref.start, ref.end

    def inside(unit: int) -> bool:
        if ctx.chunk_doc[unit] != doc_id:
            return False
        chunk = log.chunks[ctx.chunk_ids[unit]]
        return (
            chunk.start is not None
            and chunk.end is not None
            and chunk.start < end
            and chunk.end > start
        )

    return inside


def _holders(
    ctx: RunContext, slots: Sequence[tuple[int, ...]], eligible: set[int] | frozenset[int] | None
) -> set[int]:
    """The chunker's chunks in scope holding every keyword of a point (any alternative of
    each): the posting lists of each keyword, intersected."""
    found: set[int] | None = None
    for slot in slots:
        units = {u for ident in slot for u in ctx.chunks.units_with(ident)}
        found = units if found is None else found & units
        if not found:
            return set()
    found = found or set()
    if eligible is not None:
        found &= eligible
    return found - ctx.derived


def _holds_text(ctx: RunContext, text: str, slots: Sequence[tuple[int, ...]]) -> bool:
    """Whether a text holds every keyword of a point, normalised as the index normalises."""
    normal = ctx.normalize(text)
    keywords = ctx.index.keywords
    return all(any(keywords[ident] in normal for ident in slot) for slot in slots)


def _span(
    ctx: RunContext,
    log: RunLog,
    sample: EvalSample,
    doc_id: str | None,
    slots: Sequence[tuple[int, ...]],
    point: int,
) -> Chunk | None:
    """The source span holding a point whole, as one derived item; None when there is none."""
    if doc_id is None or doc_id not in log.documents:
        return None
    text = log.documents[doc_id].text
    pieces: list[Chunk] = []
    ref = sample.source
    start = end = None
    if (
        ref is not None
        and ref.start is not None
        and ref.end is not None
        and ref.end <= len(text)
        and _holds_text(ctx, text[ref.start : ref.end], slots)
    ):
        start, end = ref.start, ref.end
    if start is None or end is None:
        # the chunks of the source document holding a piece of the point: the stretch from the
        # first to the last of them holds every piece (when the chunks carry offsets)
        units = [
            u
            for u in sorted(ctx.doc_units.get(doc_id, ()))
            if any(ctx.chunks.has(u, ident) for slot in slots for ident in slot)
        ]
        pieces = [log.chunks[ctx.chunk_ids[u]] for u in units]
        placed = [c for c in pieces if c.start is not None and c.end is not None]
        if not placed or len(placed) < len(pieces):
            return None
        start = min(c.start for c in placed if c.start is not None)
        end = max(c.end for c in placed if c.end is not None)
        if not _holds_text(ctx, text[start:end], slots):
            return None
    narrowed = _around_the_cut(ctx, log, sample, doc_id, point, start, end)
    if narrowed is not None and _holds_text(ctx, text[narrowed[0] : narrowed[1]], slots):
        start, end = narrowed
    return Chunk(
        chunk_id=f"oracle-span:{sample.id}:{point}",
        doc_id=doc_id,
        text=text[start:end],
        start=start,
        end=end,
        kind=SPAN_KIND,
        derived_from=[c.chunk_id for c in pieces] or None,
        meta={"oracle": "the source span holding the point whole (chunking cut it)"},
    )


def _around_the_cut(
    ctx: RunContext,
    log: RunLog,
    sample: EvalSample,
    doc_id: str,
    point: int,
    start: int,
    end: int,
) -> tuple[int, int] | None:
    """The stretch of the chunks a cut point straddles: each keyword found as written inside
    the span, and the chunks of the document overlapping them, whole (what re-chunking would
    join). None when a keyword is not there as written (the index matched a normal form) or
    the chunks carry no offsets -- the span is then kept as it is."""
    text = log.documents[doc_id].text
    found: list[tuple[int, int]] = []
    for keyword in sample.fine_keywords[point]:
        hits = [
            (at, at + len(alt))
            for alt in keyword_alternatives(keyword)
            if alt and (at := text.find(alt, start, end)) >= 0
        ]
        if not hits:
            return None
        found.append(min(hits))
    low, high = min(a for a, _ in found), max(b for _, b in found)
    around = [
        log.chunks[ctx.chunk_ids[u]]
        for u in ctx.doc_units.get(doc_id, ())
        if (c := log.chunks[ctx.chunk_ids[u]]).start is not None
        and c.end is not None
        and c.start < high
        and c.end > low
    ]
    if not around:
        return None
    return (
        min(low, *(c.start for c in around if c.start is not None)),
        max(high, *(c.end for c in around if c.end is not None)),
    )
