"""The plain-Python adapter: stages as callables, any of them absent or failing."""

from __future__ import annotations

from pathlib import Path

from cofe import read_run, score_run
from cofe.adapters import PythonPipeline
from cofe.pipeline import BM25Retriever
from cofe.runlog import Chunk, ParsedDocument, Stage
from cofe.runner import run_pipeline


def sentences(doc: ParsedDocument) -> list[str]:
    return [s.strip() + "." for s in doc.text.replace("\n", " ").split(".") if s.strip()]


class Toy:
    """A tiny but real pipeline: sentence chunks, BM25, reverse-order 'reranker', echo generator."""

    def __init__(self) -> None:
        self.bm25 = BM25Retriever()
        self.corpus: list[Chunk] = []

    def index(self, chunks: list[Chunk]) -> None:
        self.corpus = chunks
        self.bm25.index(chunks, None)

    def retrieve(self, query: str):
        return [(self.corpus[i], s) for i, s in self.bm25.search(query, 5)]

    def rerank(self, query: str, candidates: list[Chunk]):
        return [c.chunk_id for c in candidates[:2]]

    def generate(self, query: str, context: list[Chunk]) -> str:
        return " ".join(c.text for c in context)


def _run(tmp_path: Path, small_docs: Path, small_evalset: Path, **stages) -> Path:
    out = tmp_path / "run"
    run_pipeline(PythonPipeline(**stages), small_evalset, out, docs=small_docs, progress=False)
    return out


def test_all_four_stages_are_recorded(tmp_path, small_docs, small_evalset) -> None:
    toy = Toy()
    out = _run(
        tmp_path,
        small_docs,
        small_evalset,
        chunk=sentences,
        index=toy.index,
        retrieve=toy.retrieve,
        rerank=toy.rerank,
        generate=toy.generate,
    )
    run = read_run(out)
    assert run.problems == []
    assert len(run.documents) == 3 and len(run.chunks) == len(toy.corpus) >= 6
    q1 = run.records["q1"]
    assert q1.pool and len(q1.context) == 2 and "1889" in q1.answer
    assert set(q1.latency) == {Stage.RETRIEVAL, Stage.RERANKING, Stage.GENERATION}
    assert run.chunks[q1.pool[0].chunk_id].text == "The Eiffel Tower was finished in 1889."
    assert run.manifest.pipeline["stages"]["rerank"].endswith("Toy.rerank")
    assert run.manifest.stages == [
        Stage.PARSE,
        Stage.CHUNKING,
        Stage.RETRIEVAL,
        Stage.RERANKING,
        Stage.GENERATION,
    ]
    assert run.manifest.top_k == 4
    result = score_run(out)
    assert set(result.verdicts["verdict"]) <= {"pass", "not_in_answer", "cut_by_rerank"}
    assert result.scores["measure"].str.startswith("Rerank").any()


def test_a_pipeline_without_reranker_is_scored_without_that_stage(
    tmp_path, small_docs, small_evalset
):
    toy = Toy()
    out = _run(
        tmp_path,
        small_docs,
        small_evalset,
        chunk=sentences,
        index=toy.index,
        retrieve=toy.retrieve,
        generate=toy.generate,
    )
    run = read_run(out)
    assert all(r.context is None and r.error is None for r in run.records.values())
    assert all(Stage.RERANKING not in r.latency for r in run.records.values())
    # the generator got the pool's first top_k, and the run says so: the scorer need not guess
    assert run.manifest.top_k == 4
    assert run.manifest.stages == [Stage.PARSE, Stage.CHUNKING, Stage.RETRIEVAL, Stage.GENERATION]
    result = score_run(out)
    assert not result.scores["measure"].str.startswith("Rerank").any()
    assert result.verdicts["verdict"].eq("pass").all()


def test_the_generator_gets_the_pool_cut_at_top_k_which_the_manifest_records(
    tmp_path, small_docs, small_evalset
):
    seen: list[int] = []

    def retrieve(query: str) -> list[str]:
        return [f"filler {i}" for i in range(6)] + ["The Eiffel Tower was finished in 1889."]

    def generate(query: str, context: list[Chunk]) -> str:
        seen.append(len(context))
        return context[-1].text

    out = tmp_path / "run"
    pipeline = PythonPipeline(retrieve=retrieve, generate=generate, top_k=7)
    run_pipeline(pipeline, small_evalset, out, docs=small_docs, progress=False)
    run = read_run(out)
    assert set(seen) == {7} and run.manifest.top_k == 7
    assert all(r.context is None and len(r.pool) == 7 for r in run.records.values())
    assert run.manifest.stages == [Stage.PARSE, Stage.CHUNKING, Stage.RETRIEVAL, Stage.GENERATION]
    # the fact at rank 7 reached the generator: judged at 7, not at a default of 4
    result = score_run(out)
    assert result.verdicts.set_index("sample_id")["verdict"]["q1"] == "pass"
    assert result.shape["top_k"] == 7


def test_a_retrieval_only_pipeline_has_no_generation_stage(tmp_path, small_docs, small_evalset):
    toy = Toy()
    out = _run(
        tmp_path, small_docs, small_evalset, chunk=sentences, index=toy.index, retrieve=toy.retrieve
    )
    assert read_run(out).manifest.stages == [Stage.PARSE, Stage.CHUNKING, Stage.RETRIEVAL]


def test_a_stage_that_raises_is_recorded_with_its_traceback_and_the_run_goes_on(
    tmp_path, small_docs, small_evalset
) -> None:
    toy = Toy()

    def flaky_generate(query: str, context: list[Chunk]) -> str:
        if "Germany" in query:
            raise RuntimeError("model overloaded")
        return toy.generate(query, context)

    out = _run(
        tmp_path,
        small_docs,
        small_evalset,
        chunk=sentences,
        index=toy.index,
        retrieve=toy.retrieve,
        generate=flaky_generate,
    )
    run = read_run(out)
    failed = run.records["q2"]
    assert failed.error.stage is Stage.GENERATION and failed.error.type == "RuntimeError"
    assert "model overloaded" in failed.error.message
    assert "flaky_generate" in failed.error.traceback
    assert failed.pool is not None and failed.answer is None  # earlier stages kept
    assert run.records["q1"].error is None and run.records["q3"].answer
    verdicts = score_run(out).verdicts.set_index("sample_id")["verdict"]
    assert verdicts["q2"] == "pipeline_error"


def test_retrieval_may_return_texts_unknown_to_the_corpus(tmp_path, small_docs, small_evalset):
    # a pipeline whose chunking cofe does not see: texts are registered on first sight
    def retrieve(query: str) -> list[str]:
        return ["The Eiffel Tower was finished in 1889.", "Berlin is the capital of Germany."]

    out = _run(tmp_path, small_docs, small_evalset, retrieve=retrieve)
    run = read_run(out)
    assert len(run.chunks) == 2 and run.problems == []
    assert {r.pool[0].chunk_id for r in run.records.values()} == {
        next(c.chunk_id for c in run.chunks.values() if "1889" in c.text)
    }


def test_retrieval_may_return_derived_items_with_their_sources(tmp_path, small_docs, small_evalset):
    """A summary built from France's chunks that drops the year: recorded as a derived item and
    blamed as a derivation loss, not as a miss by the retriever."""
    toy = Toy()

    def retrieve(query: str):
        france = [c.chunk_id for c in toy.corpus if c.doc_id.startswith("france")]
        summary = {
            "text": "The Eiffel Tower is in Paris, the capital of France.",
            "kind": "summary",
            "derived_from": france,
            "score": 0.9,
        }
        return [summary, *toy.retrieve(query)[:1]] if "Eiffel" in query else toy.retrieve(query)

    out = _run(
        tmp_path,
        small_docs,
        small_evalset,
        chunk=sentences,
        index=toy.index,
        retrieve=retrieve,
        generate=lambda q, context: "I don't know.",
        top_k=1,
    )
    run = read_run(out)
    assert run.problems == []
    summaries = [c for c in run.chunks.values() if c.kind == "summary"]
    assert len(summaries) == 1 and summaries[0].doc_id == "(derived)"
    assert all(run.chunks[s].doc_id.startswith("france") for s in summaries[0].derived_from)
    result = score_run(out)
    verdicts = result.verdicts.set_index("sample_id")
    assert verdicts.at["q1", "verdict"] == "derivation_lost"
    assert "which holds the point, but its own text dropped it" in verdicts.at["q1", "explanation"]
    # q1's point never reached the generator (the summary dropped it): it declined rightly
    assert result.view().refusal_rates() == {
        "answered": 3,
        "refused": 3,
        "rate": 1.0,
        "context_held": 2,
        "context_lacked": 1,
    }
