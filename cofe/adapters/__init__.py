"""Adapters: record what each stage of a user's pipeline produced.

- :class:`PythonPipeline` -- plain callables for chunk, retrieve, rerank, generate;
- :class:`LlamaIndexPipeline` -- an existing LlamaIndex query engine or retriever,
  observed through LlamaIndex's own instrumentation (imported lazily); RAPTOR trees
  (``llama-index-packs-raptor``: summaries are derived items) and ``PropertyGraphIndex``
  retrievers (triplets derived from their text chunks) included;
- :class:`OpenInferencePipeline` -- a callable ``query -> answer`` of a LangChain/LangGraph,
  Haystack, DSPy or LlamaIndex pipeline, recorded offline through its OpenInference spans
  (``docs/frameworks.md``); :func:`assemble_spans` is the one span->record code (the
  monitor's too): one trace's spans -> :class:`TraceRecord` (pool, context, answer, with
  the documents' texts), which converts to and from the run-log record (``sample()``,
  ``of_sample()``); :class:`RecordDraft` is that run-log record while an adapter builds it
  (``Trace`` and ``SpanTraceRecord`` are their old names); :func:`text_id` is a text's
  content id;
- any other language writes the run-log files directly (``docs/runlog.md``).
"""

from typing import TYPE_CHECKING, Any

from cofe.adapters._base import (
    Pipeline,
    PipelineShape,
    PythonPipeline,
    StagedPipeline,
    pipeline_shape,
)
from cofe.adapters._draft import ChunkRegistry, RecordDraft, StageFailed, Trace, text_id
from cofe.adapters._frameworks import UnsupportedFrameworkPipeline
from cofe.adapters._raptor import raptor_retriever
from cofe.adapters._span_assembly import (
    KIND,
    NOT_A_QUERY,
    Span,
    SpanLike,
    TraceRecord,
    documents_of_span,
    merged_ranks,
)
from cofe.adapters._span_assembly import Doc as SpanDoc
from cofe.adapters._span_assembly import TraceRecord as SpanTraceRecord  # its old name
from cofe.adapters._span_assembly import assemble as assemble_spans

if TYPE_CHECKING:
    from cofe.adapters._llamaindex import LlamaIndexPipeline, UnsupportedLlamaIndexPipeline
    from cofe.adapters._openinference import OpenInferencePipeline


def __getattr__(name: str) -> Any:
    if name in ("LlamaIndexPipeline", "UnsupportedLlamaIndexPipeline"):
        from cofe.adapters import _llamaindex

        return getattr(_llamaindex, name)
    if name == "OpenInferencePipeline":  # imports OpenTelemetry's SDK: only when used
        from cofe.adapters import _openinference

        return _openinference.OpenInferencePipeline
    raise AttributeError(name)


__all__ = [
    "KIND",
    "NOT_A_QUERY",
    "ChunkRegistry",
    "LlamaIndexPipeline",
    "OpenInferencePipeline",
    "Pipeline",
    "PipelineShape",
    "PythonPipeline",
    "RecordDraft",
    "Span",
    "SpanDoc",
    "SpanLike",
    "SpanTraceRecord",
    "StageFailed",
    "StagedPipeline",
    "Trace",
    "TraceRecord",
    "UnsupportedFrameworkPipeline",
    "UnsupportedLlamaIndexPipeline",
    "assemble_spans",
    "documents_of_span",
    "merged_ranks",
    "pipeline_shape",
    "raptor_retriever",
    "text_id",
]
