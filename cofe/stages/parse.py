"""Parse stage: are the fine keywords in the parsed text of the documents in scope?"""

from __future__ import annotations

from cofe.matching import CompiledSample
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
