"""Chunk-size sweep x retriever on the shipped SQuAD data, through the default pipeline.

    python benchmarks/chunk_sweep.py [--questions 1000] [--sizes 128,256,512,1024]
                                     [--retrievers bm25,dense,hybrid]

Writes the 24 shipped SQuAD articles as text files, takes an even spread of
questions (``--questions 0``: all 5,609), and for every chunk size and
retriever runs the default pipeline (sentence splitter, overlap 20, pool 30,
no reranker, extractive generator) with ``cofe.runner.run_pipeline``, then
scores it (default settings, and again with ``--coarse-scope off``). Prints
one Markdown table on stdout (progress goes to stderr): chunks,
ChunkIntegrity, EntityAnchoring (the chunking risk), KeywordRecall at the
pool and @4, verdict counts and the wall time of each step. Parsing and embeddings are cached between runs, as in
``cofe run``; the first size pays the parse.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cofe import ScoreConfig, score_run, write_evalset  # noqa: E402
from cofe._cache import Cache  # noqa: E402
from cofe.evalset.importers import import_squad  # noqa: E402
from cofe.pipeline import DefaultPipeline, PipelineConfig, parse_documents  # noqa: E402
from cofe.runner import run_pipeline  # noqa: E402
from examples.build_squad_bm25 import DATA  # noqa: E402

WORK = ROOT / "benchmarks" / "_work" / "sweep"
VERDICTS = ("pass", "chunk_split", "chunk_dropped", "not_retrieved", "not_in_answer", "unscorable")


def markdown(header: list[str], rows: list[list[object]]) -> str:
    def cell(value: object) -> str:
        return f"{value:.3f}" if isinstance(value, float) else str(value)

    lines = [header, ["---"] * len(header), *([cell(v) for v in row] for row in rows)]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--sizes", default="128,256,512,1024")
    parser.add_argument("--retrievers", default="bm25,dense,hybrid")
    args = parser.parse_args()

    imported = import_squad(DATA / "squad" / "squad-v1.1-dev-part-b.json")
    docs = WORK / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for name, text in imported.documents.items():
        (docs / name).write_text(text, encoding="utf-8")
    samples = imported.samples
    if args.questions and args.questions < len(samples):
        step = len(samples) / args.questions
        samples = [samples[int(i * step)] for i in range(args.questions)]
    evalset = WORK / "evalset.jsonl"
    write_evalset(evalset, samples)
    cache = Cache(WORK / "cache")

    t = time.perf_counter()
    parsed = parse_documents(docs, cache=cache)
    print(
        f"parse {len(parsed.documents)} documents: {time.perf_counter() - t:.1f} s "
        f"(cached after the first time); {len(samples)} questions",
        file=sys.stderr,
    )

    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        for retriever in args.retrievers.split(","):
            config = PipelineConfig(chunk_size=size, chunk_overlap=20, retriever=retriever)
            out = WORK / f"{size}-{retriever}"
            t0 = time.perf_counter()
            report = run_pipeline(
                DefaultPipeline(config),
                evalset,
                out,
                documents=parsed.documents,
                cache=cache,
                fresh=True,
                progress=False,
                concurrency=2,
            )
            t1 = time.perf_counter()
            result = score_run(out, config=ScoreConfig())
            t2 = time.perf_counter()
            loose = score_run(out, config=ScoreConfig(coarse_scope="off"))
            counts = Counter(result.verdicts["verdict"])
            rows.append(
                [
                    size,
                    retriever,
                    report.chunks,
                    result.mean("corpus", "ChunkIntegrity"),
                    result.mean("corpus", "EntityAnchoring"),
                    result.mean("pool", "KeywordRecall@30"),
                    result.mean("context", "KeywordRecall@4"),
                    loose.mean("context", "KeywordRecall@4"),
                    *(counts.get(v, 0) for v in VERDICTS),
                    f"{report.seconds['prepare']:.1f}",
                    f"{report.seconds['answer']:.1f}",
                    f"{t2 - t1:.1f}",
                    f"{t1 - t0:.1f}",
                ]
            )
            print(f"  done {size} {retriever} in {t2 - t0:.1f} s", file=sys.stderr, flush=True)
    header = [
        "size",
        "retriever",
        "chunks",
        "ChunkIntegrity",
        "EntityAnchoring",
        "KR@30",
        "KR@4",
        "KR@4 scope off",
        *VERDICTS,
        "index s",
        "answer s",
        "score s",
        "run s",
    ]
    print(markdown(header, rows))


if __name__ == "__main__":
    main()
