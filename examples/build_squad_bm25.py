"""Build the shipped example run ``examples/squad-bm25`` from the shipped SQuAD and CMRC data.

A small but real pipeline, written with cofe's run-log writer:

- parse: the articles as plain text (paragraphs joined by blank lines);
- chunking: windows of 120 words (or 200 CJK characters), no overlap, with offsets;
- retrieval: cofe's BM25 (bm25s over strict tokens, equal scores in corpus
  order), a pool of up to 30 candidates sharing a term with the query;
- reranking: query-term coverage (share of the query's content words in the
  chunk, BM25 score breaking ties) -- a deliberately simple reranker;
- generation: cofe's ``ExtractiveGenerator``, not an LLM: it answers with the
  context sentence sharing most content words with the query.

Run ``python examples/build_squad_bm25.py`` (needs ``pip install -e .[bm25]``).
The files are not promised to be byte-identical across machines or package
versions (BM25 scores are floats, and equal scores keep corpus order only up
to rounding); ``tests/examples/test_squad_bm25.py`` pins the verdict counts
of the shipped run, so a scorer change that moves them cannot pass unnoticed.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import bm25s

import cofe
from cofe import (
    Chunk,
    Manifest,
    ParsedDocument,
    RankedChunk,
    RunWriter,
    SampleRecord,
    write_evalset,
)
from cofe.evalset import file_sha256
from cofe.evalset.importers import import_squad
from cofe.matching import STOPWORDS, is_cjk, strict_tokens
from cofe.pipeline import BM25Retriever, ExtractiveGenerator

DATA = Path(cofe.__file__).parent / "_data"
OUT = Path(__file__).parent / "squad-bm25"
SQUAD_ARTICLES = ("Normans", "Pharmacy", "Fresno,_California")
SQUAD_QUESTIONS_PER_ARTICLE = 60
CMRC_ARTICLES = 20
WINDOW_WORDS, WINDOW_CJK = 120, 200
CANDIDATES, TOP_K = 30, 4
_WORD = re.compile(r"\S+")


def word_windows(text: str) -> list[tuple[int, int]]:
    """Character spans of consecutive windows of words (CJK characters count one each)."""
    spans, start, count = [], 0, 0
    for match in _WORD.finditer(text):
        word = match.group()
        cjk = sum(1 for ch in word if is_cjk(ch))
        count += cjk * WINDOW_WORDS / WINDOW_CJK if cjk else 1
        if count >= WINDOW_WORDS:
            spans.append((start, match.end()))
            start, count = match.end(), 0
    if start < len(text.rstrip()):
        spans.append((start, len(text)))
    # CJK text without spaces: cut long spans by characters
    out = []
    for s, e in spans:
        while e - s > WINDOW_CJK * 2:
            out.append((s, s + WINDOW_CJK))
            s += WINDOW_CJK
        out.append((s, e))
    return out


def content(tokens: list[str]) -> set[str]:
    return {t for t in tokens if t not in STOPWORDS}


def chunk_documents(documents: dict[str, str]) -> list[Chunk]:
    """Word-window chunks of every document, with offsets into its text."""
    chunks: list[Chunk] = []
    for name, text in documents.items():
        doc_id = Path(name).stem
        for i, (s, e) in enumerate(word_windows(text)):
            chunks.append(
                Chunk(chunk_id=f"{doc_id}#{i}", doc_id=doc_id, text=text[s:e], start=s, end=e)
            )
    return chunks


def answer_all(samples: list, chunks: list[Chunk], *, rerank: bool = True) -> list[SampleRecord]:
    """BM25 pool, optional query-term-coverage reranking, extractive answer: one record per sample."""
    chunk_tokens = [strict_tokens(c.text) for c in chunks]
    by_id = {c.chunk_id: c for c in chunks}
    retriever = BM25Retriever()  # cofe's: equal scores ranked in corpus order
    retriever.index(chunks, None)
    generator = ExtractiveGenerator()
    records = []
    for sample in samples:
        started = time.perf_counter()
        hits = retriever.search(sample.query, CANDIDATES)
        pool = [RankedChunk(chunk_id=chunks[i].chunk_id, score=round(s, 4)) for i, s in hits]
        retrieved = time.perf_counter()
        query = strict_tokens(sample.query)
        wanted = content(query) or set(query)
        context = None
        given = pool[:TOP_K]
        if rerank:
            coverage = [len(wanted & set(chunk_tokens[i])) / max(len(wanted), 1) for i, _ in hits]
            # coverage first, then the BM25 score, then the pool order (a stable sort)
            order = sorted(range(len(hits)), key=lambda j: (-coverage[j], -hits[j][1]))[:TOP_K]
            context = given = [
                RankedChunk(chunk_id=pool[j].chunk_id, score=round(coverage[j], 4)) for j in order
            ]
        reranked = time.perf_counter()
        answer = generator(sample.query, [by_id[c.chunk_id] for c in given])
        done = time.perf_counter()
        latency = {
            "retrieval": round(retrieved - started, 6),
            "generation": round(done - reranked, 6),
        }
        if rerank:
            latency["reranking"] = round(reranked - retrieved, 6)
        records.append(
            SampleRecord(
                sample_id=sample.id, pool=pool, context=context, answer=answer, latency=latency
            )
        )
    return records


def main() -> None:
    squad = import_squad(DATA / "squad" / "squad-v1.1-dev-part-b.json")
    cmrc = import_squad(DATA / "cmrc2018" / "cmrc2018-trial.json")
    keep_docs = {f"{a}.txt" for a in SQUAD_ARTICLES}
    samples = []
    for article in SQUAD_ARTICLES:
        samples += [s for s in squad.samples if s.source.doc == f"{article}.txt"][
            :SQUAD_QUESTIONS_PER_ARTICLE
        ]
    cmrc_docs = list(cmrc.documents)[:CMRC_ARTICLES]
    keep_docs |= set(cmrc_docs)
    samples += [s for s in cmrc.samples if s.source.doc in set(cmrc_docs)]
    documents = {
        name: squad.documents[name] for name in sorted(keep_docs) if name in squad.documents
    }
    documents.update({name: cmrc.documents[name] for name in cmrc_docs})

    if OUT.exists():
        shutil.rmtree(OUT)
    writer = RunWriter(OUT)
    evalset_file = OUT.parent / "squad-bm25.evalset.jsonl"
    write_evalset(evalset_file, samples)
    writer.start(
        Manifest(
            run_id="example-squad-bm25",
            pipeline={
                "parser": "plain text (SQuAD/CMRC paragraphs)",
                "chunker": f"word windows of {WINDOW_WORDS} words / {WINDOW_CJK} CJK characters, no overlap",
                "retriever": "cofe BM25Retriever (bm25s over strict tokens)",
                "candidates": CANDIDATES,
                "reranker": "query-term coverage (example)",
                "top_k": TOP_K,
                "generator": ExtractiveGenerator.name,
            },
            top_k=TOP_K,
            stages=["parse", "chunking", "retrieval", "reranking", "generation"],
            evalset_sha256=file_sha256(evalset_file),
            versions={"cofe": cofe.__version__, "bm25s": bm25s.__version__},
        ),
        evalset_file,
    )
    evalset_file.unlink()
    writer.add_documents(
        ParsedDocument(doc_id=Path(name).stem, source=name, text=text)
        for name, text in documents.items()
    )
    chunks = chunk_documents(documents)
    writer.add_chunks(chunks)
    records = answer_all(samples, chunks)
    writer.add_samples(records)
    print(f"wrote {OUT}: {len(documents)} documents, {len(chunks)} chunks, {len(records)} samples")


if __name__ == "__main__":
    main()
