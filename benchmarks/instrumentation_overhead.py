"""What recording costs: the same queries with and without cofe's adapters around them.

    python benchmarks/instrumentation_overhead.py [--queries 300] [--llm-latency 0.05]

Two pipelines, each timed bare (the user's own loop) and through
``run_pipeline`` (adapter + trace + run-log writes), serially (concurrency 1),
alternating three times and keeping the fastest of each:

1. LlamaIndex: VectorStoreIndex (256-token nodes) with all-MiniLM-L6-v2, top-6, a node
   postprocessor, and an OpenAILike LLM on a loopback OpenAI-protocol server
   that answers after ``--llm-latency`` seconds (a stand-in for a real model;
   the cost measured is cofe's, not the model's);
2. the built-in default pipeline (BM25 + extractive generator, ~1 ms a
   query): the worst case for relative overhead, as nothing slow hides it.

Overhead = (through cofe - bare) / bare. The goal is < 2 % of pipeline time.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cofe import write_evalset  # noqa: E402
from cofe.evalset.importers import import_squad  # noqa: E402
from cofe.pipeline import DefaultPipeline, PipelineConfig, documents_from_texts  # noqa: E402
from cofe.runner import run_pipeline  # noqa: E402
from cofe.testing import ScriptedOpenAI  # noqa: E402
from examples.build_squad_bm25 import DATA  # noqa: E402

WORK = ROOT / "benchmarks" / "_work" / "overhead"
ROUNDS = 3


def timed_run(pipeline, evalset: Path) -> float:
    out = WORK / "run"
    shutil.rmtree(out, ignore_errors=True)
    report = run_pipeline(pipeline, evalset, out, concurrency=1, progress=False,
                          documents=getattr(pipeline, "documents", None) or [])  # fmt: skip
    return report.seconds["answer"]


def compare(name: str, bare, through) -> None:
    bare_times, cofe_times = [], []
    for _ in range(ROUNDS):
        bare_times.append(bare())
        cofe_times.append(through())
    b, c = min(bare_times), min(cofe_times)
    print(f"{name}: bare {b:.3f} s, through cofe {c:.3f} s, overhead {100 * (c - b) / b:+.2f} %"
          f"  (all rounds bare {[round(x, 3) for x in bare_times]}, cofe {[round(x, 3) for x in cofe_times]})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--llm-latency", type=float, default=0.05)
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    imported = import_squad(DATA / "squad" / "squad-v1.1-dev-part-b.json")
    articles = sorted(imported.documents)[:6]
    samples = [s for s in imported.samples if s.source.doc in articles][: args.queries]
    evalset = WORK / "evalset.jsonl"
    write_evalset(evalset, samples)
    queries = [s.query for s in samples]
    texts = [(name, imported.documents[name]) for name in articles]
    print(f"{len(queries)} queries over {len(texts)} SQuAD articles")

    # 1. LlamaIndex with a (scripted) LLM behind HTTP
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.postprocessor import SimilarityPostprocessor
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    from llama_index.llms.openai_like import OpenAILike

    from cofe.adapters import LlamaIndexPipeline
    from cofe.pipeline._embed import minilm_path

    embed = HuggingFaceEmbedding(model_name=minilm_path(), device="cpu")
    docs = [Document(text=t, id_=n, metadata={"file_name": n}) for n, t in texts]
    from llama_index.core.node_parser import SentenceSplitter

    # 256-token nodes, top 6: one LLM call per query (no refine rounds)
    index = VectorStoreIndex.from_documents(docs, embed_model=embed,
                                            transformations=[SentenceSplitter(chunk_size=256)])  # fmt: skip
    with ScriptedOpenAI(lambda m, r: "an answer", latency=args.llm_latency) as server:
        llm = OpenAILike(model="scripted", api_base=server.base_url, api_key="none",
                         is_chat_model=True, max_retries=0)  # fmt: skip
        engine = index.as_query_engine(similarity_top_k=6, llm=llm,
            node_postprocessors=[SimilarityPostprocessor(similarity_cutoff=0.0)])  # fmt: skip

        def bare_llama() -> float:
            t = time.perf_counter()
            for q in queries:
                engine.query(q)
            return time.perf_counter() - t

        bare_llama()  # warm-up, before cofe's handler exists
        pipeline = LlamaIndexPipeline(engine, index=index, documents=docs)
        pipeline.prepare(pipeline.documents, None)
        compare("LlamaIndex + LLM", bare_llama, lambda: timed_run(pipeline, evalset))
        # paired, per query: the same query bare and through the adapter, back to back
        bare_sum = adapter_sum = 0.0
        for q in queries:
            t0 = time.perf_counter()
            engine.query(q)
            t1 = time.perf_counter()
            pipeline.answer(q)
            t2 = time.perf_counter()
            bare_sum += t1 - t0
            adapter_sum += t2 - t1
        print(
            f"  paired per query: bare {1000 * bare_sum / len(queries):.2f} ms, adapter "
            f"{1000 * adapter_sum / len(queries):.2f} ms "
            f"({100 * (adapter_sum - bare_sum) / bare_sum:+.2f} %, adapter only, no run-log writes)"
        )

    # 2. the default pipeline, fast and offline
    default = DefaultPipeline(PipelineConfig(chunk_size=256))
    default.documents = documents_from_texts(texts)
    default.prepare(default.documents, None)

    def bare_default() -> float:
        t = time.perf_counter()
        for q in queries:
            pool = default.retrieve(q)
            default.generate(q, [c for c, _ in pool[: default.top_k]])
        return time.perf_counter() - t

    compare("default BM25 + extractive", bare_default, lambda: timed_run(default, evalset))


if __name__ == "__main__":
    main()
