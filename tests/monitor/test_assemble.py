from __future__ import annotations

import pytest

from cofe.adapters import NOT_A_QUERY
from cofe.monitor import assemble
from cofe.runlog import Stage
from tests.monitor.conftest import TRACE, docs, rag_trace, span


def test_a_traced_query_gives_every_stage():
    record = assemble(TRACE, rag_trace())
    assert record.query == "When was the tower finished?"
    assert [d.text for d in record.pool] == [
        "The tower was finished in 1889.",
        "Paris is a city.",
        "The Louvre is a museum.",
    ]
    assert [d.score for d in record.pool] == [1.0, 0.9, 0.8]
    assert [d.text for d in record.context] == record_texts(record.pool[:2])
    assert record.answer == "In 1889."  # the outer LLM span's message, not the inner call
    assert record.stages == (Stage.RETRIEVAL, Stage.RERANKING, Stage.GENERATION)
    # the nested retriever and LLM spans are not counted twice
    assert record.latency == {Stage.RETRIEVAL: 0.2, Stage.RERANKING: 0.05, Stage.GENERATION: 0.5}
    assert record.problems == [] and record.error is None and record.is_query


def record_texts(docs_):
    return [d.text for d in docs_]


def test_the_same_text_is_the_same_chunk_whatever_its_node_id():
    a = assemble(TRACE, rag_trace())
    other = rag_trace(trace="1" * 32)
    for retriever in other[1:3]:  # the outer retriever and the inner one (the pool's)
        retriever.attributes["retrieval.documents.0.document.id"] = "another-node-id"
    b = assemble("1" * 32, other)
    assert a.pool[0].chunk_id == b.pool[0].chunk_id
    assert b.pool[0].ref == "another-node-id"


def test_without_a_reranker_the_generator_saw_the_pool():
    spans = [s for s in rag_trace() if s.kind != "RERANKER"]
    record = assemble(TRACE, spans)
    assert record.stages == (Stage.RETRIEVAL, Stage.GENERATION)
    assert record_texts(record.context) == record_texts(record.pool)


def test_a_failing_retriever_is_a_retrieval_error_not_a_problem():
    raised = (
        {
            "name": "exception",
            "time_ns": 0,
            "attributes": {"exception.type": "ConnectionError", "exception.message": "store down"},
        },
    )
    spans = [
        span("1", "CHAIN", seconds=1.0, **{"input.value": "q?"}, status="error"),
        span("2", "RETRIEVER", parent="1", status="error", events=raised),
    ]
    record = assemble(TRACE, spans)
    assert record.error_stage is Stage.RETRIEVAL
    assert record.error == "ConnectionError: store down"
    assert record.pool is None and record.answer is None
    assert record.problems == []


def test_a_chain_failing_after_retrieval_never_blames_a_reranker_the_trace_does_not_show():
    spans = [
        span("1", "CHAIN", status="error", message="boom", **{"input.value": "q?"}),
        span("2", "RETRIEVER", parent="1", **docs("retrieval.documents", ["a b c"])),
    ]
    record = assemble(TRACE, spans)
    assert record.error_stage is Stage.GENERATION
    assert record.error == "boom"


def test_an_error_handled_inside_a_stage_is_no_error_and_an_llm_reranker_is_reranking():
    retried = span("7", "EMBEDDING", parent="3", status="error", message="timeout (retried)")
    record = assemble(TRACE, [*rag_trace(), retried])
    assert record.error is None and record.answer == "In 1889."
    llm_reranker = span(
        "8", "LLM", parent="4", seconds=2.0, **{"output.value": "Doc: 2, Relevance: 9"}
    )
    spans = [
        *rag_trace()[:4],
        llm_reranker,
        span("5", "LLM", parent="1", start=0.4, status="error", message="down"),
    ]
    record = assemble(TRACE, spans)
    assert record.error_stage is Stage.GENERATION and record.answer is None
    assert record.latency[Stage.GENERATION] == pytest.approx(0.1)  # not the reranker's call


def test_a_remote_parent_or_an_http_root_still_gives_the_query():
    remote = rag_trace()
    remote[0] = span("1", "CHAIN", parent="f" * 16, seconds=1.0, **{"input.value": "Who won?"})
    record = assemble(TRACE, remote)
    assert record.query == "Who won?" and record.problems == []
    http = [
        span("0", None, seconds=2.0, **{"http.route": "/ask"}),
        *[
            s
            if s.span_id != "1".rjust(16, "0")
            else span("1", "CHAIN", parent="0", seconds=1.0, **{"input.value": "Who won?"})
            for s in rag_trace()
        ],
    ]
    assert assemble(TRACE, http).query == "Who won?"


def test_partial_and_malformed_traces_say_what_is_missing():
    no_root = assemble(TRACE, rag_trace()[1:])
    assert any("no root span" in p for p in no_root.problems)
    no_retriever = assemble(TRACE, [s for s in rag_trace() if s.kind not in ("RETRIEVER",)])
    assert "no RETRIEVER span (the pool is unknown)" in no_retriever.problems
    # the reranker's input stands in for the pool
    assert record_texts(no_retriever.pool)[0] == "The tower was finished in 1889."
    empty = rag_trace()
    empty[1] = span("2", "RETRIEVER", parent="1")
    empty[2] = span("3", "RETRIEVER", parent="2")
    record = assemble(TRACE, empty)
    assert "the RETRIEVER span lists no documents" in record.problems
    assert record.pool == []


def test_unknown_kinds_are_counted_and_other_traces_are_not_queries():
    spans = [*rag_trace(), span("9", "WIDGET", parent="1"), span("a", None, parent="1")]
    record = assemble(TRACE, spans)
    assert record.ignored == {"WIDGET": 1, "(no openinference.span.kind)": 1}
    assert record.problems == []
    building = assemble(TRACE, [span("1", "CHAIN"), span("2", "EMBEDDING", parent="1")])
    assert not building.is_query and building.problems == [NOT_A_QUERY]


def test_a_json_root_input_gives_its_query_field():
    spans = rag_trace()
    spans[0].attributes.update(
        {
            "input.value": '{"message": "Tell me about Lisbon"}',
            "input.mime_type": "application/json",
        }
    )
    assert assemble(TRACE, spans).query == "Tell me about Lisbon"


def test_a_cycle_in_parent_ids_does_not_hang():
    spans = [span("1", "RETRIEVER", parent="2"), span("2", "RETRIEVER", parent="1")]
    record = assemble(TRACE, spans)  # returns, with a reason
    assert any("no root span" in p for p in record.problems)
