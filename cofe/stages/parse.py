"""Parse stage: are the fine keywords in the parsed text of the source document?"""

from __future__ import annotations

from cofe.matching import CompiledSample
from cofe.measures import Unscored
from cofe.stages._context import RunContext
from cofe.stages._judgements import PointHits


def judge_parse(
    ctx: RunContext, cs: CompiledSample, source_doc: str | None
) -> PointHits | Unscored:
    docs = ctx.docs
    if len(docs) == 0:
        return Unscored("the run log has no parsed documents")
    if source_doc is not None and source_doc not in ctx.doc_pos:
        return Unscored(f"source document {source_doc!r} has no parsed text in the run log")
    hits: list[bool] = []
    missing: list[tuple[str, ...]] = []
    for point in cs.points:
        if source_doc is not None:
            unit = ctx.doc_pos[source_doc]
            absent = tuple(
                shown
                for shown, slot in zip(point.keywords, point.slots, strict=True)
                if not any(docs.has(unit, ident) for ident in slot)
            )
        else:
            # no source named: the point must be complete in at least one document
            holders: set[int] | None = None
            for slot in point.slots:
                units = set().union(*(docs.units_with(ident) for ident in slot))
                holders = units if holders is None else holders & units
            absent = () if holders else point.keywords
        hits.append(not absent)
        missing.append(absent)
    return PointHits(tuple(hits), tuple(missing))
