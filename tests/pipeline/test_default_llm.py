"""The default pipeline with LLM stages, against a real loopback OpenAI-protocol server."""

from __future__ import annotations

import json
from pathlib import Path

from cofe.llm import Endpoint
from cofe.pipeline import Cache, DefaultPipeline, PipelineConfig, documents_from_texts
from cofe.runlog import Stage
from cofe.testing import ScriptedOpenAI

DOCS = documents_from_texts(
    [
        ("paris", "Paris is the capital of France. It lies on the Seine."),
        ("rome", "Rome is the capital of Italy. It lies on the Tiber."),
        ("plants", "Plants turn sunlight into chemical energy."),
    ]
)
CONFIG = PipelineConfig(
    chunk_size=32, chunk_overlap=0, candidates=3, top_k=2, reranker="llm", generator="openai"
)


def _reply(ranking: str):
    def reply(messages, request) -> str:
        return ranking if "rank passages" in messages[0]["content"] else "Paris."

    return reply


def test_the_pipeline_counts_llm_usage_per_stage_and_reuses_the_run_cache(tmp_path: Path) -> None:
    with ScriptedOpenAI(_reply(json.dumps({"ranking": [2, 1]}))) as server:
        endpoint = Endpoint.from_env(base_url=server.base_url, model="m")
        pipeline = DefaultPipeline(CONFIG, endpoint)
        assert pipeline.usage["generation"]["calls"] == 0
        pipeline.prepare(DOCS, Cache(tmp_path))
        trace = pipeline.answer("What is the capital of France?")
        assert trace.error is None and trace.answer == "Paris."
        rerun = DefaultPipeline(CONFIG, endpoint)
        rerun.prepare(DOCS, Cache(tmp_path))
        assert rerun.answer("What is the capital of France?").answer == "Paris."
        assert len(server.requests) == 2  # the rerun's calls came from the run's cache
    assert set(pipeline.usage) == {"reranking", "generation"}
    for stage in ("reranking", "generation"):
        assert pipeline.usage[stage]["calls"] == 1 and pipeline.usage[stage]["total_tokens"] > 0
        assert rerun.usage[stage]["calls"] == 0 and rerun.usage[stage]["cached"] == 1
    assert [c.chunk_id for c in trace.context] == [trace.pool[1].chunk_id, trace.pool[0].chunk_id]


def test_an_unusable_ranking_is_recorded_for_the_sample_with_the_pool_kept() -> None:
    with ScriptedOpenAI(_reply("I'd rate this 7 of 10 because 3 ...")) as server:
        pipeline = DefaultPipeline(CONFIG, Endpoint.from_env(base_url=server.base_url, model="m"))
        pipeline.prepare(DOCS, None)
        trace = pipeline.answer("What is the capital of France?")
        assert len(server.requests) == 2  # the ranking call and its repair; no generation
    assert trace.error.stage == Stage.RERANKING and trace.error.type == "RerankFailed"
    assert "after one repair" in trace.error.message
    assert trace.pool and trace.context is None and trace.answer is None
    assert pipeline.usage["reranking"]["failures"] == 1
    assert pipeline.usage["generation"]["calls"] == 0


def test_an_offline_pipeline_reports_no_llm_usage() -> None:
    assert DefaultPipeline(PipelineConfig()).usage == {}
