"""Evidence for verdicts: why a point is missing at a step, in words a person can check."""

from __future__ import annotations

from collections.abc import Callable

from cofe.stages._judgements import CorpusHits, RankedHits


def quote(keywords: tuple[str, ...]) -> str:
    return ", ".join(repr(k) for k in keywords)


def ranked_why(
    hits: RankedHits,
    cutoff: int,
    name: str,
    pool: RankedHits | None = None,
    corpus: CorpusHits | None = None,
) -> Callable[[int], str]:
    def why(p: int) -> str:
        rank, missing = hits.point_ranks[p], hits.missing[p]
        if missing:
            reason = f"{quote(missing)} not in the {name} ({len(hits.doc_ids)} chunk(s))"
            derived = hits.derivation[p] if hits.derivation else None
            if pool is not None and pool.point_ranks[p] is not None:
                derived = None  # the reranker's input held it: a cut, not a derivation loss
            if derived is not None:
                reason += (
                    f"; {derived[0]!r} was built from chunk {derived[1]!r}, which holds "
                    "the point, but its own text dropped it"
                )
            elif corpus is not None and corpus.example_chunk[p] is not None:
                reason += f"; chunk {corpus.example_chunk[p]!r} holds the whole point"
        else:
            reason = f"complete only at {name} rank {rank}, below the cutoff {cutoff}"
        if pool is not None and pool.point_ranks[p] is not None:
            reason = f"complete at pool rank {pool.point_ranks[p]}, but {reason}"
        return reason

    return why


def corpus_why(corpus: CorpusHits) -> Callable[[int], str]:
    def why(p: int) -> str:
        pairs = zip(corpus.missing[p], corpus.why_missing[p], strict=True)
        return "; ".join(f"{quote((m,))} {reason}" for m, reason in pairs)

    return why
