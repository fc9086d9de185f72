"""Parse stage: are the fine keywords in the parsed text of the documents in scope? And the
same question of one text a sample record holds (a step ``cofe.chain`` declares)."""

from __future__ import annotations

from cofe.matching import CompiledSample, fuzzy_in
from cofe.measures import Unscored
from cofe.stages._context import RunContext, Scope, Source
from cofe.stages._judgements import PointHits


def judge_parse(
    ctx: RunContext, cs: CompiledSample, source: Source, scope: Scope
) -> PointHits | Unscored:
    """The source document when the sample names one; else any document in scope."""
    docs = ctx.docs
    if source.problem:
        return Unscored(source.problem)
    if source.doc is not None and source.doc not in ctx.doc_pos:
        return Unscored(f"source document {source.doc!r} has no parsed text in the run log")
    allowed = None
    if source.doc is None and scope.docs is not None:
        allowed = {ctx.doc_pos[d] for d in scope.docs if d in ctx.doc_pos} or None
    hits: list[bool] = []
    missing: list[tuple[str, ...]] = []
    for point in cs.points:
        if source.doc is not None:
            unit = ctx.doc_pos[source.doc]
            absent = tuple(
                shown
                for shown, slot in zip(point.keywords, point.slots, strict=True)
                if not any(docs.has(unit, ident) for ident in slot)
            )
        else:
            # no source named: the point must be complete in at least one document in scope
            holders: set[int] | None = None
            for slot in point.slots:
                units = set().union(*(docs.units_with(ident) for ident in slot))
                if allowed is not None:
                    units &= allowed
                holders = units if holders is None else holders & units
            absent = () if holders else point.keywords
        hits.append(not absent)
        missing.append(absent)
    return PointHits(tuple(hits), tuple(missing))


def judge_text(
    ctx: RunContext, cs: CompiledSample, text: str, normalized: str | None = None
) -> PointHits:
    """Per point: every keyword in the text as written (``--fuzzy``: or close to it) -- a
    step holding a text, and an answer's verbatim rule (``generation.judge_answer``).
    ``normalized``: the text already normalised by the caller."""
    if normalized is None:
        normalized = ctx.normalize(text)
    keywords = ctx.index.keywords
    ratio, min_chars = ctx.config.fuzzy, ctx.config.fuzzy_min_chars

    def has(ident: int) -> bool:
        return keywords[ident] in normalized or fuzzy_in(
            keywords[ident], normalized, ratio, min_chars
        )

    hits: list[bool] = []
    missing: list[tuple[str, ...]] = []
    for point in cs.points:
        absent = tuple(
            shown
            for shown, slot in zip(point.keywords, point.slots, strict=True)
            if not any(has(ident) for ident in slot)
        )
        hits.append(not absent)
        missing.append(absent)
    return PointHits(tuple(hits), tuple(missing))
