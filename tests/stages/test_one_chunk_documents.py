"""A document that is one chunk is scanned once, as that chunk: its look-ups are the same."""

from __future__ import annotations

from cofe import EvalSample, ScoreConfig
from cofe.matching import MatchMode, UnitIndex
from cofe.stages import RunContext
from tests.conftest import memory_run

DOCS = {
    "whole": "The Eiffel Tower is in Paris. It opened in 1889.",  # one chunk, the same text
    "cut": "Mount Fuji is in Japan. Its height is 3,776 metres.",  # two chunks
    "trimmed": "  The Louvre is in Paris.  ",  # one chunk, but not the same text
}
CHUNKS = {
    "w1": ("whole", DOCS["whole"]),
    "c1": ("cut", "Mount Fuji is in Japan."),
    "c2": ("cut", "Its height is 3,776 metres."),
    "t1": ("trimmed", "The Louvre is in Paris."),
}


def _sample(ident: str, coarse: str, *points: list[str]) -> EvalSample:
    return EvalSample(
        id=ident,
        query=f"What about {coarse}?",
        coarse_keywords=[coarse],
        fine_keywords=[list(point) for point in points],
    )


BATCH_ONE = [
    _sample("a", "Eiffel Tower", ["Paris"], ["1889"]),
    _sample("b", "Mount Fuji", ["Japan", "3,776 metres"], ["in Japan. Its height"]),
]
BATCH_TWO = [_sample("c", "Louvre", ["Paris"], ["opened in 1889"], ["Fuji"])]


def _scanned_alone(ctx: RunContext) -> UnitIndex:
    """The documents indexed on their own, for every keyword of the batch."""
    return UnitIndex(
        list(DOCS.values()),
        ctx.index,
        ctx.normalize,
        indexed=range(len(ctx.index.keywords)),
    )


def _same_look_ups(ctx: RunContext) -> None:
    alone = _scanned_alone(ctx)
    assert len(ctx.docs) == len(alone)
    for unit in range(len(alone)):
        assert ctx.docs.text(unit) == alone.text(unit)
    for ident in range(len(ctx.index.keywords)):
        assert ctx.docs.postings(ident) == alone.postings(ident), ctx.index.keywords[ident]


def test_one_chunk_documents_are_looked_up_as_if_scanned_themselves() -> None:
    for mode in MatchMode:
        run = memory_run(CHUNKS, [], DOCS)
        ctx = RunContext(run, BATCH_ONE, ScoreConfig(mode=mode))
        # only the document whose one chunk is its whole text is taken from the chunk scan
        assert list(ctx._one_chunk) == [0]
        assert ctx.docs.postings(ctx.index.find(ctx.normalize("Paris"))) == [0, 2]
        _same_look_ups(ctx)
        ctx.bind(BATCH_TWO)  # the next batch's keywords, in the same corpus
        _same_look_ups(ctx)
        assert 0 in ctx.docs.postings(ctx.index.find(ctx.normalize("opened in 1889")))
