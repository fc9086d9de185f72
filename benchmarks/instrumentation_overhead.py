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
   query): the worst case for relative overhead, as nothing slow hides it;
3. three LlamaIndex patterns (issue 11), paired per query (bare and through
   the adapter back to back, the order alternating): the starter engine, a
   sentence-window engine (MetadataReplacementPostProcessor) and a
   QueryFusionRetriever (MiniLM + BM25, reciprocal rank) engine; then the same
   three engines with LlamaIndex's MockLLM, which answers with its whole
   prompt, to show that recorded runs give the same answers (and the same
   source nodes) as unrecorded ones.

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

    patterns(docs, embed, queries, args.llm_latency)


def pattern_engines(docs, embed, llm) -> dict:
    """name -> (engine, LlamaIndexPipeline keyword arguments) for the three issue-11 patterns."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.node_parser import SentenceSplitter, SentenceWindowNodeParser
    from llama_index.core.postprocessor import MetadataReplacementPostProcessor
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.retrievers.bm25 import BM25Retriever

    nodes = SentenceSplitter(chunk_size=256).get_nodes_from_documents(docs)
    index = VectorStoreIndex(nodes, embed_model=embed)
    windows = SentenceWindowNodeParser.from_defaults(window_size=2).get_nodes_from_documents(docs)
    window_index = VectorStoreIndex(windows, embed_model=embed)
    fusion = QueryFusionRetriever(
        [index.as_retriever(similarity_top_k=6), BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=6)],
        similarity_top_k=6, num_queries=1, mode="reciprocal_rerank", use_async=False, llm=llm,
    )  # fmt: skip
    replace = MetadataReplacementPostProcessor(target_metadata_key="window")
    return {
        "starter engine": (index.as_query_engine(similarity_top_k=6, llm=llm),
                           {"index": index, "documents": docs}),
        "sentence window": (window_index.as_query_engine(similarity_top_k=6, llm=llm,
                                                         node_postprocessors=[replace]),
                            {"index": window_index, "documents": docs}),
        "fusion retriever": (RetrieverQueryEngine.from_args(fusion, llm=llm),
                             {"nodes": nodes, "documents": docs}),
    }  # fmt: skip


def _source_ids(response) -> list[str]:
    return [n.node.node_id for n in response.source_nodes]


def patterns(docs, embed, queries: list[str], llm_latency: float) -> None:
    import statistics

    from llama_index.core.llms import MockLLM
    from llama_index.llms.openai_like import OpenAILike

    from cofe.adapters import LlamaIndexPipeline

    print(f"\nissue-11 patterns, paired per query (LLM behind HTTP, {llm_latency * 1000:.0f} ms):")
    print(f"{'pattern':<18} {'bare ms/q':>10} {'cofe ms/q':>10} {'overhead ms/q':>14} "
          f"{'median ms':>10} {'overhead %':>11}")  # fmt: skip
    with ScriptedOpenAI(lambda m, r: "an answer", latency=llm_latency) as server:
        llm = OpenAILike(model="scripted", api_base=server.base_url, api_key="none",
                         is_chat_model=True, max_retries=0)  # fmt: skip
        for name, (engine, kwargs) in pattern_engines(docs, embed, llm).items():
            pipeline = LlamaIndexPipeline(engine, **kwargs)
            pipeline.prepare(pipeline.documents, None)
            for q in queries[:5]:  # warm-up both paths
                engine.query(q)
                pipeline.answer(q)
            bare, through = [], []
            for i, q in enumerate(queries):
                for recorded in (False, True) if i % 2 == 0 else (True, False):
                    t = time.perf_counter()
                    pipeline.answer(q) if recorded else engine.query(q)
                    (through if recorded else bare).append(time.perf_counter() - t)
            b, c = sum(bare) / len(bare), sum(through) / len(through)
            median = statistics.median(x - y for x, y in zip(through, bare, strict=True))
            print(f"{name:<18} {1000 * b:>10.2f} {1000 * c:>10.2f} {1000 * (c - b):>+14.3f} "
                  f"{1000 * median:>+10.3f} {100 * (c - b) / b:>+10.2f} %")  # fmt: skip

    print("\nsame answers recorded and unrecorded (MockLLM answers with its whole prompt):")
    for name, (engine, kwargs) in pattern_engines(docs, embed, MockLLM()).items():
        pipeline = LlamaIndexPipeline(engine, **kwargs)
        pipeline.prepare(pipeline.documents, None)
        same_answer = same_sources = 0
        for q in queries:
            response = engine.query(q)
            trace = pipeline.answer(q)
            same_answer += trace.answer == str(response.response)
            recorded = [pipeline.registry.by_id[c.chunk_id] for c in trace.context or []]
            bare_texts = [n.node.get_content() for n in response.source_nodes]
            same_sources += [c.text for c in recorded] == bare_texts
        print(
            f"{name:<18} identical answers {same_answer}/{len(queries)}, "
            f"context = the synthesizer's nodes {same_sources}/{len(queries)}"
        )


if __name__ == "__main__":
    main()
