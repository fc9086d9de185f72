"""The CoFE-RAG reference evaluator's search scores, re-implemented from its documented behaviour.

What the reference (Alibaba-NLP/CoFE-RAG, ``eval_search``) does for one query,
written out plainly so cofe's ``cofe-rag`` mode can be checked against it:

* text cleaning: every character that is neither a word character nor a CJK
  ideograph is removed, then "一一" becomes "一"; comparisons lower-case both
  sides. Keywords are cleaned the same way, so a keyword of punctuation only
  becomes "" and is found in every text.
* a sample is skipped when its fine or its coarse keyword list is empty (the
  skipped sample still counts in the reference's percentages);
* a retrieved chunk is kept when any coarse keyword occurs in it; the kept
  chunks' cleaned texts are concatenated with no separator, so a keyword may
  match across two chunks;
* a fine-keyword point (a list) is hit when all its keywords occur in that
  string; an empty point is always hit; ``hit_score`` = hit points / points,
  computed on the first ``top_k`` results;
* ``top_hit``: every keyword of every point occurs in the first ``top_k``;
  ``recall_hit``: the same over the whole result list.

No single letter, stopword or empty keyword is treated specially: each is a
plain substring test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NOT_WORD_OR_CJK = re.compile(r"[^\w\u4e00-\u9fa5]+")


def clean(text: str) -> str:
    return _NOT_WORD_OR_CJK.sub("", text).replace("一一", "一")


@dataclass(frozen=True)
class ReferenceScores:
    skipped: bool
    hit_score: float | None = None
    top_hit: bool | None = None
    recall_hit: bool | None = None


def _kept_text(results: list[str], coarse: list[str]) -> str:
    texts = [clean(r).lower() for r in results]
    return "".join(t for t in texts if any(k.lower() in t for k in coarse))


def _points_hit(text: str, fine: list[list[str]]) -> tuple[int, bool]:
    hits, complete = 0, True
    for point in fine:
        missing = [k for k in point if k.lower() not in text]
        hits += not missing
        complete &= not missing
    return hits, complete


def reference_scores(
    results: list[str], fine: list[list[str]], coarse: list[str], top_k: int
) -> ReferenceScores:
    """``results``: the retrieved chunks' texts in rank order."""
    fine = [[clean(k) for k in point] for point in fine]
    coarse = [clean(k) for k in coarse]
    if not fine or not coarse:
        return ReferenceScores(skipped=True)
    top_text = _kept_text(results[:top_k], coarse)
    hits, top_hit = _points_hit(top_text, fine)
    _, recall_hit = _points_hit(_kept_text(results, coarse), fine)
    return ReferenceScores(False, hits / len(fine), top_hit, recall_hit)
