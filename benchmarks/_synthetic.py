"""Synthetic runs of any size for throughput benchmarks (deterministic for a seed).

Each sample has one entity (its coarse keyword), 1-4 information points of
1-2 keywords copied from its gold chunks (two-word content phrases, as real
labels are: not pairs of the most frequent words), a pool of ``candidates`` chunks in
which the gold chunks sit at random ranks (or are missing), a reranked
context of 4, an answer that copies some keywords, and a reference answer.
As in real eval sets, some labels are not where they should be: 10 % of the
points carry a keyword found nowhere in the corpus (a paraphrase, a typo) and
5 % one taken from another entity's document -- the cases a scorer must
explain ("in no chunk", "only outside the sample's scope") without rescanning
the corpus for each.
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from pathlib import Path

from cofe import (
    Chunk,
    EvalSample,
    EvalSet,
    Manifest,
    ParsedDocument,
    RankedChunk,
    RunLog,
    SampleRecord,
    SourceRef,
)


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    words = set()
    while len(words) < size:
        words.add("".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))))
    return sorted(words)


def make_run(
    n_samples: int,
    candidates: int = 30,
    seed: int = 0,
    words_per_chunk: int = 80,
    n_docs: int | None = None,
) -> tuple[RunLog, EvalSet]:
    """The whole run in memory (for runs that fit; ``iter_run`` streams larger ones)."""
    documents, chunks, pairs = iter_run(n_samples, candidates, seed, words_per_chunk, n_docs)
    samples, records = [], []
    for sample, record in pairs:
        samples.append(sample)
        records.append(record)
    run = RunLog(
        Path("synthetic"),
        Manifest(run_id=f"synthetic-{n_samples}"),
        documents,
        chunks,
        {r.sample_id: r for r in records},
    )
    return run, EvalSet(samples)


def iter_run(
    n_samples: int,
    candidates: int = 30,
    seed: int = 0,
    words_per_chunk: int = 80,
    n_docs: int | None = None,
) -> tuple[dict[str, ParsedDocument], dict[str, Chunk], Iterator[tuple[EvalSample, SampleRecord]]]:
    """The corpus, and the samples with their records made one at a time. ``n_docs``
    (default: a tenth of the samples) fixes the corpus, so runs of different sizes share it."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng, 30_000)
    weights = [1.0 / (r + 1) for r in range(len(vocab))]  # Zipf-like word frequencies
    rank = {word: r for r, word in enumerate(vocab)}
    n_docs = n_docs or max(n_samples // 10, 10)
    chunks_per_doc = 5
    n_chunks = n_docs * chunks_per_doc
    # one shared pool of random words, sliced per chunk: far faster than sampling per chunk
    bag = rng.choices(vocab, weights=weights, k=n_chunks * words_per_chunk // 2 + words_per_chunk)
    chunks: dict[str, Chunk] = {}
    documents: dict[str, ParsedDocument] = {}
    chunk_ids: list[str] = []
    for d in range(n_docs):
        entity = f"Entity{d}"
        texts = []
        for c in range(chunks_per_doc):
            start = rng.randrange(0, len(bag) - words_per_chunk)
            words = bag[start : start + words_per_chunk]
            if c % 2 == 0:
                words = [entity, *words]
            text = " ".join(words) + "."
            chunk_id = f"d{d}#{c}"
            chunks[chunk_id] = Chunk(chunk_id=chunk_id, doc_id=f"d{d}", text=text)
            chunk_ids.append(chunk_id)
            texts.append(text)
        documents[f"d{d}"] = ParsedDocument(
            doc_id=f"d{d}", source=f"d{d}.txt", text="\n".join(texts)
        )

    def pairs() -> Iterator[tuple[EvalSample, SampleRecord]]:
        for i in range(n_samples):
            d = rng.randrange(n_docs)
            gold = [f"d{d}#{c}" for c in rng.sample(range(0, chunks_per_doc, 2), 2)]
            points = []
            for g in gold[: rng.randint(1, 2)]:
                words = chunks[g].text.rstrip(".").split()[1:]
                # labels are content phrases (names, terms, numbers), not pairs of function
                # words: a phrase starts and ends on a word outside the 500 most frequent
                starts = [
                    i
                    for i in range(len(words) - 1)
                    if rank[words[i]] > 500 and rank[words[i + 1]] > 500
                ]
                for _ in range(rng.randint(1, 2)):
                    at = rng.choice(starts) if starts else rng.randrange(len(words) - 1)
                    point = [" ".join(words[at : at + 2])]
                    rare = [w for w in words if rank[w] > 2_000]
                    if rare and rng.random() < 0.3:
                        point.append(rng.choice(rare))
                    roll = rng.random()
                    if roll < 0.10:  # a label found nowhere
                        point.append("".join(rng.choices(string.ascii_lowercase, k=12)))
                    elif roll < 0.15:  # a label from another entity's document
                        other = rng.choice(chunk_ids).split("#")[0]
                        other_words = chunks[f"{other}#1"].text.rstrip(".").split()
                        at = rng.randrange(len(other_words) - 1)
                        point.append(" ".join(other_words[at : at + 2]))
                    points.append(point)
            sample = EvalSample(
                id=f"s{i}",
                query=f"What about Entity{d}?",
                query_type=rng.choice(["factual", "analytical", "comparative", "tutorial"]),
                coarse_keywords=[f"Entity{d}"],
                fine_keywords=points,
                reference_answer=" ".join(p[0] for p in points),
                source=SourceRef(doc=f"d{d}.txt"),
            )
            pool_ids = rng.sample(chunk_ids, candidates)
            for g in gold:
                if rng.random() < 0.8 and g not in pool_ids:
                    pool_ids[rng.randrange(candidates)] = g
            context = sorted(pool_ids[:12], key=lambda c: (c not in gold, rng.random()))[:4]
            answer = " ".join(p[0] for p in points if rng.random() < 0.7) or "I do not know."
            yield (
                sample,
                (
                    SampleRecord(
                        sample_id=sample.id,
                        pool=[
                            RankedChunk(chunk_id=c, score=float(candidates - r))
                            for r, c in enumerate(pool_ids)
                        ],
                        context=[
                            RankedChunk(chunk_id=c, score=float(4 - r))
                            for r, c in enumerate(context)
                        ],
                        answer=answer,
                    )
                ),
            )

    return documents, chunks, pairs()
