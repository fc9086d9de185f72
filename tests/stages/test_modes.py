"""cofe-rag mode reproduces the reference evaluator; strict mode fixes its known traps."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cofe import EvalSample, EvalSet, MatchMode, SampleRecord, ScoreConfig, score_run
from tests.conftest import memory_run, ranked, recall_at


def reference_hit_score(chunks: list[str], fine: list[list[str]], coarse: list[str]) -> float:
    """The reference semantics, written out literally: strip non-word characters,
    lower-case, keep chunks holding any coarse keyword, concatenate them with no
    separator, and count the points whose keywords all occur in that string."""

    def clean(text: str) -> str:
        return re.sub(r"\W", "", text).lower()

    kept = "".join(clean(c) for c in chunks if any(clean(k) in clean(c) for k in coarse))
    return sum(all(clean(k) in kept for k in point) for point in fine) / len(fine)


def score_one(texts: list[str], fine, coarse, mode: MatchMode, k: int | None = None):
    chunks = {f"c{i}": t for i, t in enumerate(texts)}
    sample = EvalSample(id="q", query="q?", coarse_keywords=coarse, fine_keywords=fine)
    record = SampleRecord(sample_id="q", pool=ranked(*chunks))
    run = memory_run(chunks, [record])
    k = k or max(len(texts), 1)
    result = score_run(run, EvalSet([sample]), ScoreConfig(mode=mode, top_k=k, candidates=k))
    return recall_at(result, "pool", f"KeywordRecall@{k}")


CASES = [
    # (chunks, fine keywords, coarse keywords, reference score, strict score, what strict fixes)
    (
        ["Super Bowl 50: the Denver Bro", "ncos won Super Bowl 50"],
        [["Denver Broncos"]],
        ["Super Bowl 50"],
        1.0,
        0.0,
        "no match across two chunks",
    ),
    (["Super Bowl 50 thecat"], [["the cat"]], ["Super Bowl 50"], 1.0, 0.0, "no gluing of words"),
    (
        ["Super Bowl 50 concatenate"],
        [["cat"]],
        ["Super Bowl 50"],
        1.0,
        0.0,
        "no match inside a word",
    ),
    (
        ["ＳＵＰＥＲ ＢＯＷＬ ５０ drew 71,088 fans"],
        [["71088"]],
        ["Super Bowl 50"],
        0.0,
        1.0,
        "NFKC before matching",
    ),
    (
        ["Super Bowl 50 drew 71,088 fans"],
        [["71088 fans"]],
        ["Super Bowl 50"],
        1.0,
        1.0,
        "numbers normalised in both",
    ),
    (["北京大学成立于1898年"], [["1898年"]], ["北京大学"], 1.0, 1.0, "CJK inside longer words"),
    (
        ["Denver Broncos won", "Super Bowl 50 was played"],
        [["Denver Broncos"]],
        ["Super Bowl 50"],
        0.0,
        1.0,
        "coarse keywords anchor the document, not the chunk",
    ),
    (
        ["Super Bowl 50: Broncos 24", "Super Bowl 50: Panthers 10"],
        [["Broncos"], ["Panthers"], ["Rams"]],
        ["Super Bowl 50"],
        2 / 3,
        2 / 3,
        "union of chunks",
    ),
]


@pytest.mark.parametrize(
    "chunks, fine, coarse, reference, strict, _why", CASES, ids=[c[-1] for c in CASES]
)
def test_hand_built_cases(chunks, fine, coarse, reference, strict, _why):
    assert reference_hit_score(chunks, fine, coarse) == pytest.approx(reference)
    assert score_one(chunks, fine, coarse, MatchMode.COFE_RAG) == pytest.approx(reference)
    assert score_one(chunks, fine, coarse, MatchMode.STRICT) == pytest.approx(strict)


WORDS = ["ab", "abc", "b", "cab", "de", "ed", "Ab", "x-y", "xy", "42", "4,2"]
text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
keyword = st.lists(st.sampled_from(WORDS), min_size=1, max_size=2).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(
    chunks=st.lists(text, min_size=1, max_size=6),
    fine=st.lists(st.lists(keyword, min_size=1, max_size=3), min_size=1, max_size=3),
    coarse=st.lists(keyword, min_size=1, max_size=2),
)
def test_cofe_rag_mode_equals_the_reference(chunks, fine, coarse):
    """On random cases where every keyword is a usable label, the two agree exactly."""
    from cofe.matching import label_problem, normalize_cofe_rag

    usable = all(
        label_problem(normalize_cofe_rag(k), MatchMode.COFE_RAG) is None
        for k in [*coarse, *(k for p in fine for k in p)]
    )
    assume(usable)
    assert score_one(chunks, fine, coarse, MatchMode.COFE_RAG) == pytest.approx(
        reference_hit_score(chunks, fine, coarse)
    )
