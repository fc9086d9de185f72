"""Scorings for the gate: real pipeline runs over the shipped corpus, and synthetic ones.

The pipeline runs rebuild ``examples/squad-bm25`` with its own code (BM25 pool, query-term
coverage reranker, extractive generator) three ways: as it is; with a broken retriever (an
off-by-one that drops every query's best hit); and with a generator whose tie-breaking
depends on a seed (as an LLM's sampling does) -- a change that is noise only.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from cofe import RunWriter, ScoreResult, read_evalset, read_run, score_run
from tests.conftest import EXAMPLE_RUN, REPO

HEADLINE = (
    "parse/KeywordRecall",
    "corpus/KeywordRecall",
    "pool/KeywordRecall@30",
    "context/KeywordRecall@4",
    "answer/PointRecall",
)


def _builder() -> Any:
    spec = importlib.util.spec_from_file_location(
        "build_squad_bm25", REPO / "examples" / "build_squad_bm25.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def _patched(module: Any, name: str, value: Any) -> Iterator[None]:
    original = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, original)


@pytest.fixture(scope="session")
def pipeline_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Results folders ``base``, ``broken`` (retriever) and ``noisy`` (generator seed)."""
    pytest.importorskip("bm25s")
    build = _builder()
    log = read_run(EXAMPLE_RUN)
    evalset = EXAMPLE_RUN / "evalset.jsonl"
    samples = read_evalset(evalset).samples
    chunks = list(log.chunks.values())
    root = tmp_path_factory.mktemp("check-runs")

    def write(name: str, records: list[Any]) -> Path:
        run_dir = root / name
        writer = RunWriter(run_dir)
        writer.start(log.manifest.model_copy(update={"run_id": name}), evalset)
        writer.add_documents(log.documents.values())
        writer.add_chunks(chunks)
        writer.add_samples(records)
        score_run(run_dir).write(run_dir / "scores")
        return run_dir / "scores"

    retriever, generator = build.BM25Retriever, build.ExtractiveGenerator

    class OffByOne(retriever):  # type: ignore[misc, valid-type]
        """The bug: results sliced from 1, so every query loses its best hit."""

        def search(self, query: str, k: int) -> Any:
            return super().search(query, k + 1)[1:]

    def seeded(seed: int) -> type:
        class Seeded(generator):  # type: ignore[misc, valid-type]
            """Ties between equally good sentences broken by a seed: the context read in
            reverse for the queries the seed picks."""

            def __call__(self, query: str, context: list[Any]) -> str:
                digest = hashlib.sha256(f"{seed}:{query}".encode()).digest()
                return str(super().__call__(query, context[::-1] if digest[0] % 2 else context))

        return Seeded

    out = {}
    with _patched(build, "ExtractiveGenerator", seeded(0)):
        out["base"] = write("base", build.answer_all(samples, chunks))
        with _patched(build, "BM25Retriever", OffByOne):
            out["broken"] = write("broken", build.answer_all(samples, chunks))
    with _patched(build, "ExtractiveGenerator", seeded(1)):
        out["noisy"] = write("noisy", build.answer_all(samples, chunks))
    return out


def synthetic(
    values: dict[str, np.ndarray],
    sources: list[str] | None = None,
    *,
    run_id: str = "synthetic",
    stages: tuple[str, ...] = ("parse", "chunking", "retrieval", "reranking", "generation"),
    verdicts: list[str] | None = None,
) -> ScoreResult:
    """A scoring holding the given per-sample values (columns ``step/measure``)."""
    n = len(next(iter(values.values())))
    ids = [f"q{i:04d}" for i in range(n)]
    rows = []
    for column, column_values in values.items():
        step, measure = column.split("/", 1)
        rows.append(
            pd.DataFrame(
                {
                    "sample_id": ids,
                    "query_type": "factual",
                    "step": step,
                    "measure": measure,
                    "value": column_values,
                }
            )
        )
    verdict = verdicts or ["pass"] * n
    stage_of = {
        "not_retrieved": "retrieval",
        "cut_by_rerank": "reranking",
        "not_in_answer": "generation",
        "chunk_split": "chunking",
    }
    table = pd.DataFrame(
        {
            "sample_id": ids,
            "query_type": "factual",
            "verdict": verdict,
            "stage": [stage_of.get(v) for v in verdict],
            "points": 1,
            "explanation": "",
            "source": sources or [None] * n,
        }
    )
    empty = pd.DataFrame()
    return ScoreResult(
        config=None,
        run=run_id,
        run_id=run_id,
        shape={"stages": list(stages)},
        scores=pd.concat(rows),
        points=empty,
        verdicts=table,
        skipped=empty,
        recalls=empty,
        latency=empty,
    ).normalized()


NoisePair = Callable[..., tuple[ScoreResult, ScoreResult]]


@pytest.fixture
def noise_pair() -> NoisePair:
    """``noise_pair(rng, drop={column: shift})``: two scorings of the same 200 samples (20
    source documents), each sample's values drawn independently in both runs from that
    sample's own success rates -- a rerun, no true difference -- unless ``drop`` lowers a
    column's rates in the second."""

    def make(
        rng: np.random.Generator,
        n: int = 200,
        documents: int = 20,
        drop: dict[str, float] | None = None,
    ) -> tuple[ScoreResult, ScoreResult]:
        sources = [f"doc{i % documents}" for i in range(n)]
        doc_effect = rng.normal(0, 0.8, documents)[np.arange(n) % documents]
        base_rate = {
            "parse/KeywordRecall": 3.0,
            "corpus/KeywordRecall": 2.0,
            "pool/KeywordRecall@30": 1.2,
            "context/KeywordRecall@4": 0.8,
            "answer/PointRecall": 0.2,
        }
        rates = {
            c: 1 / (1 + np.exp(-(b + doc_effect + rng.normal(0, 1.0, n))))
            for c, b in base_rate.items()
        }

        def draw(shift: dict[str, float]) -> dict[str, np.ndarray]:
            # two information points per sample: values 0, 0.5, 1
            return {
                c: rng.binomial(2, np.clip(r - shift.get(c, 0.0), 0, 1)) / 2
                for c, r in rates.items()
            }

        return (
            synthetic(draw({}), sources, run_id="old"),
            synthetic(draw(drop or {}), sources, run_id="new"),
        )

    return make


@pytest.fixture
def fresh(tmp_path: Path) -> Callable[[Path, str], Path]:
    """A copy of a results folder (a test may change it)."""

    def copy(folder: Path, name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(folder, target)
        return target

    return copy


TWO_DOCUMENTS = ("Normans", "Pharmacy")  # 60 questions each in the shipped eval set


@pytest.fixture(scope="session")
def topk_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """Results folders of one pipeline recorded with top-K 4 and with top-K 1 (no reranker:
    the pool is what the retriever returned, the context its first K) over the questions
    of two documents -- the change a gate clustering by document could not see."""
    pytest.importorskip("bm25s")
    build = _builder()
    log = read_run(EXAMPLE_RUN)
    root = tmp_path_factory.mktemp("topk-runs")
    evalset = root / "evalset.jsonl"
    kept = [
        line
        for line in (EXAMPLE_RUN / "evalset.jsonl").read_text(encoding="utf-8").splitlines()
        if any(f'"doc":"{doc}.txt"' in line for doc in TWO_DOCUMENTS)
    ]
    evalset.write_text("\n".join(kept) + "\n", encoding="utf-8")
    samples = read_evalset(evalset).samples
    documents = [d for d in log.documents.values() if d.doc_id in TWO_DOCUMENTS]
    chunks = [c for c in log.chunks.values() if c.doc_id in TWO_DOCUMENTS]
    out = {}
    for k in (4, 1):
        run_dir = root / f"k{k}"
        with _patched(build, "CANDIDATES", k), _patched(build, "TOP_K", k):
            records = build.answer_all(samples, chunks, rerank=False)
        manifest = log.manifest.model_copy(
            update={
                "run_id": f"k{k}",
                "top_k": k,
                "stages": [s for s in log.manifest.stages if str(s) != "reranking"],
            }
        )
        writer = RunWriter(run_dir)
        writer.start(manifest, evalset)
        writer.add_documents(documents)
        writer.add_chunks(chunks)
        writer.add_samples(records)
        score_run(run_dir).write(run_dir / "scores")
        out[k] = run_dir / "scores"
    return out
