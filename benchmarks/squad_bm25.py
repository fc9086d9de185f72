"""Scoring the whole shipped SQuAD set with a real BM25 candidate pool.

    python benchmarks/squad_bm25.py

Imports all 5,609 questions, chunks the 24 articles into 120-word windows,
retrieves a BM25 pool of 30 (bm25s) and answers extractively from the top 4
(no reranker), then scores the run in both matching modes. Prints the time of
each step, scorer throughput, KeywordRecall@4, the verdict counts, and how
often a question's coarse keyword sits in the chunk holding its answer.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cofe import EvalSet, Manifest, MatchMode, RunLog, ScoreConfig, score_run  # noqa: E402
from cofe.evalset.importers import import_squad  # noqa: E402
from cofe.matching import normalize_strict  # noqa: E402
from examples.build_squad_bm25 import DATA, answer_all, chunk_documents  # noqa: E402


def main() -> None:
    started = time.perf_counter()
    imported = import_squad(DATA / "squad" / "squad-v1.1-dev-part-b.json")
    samples = imported.samples
    chunks = chunk_documents(imported.documents)
    prepared = time.perf_counter()
    records = answer_all(samples, chunks, rerank=False)
    answered = time.perf_counter()
    print(
        f"import + chunk: {prepared - started:.1f} s; BM25 index + retrieve + answer {len(samples)} questions: {answered - prepared:.1f} s"
    )
    print(f"{len(samples)} samples, {len(imported.documents)} documents, {len(chunks)} chunks")

    from cofe import ParsedDocument

    run = RunLog(
        Path("memory"),
        Manifest(run_id="squad-bm25-benchmark", top_k=4),
        {
            Path(n).stem: ParsedDocument(doc_id=Path(n).stem, source=n, text=t)
            for n, t in imported.documents.items()
        },
        {c.chunk_id: c for c in chunks},
        {r.sample_id: r for r in records},
    )
    print(
        "| mode | coarse scope | score | samples/s | KeywordRecall@30 | KeywordRecall@4 "
        "| answer KeywordRecall | verdicts |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for mode in (MatchMode.STRICT, MatchMode.COFE_RAG):
        for scope in ("document", "chunk", "off"):
            config = ScoreConfig(mode=mode, coarse_scope=scope)
            t = time.perf_counter()
            result = score_run(run, EvalSet(samples), config)
            took = time.perf_counter() - t
            summary = result.summary().set_index(["step", "measure"])["mean"]
            verdicts = ", ".join(f"{v} {n}" for v, n in Counter(result.verdicts.verdict).items())
            print(
                f"| {mode.value} | {scope} | {took:.2f} s | {len(samples) / took:,.0f} "
                f"| {summary[('pool', 'KeywordRecall@30')]:.3f} "
                f"| {summary[('context', 'KeywordRecall@4')]:.3f} "
                f"| {summary[('answer', 'KeywordRecall')]:.3f} | {verdicts} |"
            )

    # how often the coarse keyword sits in the chunk that holds the answer
    by_doc: dict[str, list] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    with_coarse = holds = 0
    for sample in samples:
        starts = sample.meta.get("answer_starts") or []
        if not sample.coarse_keywords or not starts:
            continue
        with_coarse += 1
        doc = Path(sample.source.doc).stem
        chunk = next((c for c in by_doc[doc] if c.start <= starts[0] < c.end), None)
        if chunk and normalize_strict(sample.coarse_keywords[0]) in normalize_strict(chunk.text):
            holds += 1
    print(
        f"coarse keyword in the answer's 120-word chunk: {holds}/{with_coarse} = {holds / with_coarse:.1%}"
    )


if __name__ == "__main__":
    main()
