"""Adapters: record what each stage of a user's pipeline produced.

- :class:`PythonPipeline` -- plain callables for chunk, retrieve, rerank, generate;
- :class:`LlamaIndexPipeline` -- an existing LlamaIndex query engine or retriever,
  observed through LlamaIndex's own instrumentation (imported lazily); RAPTOR trees
  (``llama-index-packs-raptor``: summaries are derived items) and ``PropertyGraphIndex``
  retrievers (triplets derived from their text chunks) included;
- any other language writes the run-log files directly (``docs/runlog.md``).
"""

from typing import TYPE_CHECKING

from cofe.adapters._base import (
    Pipeline,
    PipelineShape,
    PythonPipeline,
    StagedPipeline,
    pipeline_shape,
)
from cofe.adapters._raptor import raptor_retriever
from cofe.adapters._trace import ChunkRegistry, StageFailed, Trace

if TYPE_CHECKING:
    from cofe.adapters._llamaindex import LlamaIndexPipeline, UnsupportedLlamaIndexPipeline


def __getattr__(name: str):
    if name in ("LlamaIndexPipeline", "UnsupportedLlamaIndexPipeline"):
        from cofe.adapters import _llamaindex

        return getattr(_llamaindex, name)
    raise AttributeError(name)


__all__ = [
    "ChunkRegistry",
    "LlamaIndexPipeline",
    "Pipeline",
    "PipelineShape",
    "PythonPipeline",
    "StageFailed",
    "StagedPipeline",
    "Trace",
    "UnsupportedLlamaIndexPipeline",
    "pipeline_shape",
    "raptor_retriever",
]
