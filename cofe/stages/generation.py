"""Generation stage: are the information points in the answer?"""

from __future__ import annotations

from cofe.matching import CompiledSample, fuzzy_in
from cofe.stages._context import RunContext
from cofe.stages._judgements import PointHits


def judge_answer(ctx: RunContext, cs: CompiledSample, answer: str) -> PointHits:
    normalized = ctx.normalize(answer)
    keywords = ctx.index.keywords
    ratio, min_chars = ctx.config.fuzzy, ctx.config.fuzzy_min_chars

    def has(ident: int) -> bool:
        return keywords[ident] in normalized or fuzzy_in(
            keywords[ident], normalized, ratio, min_chars
        )

    hits, missing = [], []
    for point in cs.points:
        absent = tuple(
            shown
            for shown, slot in zip(point.keywords, point.slots, strict=True)
            if not any(has(ident) for ident in slot)
        )
        hits.append(not absent)
        missing.append(absent)
    return PointHits(tuple(hits), tuple(missing))
