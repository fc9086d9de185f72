"""What recording costs: the same queries with and without cofe's adapters around them.

    python benchmarks/instrumentation_overhead.py [--queries 100] [--llm-latency 0.05]
        [--only frameworks|llamaindex] [--assumed-llm 0.5]

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

4. every framework cofe records (``frameworks``): LangChain and Haystack (the
   verdict-validity pipelines: BM25 pool of 30, top 4, an extractive chat model), a
   LlamaIndex engine (MiniLM, top 6, MockLLM) recorded by events (``LlamaIndexPipeline``)
   and by OpenInference spans (``OpenInferencePipeline``), over the same SQuAD articles.
   Bare and recorded blocks of all the queries alternate (the instrumentors are installed
   for a recorded block only, as ``cofe run`` does), three rounds, the fastest of each;
   every recorded answer is compared with the bare one. The overhead is split into cofe's
   own work (span capture, assembly, chunk lookups: timed inside the adapter) and the
   rest (the framework's instrumentor building its spans). It is given as a share of the
   local pipeline time measured here (retrieval and a local stand-in LLM: a worst case)
   and of that time plus ``--assumed-llm`` seconds, an *assumed* model call (not slept).

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
    report = run_pipeline(
        pipeline,
        evalset,
        out,
        concurrency=1,
        progress=False,
        documents=getattr(pipeline, "documents", None) or [],
    )
    return report.seconds["answer"]


def compare(name: str, bare, through) -> None:
    bare_times, cofe_times = [], []
    for _ in range(ROUNDS):
        bare_times.append(bare())
        cofe_times.append(through())
    b, c = min(bare_times), min(cofe_times)
    print(
        f"{name}: bare {b:.3f} s, through cofe {c:.3f} s, overhead {100 * (c - b) / b:+.2f} %"
        f"  (all rounds bare {[round(x, 3) for x in bare_times]}, cofe {[round(x, 3) for x in cofe_times]})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--llm-latency", type=float, default=0.05)
    parser.add_argument(
        "--assumed-llm",
        type=float,
        default=0.5,
        help="seconds of an assumed model call, for the overhead share (not slept)",
    )
    parser.add_argument("--only", choices=("frameworks", "llamaindex"), default=None)
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
    if args.only != "llamaindex":
        frameworks(texts, queries, args.assumed_llm)
    if args.only == "frameworks":
        return

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
    index = VectorStoreIndex.from_documents(
        docs, embed_model=embed, transformations=[SentenceSplitter(chunk_size=256)]
    )
    with ScriptedOpenAI(lambda m, r: "an answer", latency=args.llm_latency) as server:
        llm = OpenAILike(
            model="scripted",
            api_base=server.base_url,
            api_key="none",
            is_chat_model=True,
            max_retries=0,
        )
        engine = index.as_query_engine(
            similarity_top_k=6,
            llm=llm,
            node_postprocessors=[SimilarityPostprocessor(similarity_cutoff=0.0)],
        )

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
        [
            index.as_retriever(similarity_top_k=6),
            BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=6),
        ],
        similarity_top_k=6,
        num_queries=1,
        mode="reciprocal_rerank",
        use_async=False,
        llm=llm,
    )
    replace = MetadataReplacementPostProcessor(target_metadata_key="window")
    return {
        "starter engine": (
            index.as_query_engine(similarity_top_k=6, llm=llm),
            {"index": index, "documents": docs},
        ),
        "sentence window": (
            window_index.as_query_engine(
                similarity_top_k=6, llm=llm, node_postprocessors=[replace]
            ),
            {"index": window_index, "documents": docs},
        ),
        "fusion retriever": (
            RetrieverQueryEngine.from_args(fusion, llm=llm),
            {"nodes": nodes, "documents": docs},
        ),
    }


def _source_ids(response) -> list[str]:
    return [n.node.node_id for n in response.source_nodes]


def patterns(docs, embed, queries: list[str], llm_latency: float) -> None:
    import statistics

    from llama_index.core.llms import MockLLM
    from llama_index.llms.openai_like import OpenAILike

    from cofe.adapters import LlamaIndexPipeline

    print(f"\nissue-11 patterns, paired per query (LLM behind HTTP, {llm_latency * 1000:.0f} ms):")
    print(
        f"{'pattern':<18} {'bare ms/q':>10} {'cofe ms/q':>10} {'overhead ms/q':>14} "
        f"{'median ms':>10} {'overhead %':>11}"
    )
    with ScriptedOpenAI(lambda m, r: "an answer", latency=llm_latency) as server:
        llm = OpenAILike(
            model="scripted",
            api_base=server.base_url,
            api_key="none",
            is_chat_model=True,
            max_retries=0,
        )
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
            print(
                f"{name:<18} {1000 * b:>10.2f} {1000 * c:>10.2f} {1000 * (c - b):>+14.3f} "
                f"{1000 * median:>+10.3f} {100 * (c - b) / b:>+10.2f} %"
            )

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


def _framework_pipelines(texts: list[tuple[str, str]]):
    """(name, bare callable, cofe pipeline recording it, answer of a bare result), each
    built when its turn comes."""
    from benchmarks._framework_pipelines import build
    from cofe.adapters import LlamaIndexPipeline, OpenInferencePipeline
    from cofe.adapters._openinference import answer_text

    docs_dir = WORK / "docs"
    docs_dir.mkdir(parents=True, exist_ok=True)
    for name, text in texts:
        (docs_dir / name).write_text(text, encoding="utf-8")
    for kind in ("langchain", "haystack"):
        pipeline = build(kind, docs_dir, 256)
        yield kind, pipeline.fn, pipeline, answer_text
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.llms import MockLLM
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    from cofe.pipeline._embed import minilm_path

    embed = HuggingFaceEmbedding(model_name=minilm_path(), device="cpu")
    docs = [Document(text=t, id_=n, metadata={"file_name": n}) for n, t in texts]
    index = VectorStoreIndex.from_documents(
        docs, embed_model=embed, transformations=[SentenceSplitter(chunk_size=256)]
    )
    engine = index.as_query_engine(similarity_top_k=6, llm=MockLLM())
    yield (
        "llama-index (events)",
        engine.query,
        LlamaIndexPipeline(engine, index=index, documents=docs),
        answer_text,
    )
    yield (
        "llama-index (spans)",
        engine.query,
        OpenInferencePipeline(
            engine.query, corpus=index, documents=docs, frameworks=["llama_index"]
        ),
        answer_text,
    )


class _Timed:
    """Adds up the CPU seconds of the calling thread spent in some methods (cofe's own work)."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, owner, name: str) -> None:
        inner = getattr(owner, name)

        def timed(*args, **kwargs):
            t = time.thread_time()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds += time.thread_time() - t

        setattr(owner, name, timed)


def _block(fn, queries: list[str]) -> tuple[float, float, list]:
    """(wall seconds, CPU seconds of the process, results) a query, over all the queries."""
    wall, cpu = time.perf_counter(), time.process_time()
    results = [fn(q) for q in queries]
    return (
        (time.perf_counter() - wall) / len(queries),
        (time.process_time() - cpu) / len(queries),
        results,
    )


def frameworks(texts: list[tuple[str, str]], queries: list[str], assumed_llm: float) -> None:
    import contextlib

    from cofe.adapters import _openinference

    print(
        f"\nframeworks: {len(queries)} queries a block; bare, instrumented (the instrumentor "
        f"installed, nothing recorded) and recorded blocks alternate, {ROUNDS} rounds, the "
        "fastest of each; ms a query, wall time and CPU time of the process"
    )
    rows = []
    for name, bare_fn, pipeline, answer in _framework_pipelines(texts):
        pipeline.prepare(pipeline.documents, None)
        own = _Timed()
        own.wrap(pipeline, "_trace")  # the assembly and the chunk lookups
        original_on_end = _openinference._Collector.on_end
        own.wrap(_openinference._Collector, "on_end")  # span capture
        recording = getattr(pipeline, "recording", None)
        session = recording if callable(recording) else contextlib.nullcontext
        times: dict[str, list[tuple[float, float]]] = {
            "bare": [],
            "instrumented": [],
            "recorded": [],
        }
        own_cpu, same = [], 0
        try:
            for q in queries[:5]:  # warm-up, both paths
                bare_fn(q)
                with session():
                    pipeline.answer(q)
            for _ in range(ROUNDS):
                wall, cpu, bare_results = _block(bare_fn, queries)
                times["bare"].append((wall, cpu))
                with session():
                    if callable(recording):  # spans made and dropped: the instrumentor's cost
                        wall, cpu, _ = _block(bare_fn, queries)
                        times["instrumented"].append((wall, cpu))
                    own.seconds = 0.0
                    wall, cpu, traces = _block(pipeline.answer, queries)
                    times["recorded"].append((wall, cpu))
                    own_cpu.append(own.seconds / len(queries))
                same = sum(
                    trace.answer == answer(result)
                    for trace, result in zip(traces, bare_results, strict=True)
                )
        finally:
            _openinference._Collector.on_end = original_on_end
        best = {k: (min(w for w, _ in v), min(c for _, c in v)) for k, v in times.items() if v}
        print(
            f"  {name}: "
            + "; ".join(
                f"{k} wall {[round(1000 * w, 2) for w, _ in v]} cpu {[round(1000 * c, 2) for _, c in v]}"
                for k, v in times.items()
                if v
            ),
            flush=True,
        )
        rows.append((name, best, min(own_cpu), same))
    print(
        f"\n{'pipeline':<22} {'bare':>13} {'recorded':>13} {'overhead':>15} "
        f"{'instrumentor':>13} {'cofe':>6} {'% of local':>11} {f'% of local+{assumed_llm:g}s LLM':>20} "
        f"{'same answers':>13}"
    )
    print(
        f"{'':<22} {'wall / cpu':>13} {'wall / cpu':>13} {'wall / cpu':>15} {'cpu':>13} {'cpu':>6} "
        f"{'cpu':>11} {'cpu':>20}"
    )
    for name, best, mine, same in rows:
        (bw, bc), (rw, rc) = best["bare"], best["recorded"]
        inst = best["instrumented"][1] - bc if "instrumented" in best else 0.0
        over = rc - bc
        print(
            f"{name:<22} {1000 * bw:>6.2f}/{1000 * bc:<6.2f} {1000 * rw:>6.2f}/{1000 * rc:<6.2f} "
            f"{1000 * (rw - bw):>+7.2f}/{1000 * over:<+7.2f} {1000 * inst:>+13.2f} {1000 * mine:>6.2f} "
            f"{100 * over / bc:>+10.1f}% {100 * over / (bc + assumed_llm):>+19.2f}% "
            f"{same:>6}/{len(queries)}"
        )
    print(
        f"(cpu: CPU seconds of the process, less sensitive than wall time to other load on the "
        f"machine; instrumentor: the instrumented block's CPU over the bare one's; cofe: span "
        f"capture, assembly and chunk lookups, CPU of the calling thread; '% of local+"
        f"{assumed_llm:g}s LLM': the CPU overhead against the local CPU time plus an assumed "
        "model call of that many seconds, not measured.)"
    )


if __name__ == "__main__":
    main()
