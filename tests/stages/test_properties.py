"""Properties of keyword recall over ranked lists (strict mode, union of chunks)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cofe import EvalSample, ScoreConfig
from cofe.matching import MatchMode
from cofe.measures import KeywordRecall
from cofe.runlog import RankedChunk
from cofe.stages import RunContext
from cofe.stages.ranking import judge_ranked
from tests.conftest import memory_run

VOCAB = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "北京",
    "大学",
    "1898",
]
CORPUS = {
    f"c{i}": " ".join(
        VOCAB[j] for j in range(len(VOCAB)) if (i >> (j % 7)) & 1 or j == i % len(VOCAB)
    )
    for i in range(40)
}


def _context(fine, coarse, mode=MatchMode.STRICT):
    sample = EvalSample(id="q", query="q?", coarse_keywords=coarse, fine_keywords=fine)
    ctx = RunContext(memory_run(CORPUS, []), [sample], ScoreConfig(mode=mode))
    cs = ctx.compiled["q"]
    return ctx, cs, ctx.scope(sample, cs, ctx.source(sample))


def _recall(ctx, cs, passes, chunk_ids, k):
    hits = judge_ranked(ctx, cs, [RankedChunk(chunk_id=c) for c in chunk_ids], passes)
    return KeywordRecall(k).compute(hits.point_ranks)


points = st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3), min_size=1, max_size=4)
coarse = st.lists(st.sampled_from(VOCAB), max_size=2)
lists = st.lists(st.sampled_from(sorted(CORPUS)), min_size=0, max_size=15, unique=True)


@settings(max_examples=150, deadline=None)
@given(fine=points, coarse=coarse, chunk_ids=lists, k=st.integers(1, 16))
def test_recall_is_between_0_and_1_and_monotone_in_k(fine, coarse, chunk_ids, k):
    ctx, cs, passes = _context(fine, coarse)
    at_k = _recall(ctx, cs, passes, chunk_ids, k)
    assert 0.0 <= at_k <= 1.0
    assert at_k <= _recall(ctx, cs, passes, chunk_ids, k + 1)


@settings(max_examples=150, deadline=None)
@given(fine=points, coarse=coarse, chunk_ids=lists, k=st.integers(1, 15), data=st.data())
def test_order_inside_the_top_k_does_not_matter(fine, coarse, chunk_ids, k, data):
    ctx, cs, passes = _context(fine, coarse)
    head, tail = chunk_ids[:k], chunk_ids[k:]
    shuffled = data.draw(st.permutations(head))
    assert _recall(ctx, cs, passes, [*shuffled, *tail], k) == _recall(ctx, cs, passes, chunk_ids, k)


@settings(max_examples=150, deadline=None)
@given(
    fine=points,
    coarse=coarse,
    chunk_ids=lists,
    extra=st.sampled_from(sorted(CORPUS)),
    data=st.data(),
)
def test_adding_a_chunk_never_lowers_union_recall(fine, coarse, chunk_ids, extra, data):
    ctx, cs, passes = _context(fine, coarse)
    before = [c for c in chunk_ids if c != extra]
    position = data.draw(st.integers(0, len(before)))
    after = [*before[:position], extra, *before[position:]]
    assert _recall(ctx, cs, passes, after, len(after)) >= _recall(
        ctx, cs, passes, before, max(len(before), 1)
    )
