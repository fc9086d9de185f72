"""``--mode cofe-rag`` gives the reference evaluator's per-query values exactly, bad labels included.

The sample set is in the CoFE-RAG release format, built from the shipped CMRC
and SQuAD passages (each paragraph a chunk), with the labels that used to
differ: one-letter and stopword keywords, keywords of punctuation only, an
empty point, an empty coarse list, "一一" in text and keyword, and keywords
split across two retrieved chunks.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cofe import EvalSet, MatchMode, SampleRecord, ScoreConfig, score_run
from cofe.importers import import_cofe_rag
from tests.conftest import REPO, memory_run, ranked
from tests.parity._reference import reference_scores

TOP_K, POOL = 4, 12
ODD_LABELS = ["E", "Y", "$W", "Other", "the", "…", "一", "的", "s", "A."]


def _passages(limit: int) -> list[tuple[str, str]]:
    """(title, paragraph) pairs from the shipped sets, CMRC first."""
    out = []
    for name in ("cmrc2018/cmrc2018-trial.json", "squad/squad-v1.1-dev-part-b.json"):
        data = json.loads((REPO / "cofe/_data" / name).read_text(encoding="utf-8"))
        for article in data["data"]:
            for paragraph in article["paragraphs"][:3]:
                out.append((article["title"].replace("_", " "), paragraph["context"]))
                if len(out) >= limit:
                    break
            if len(out) >= limit:
                break
    return out


def build_cases(n: int = 240, seed: int = 7):
    """A CoFE-format example list, the chunk texts, and each query's ranked result ids."""
    rng = random.Random(seed)
    passages = _passages(120)
    chunks: dict[str, str] = {}
    for i, (_title, text) in enumerate(passages):
        half = len(text) // 2  # two chunks per paragraph: keywords can straddle the cut
        chunks[f"p{i}a"], chunks[f"p{i}b"] = text[:half], text[half:]
    chunks["dup"] = "一一对应的映射，也称双射。"
    ids = list(chunks)
    examples, results = [], []
    for q in range(n):
        p = rng.randrange(len(passages))
        title, text = passages[p]
        words = text.split() if " " in text else list(text)
        start = rng.randrange(max(len(words) - 3, 1))
        joiner = " " if " " in text else ""
        fine = [[joiner.join(words[start : start + rng.randint(1, 3)])]]
        if rng.random() < 0.4:
            fine.append([rng.choice(ODD_LABELS)])
        if rng.random() < 0.2:
            fine[0].append(rng.choice(ODD_LABELS))
        if rng.random() < 0.05:
            fine.append([])
        coarse = [title]
        roll = rng.random()
        if roll < 0.08:
            coarse = []
        elif roll < 0.2:
            coarse = [rng.choice(ODD_LABELS)]
        elif roll < 0.25:
            coarse, fine = ["一一"], [["一一对应"]]
        if rng.random() < 0.03:
            fine = []
        pool = rng.sample(ids, POOL)
        if rng.random() < 0.7:
            for part in (f"p{p}a", f"p{p}b"):
                if part not in pool:
                    pool[rng.randrange(POOL)] = part
        if coarse == ["一一"]:
            pool[0] = "dup"
        examples.append(
            {
                "id": f"q{q}",
                "query_type": "事实类",
                "query": f"question {q}?",
                "reference_answer": "-",
                "coarse_keywords": coarse,
                "fine_keywords": fine,
            }
        )
        results.append(pool)
    return examples, chunks, results


def score_cofe(examples, chunks, results, tmp_path):
    path = tmp_path / "cofe-format.json"
    path.write_text(json.dumps({"examples": examples}, ensure_ascii=False), encoding="utf-8")
    imported = import_cofe_rag(path)
    assert not imported.problems, imported.problems[:3]
    records = [
        SampleRecord(sample_id=e["id"], pool=ranked(*pool))
        for e, pool in zip(examples, results, strict=True)
    ]
    run = memory_run(chunks, records)
    config = ScoreConfig(mode=MatchMode.COFE_RAG, top_k=TOP_K, candidates=POOL)
    return score_run(run, EvalSet(imported.samples), config)


def test_every_query_gets_the_reference_values(tmp_path):
    examples, chunks, results = build_cases()
    result = score_cofe(examples, chunks, results, tmp_path)
    scores = result.scores[result.scores.step == "pool"].pivot(
        index="sample_id", columns="measure", values="value"
    )
    verdicts = result.verdicts.set_index("sample_id")
    compared = skipped = 0
    for example, pool in zip(examples, results, strict=True):
        texts = [chunks[c] for c in pool]
        ref = reference_scores(texts, example["fine_keywords"], example["coarse_keywords"], TOP_K)
        sid = example["id"]
        if ref.skipped:
            skipped += 1
            assert verdicts.loc[sid, "verdict"] == "unscorable", sid
            continue
        compared += 1
        got = scores.loc[sid]
        assert got[f"KeywordRecall@{TOP_K}"] == pytest.approx(ref.hit_score), (sid, example)
        assert got[f"KeywordAccuracy@{TOP_K}"] == float(ref.top_hit), (sid, example)
        assert got[f"KeywordAccuracy@{POOL}"] == float(ref.recall_hit), (sid, example)
    # the cases exercise what they are meant to
    assert compared > 150 and skipped > 10
    odd = [p for p in result.problems if "as the reference evaluator does" in p.message]
    assert len(odd) > 30


WORDS = ["ab", "abc", "b", "cab", "de", "ed", "Ab", "x-y", "xy", "42", "4,2", "e", "the", "…"]
text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
keyword = st.lists(st.sampled_from(WORDS), min_size=1, max_size=2).map(" ".join)


@settings(max_examples=80, deadline=None)
@given(
    texts=st.lists(text, min_size=1, max_size=6),
    fine=st.lists(st.lists(keyword, min_size=0, max_size=3), min_size=1, max_size=3),
    coarse=st.lists(keyword, min_size=1, max_size=2),
)
def test_random_cases_agree_including_bad_labels(tmp_path_factory, texts, fine, coarse):
    chunks = {f"c{i}": t for i, t in enumerate(texts)}
    example = {"id": "q", "query": "q?", "coarse_keywords": coarse, "fine_keywords": fine}
    tmp = tmp_path_factory.mktemp("case")
    result = score_cofe([example], chunks, [list(chunks)], tmp)
    ref = reference_scores(texts, fine, coarse, TOP_K)
    row = result.scores[(result.scores.step == "pool")].set_index("measure").value
    assert row[f"KeywordRecall@{TOP_K}"] == pytest.approx(ref.hit_score)
    assert row[f"KeywordAccuracy@{TOP_K}"] == float(ref.top_hit)
