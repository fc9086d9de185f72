"""One trace's OpenInference spans -> what each stage produced for that query.

The span->record code is one, shared with ``cofe run``'s recording of LangChain,
LangGraph, Haystack, DSPy and LlamaIndex pipelines (:func:`cofe.adapters.assemble_spans`):
a pipeline evaluated offline and monitored in production is read the same way. The pool is
what the innermost retrievers returned (several merged rank by rank), the context what the
generating prompt holds, the answer the generating LLM's output; what is missing is said in
``problems``.
"""

from __future__ import annotations

from cofe.adapters import NOT_A_QUERY
from cofe.adapters import SpanDoc as Doc
from cofe.adapters import SpanTraceRecord as TraceRecord
from cofe.adapters import assemble_spans as assemble

__all__ = ["NOT_A_QUERY", "Doc", "TraceRecord", "assemble"]
