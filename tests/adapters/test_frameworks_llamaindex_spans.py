"""A LlamaIndex engine recorded through OpenInference spans gives the record its event adapter
(``LlamaIndexPipeline``) gives: the same corpus ids, pool, context and answer. The span path
reads a postprocessor's cut from the synthesizer's prompt, with no rerank event needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("openinference.instrumentation.llama_index")
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.postprocessor.types import BaseNodePostprocessor

from cofe.adapters import LlamaIndexPipeline, OpenInferencePipeline
from tests.adapters import _framework_apps as apps
from tests.adapters._framework_apps import record


class FirstTwo(BaseNodePostprocessor):
    """A postprocessor sending no rerank event (a CHAIN span): keeps the first two nodes."""

    def _postprocess_nodes(self, nodes: list[Any], query_bundle: Any = None) -> list[Any]:
        return nodes[:2]


@pytest.mark.parametrize("postprocess", [False, True], ids=["plain", "postprocessor"])
def test_a_llamaindex_engine_records_alike_through_spans_and_events(
    tmp_path: Path, postprocess: bool
) -> None:
    docs = [Document(text=t, metadata={"file_name": n}) for n, t in apps.TEXTS.items()]
    nodes = SentenceSplitter(chunk_size=48, chunk_overlap=0).get_nodes_from_documents(docs)
    index = VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8))
    engine = index.as_query_engine(
        similarity_top_k=4, llm=MockLLM(), node_postprocessors=[FirstTwo()] if postprocess else []
    )
    events = record(LlamaIndexPipeline(engine), tmp_path / "events")
    spans = record(OpenInferencePipeline(engine.query), tmp_path / "spans")
    assert sorted(spans.chunks) == sorted(events.chunks)  # one id scheme, one corpus
    for sample_id, by_event in events.records.items():
        by_span = spans.records[sample_id]
        assert [c.chunk_id for c in by_span.pool] == [c.chunk_id for c in by_event.pool]
        assert [c.chunk_id for c in by_span.context] == [c.chunk_id for c in by_event.context]
        assert len(by_span.context) == (2 if postprocess else 4)
        assert by_span.answer == by_event.answer
