"""Replaying a framework pipeline through its own public seams.

A LangChain / LangGraph, LlamaIndex or Haystack pipeline is recorded as one call (``query ->
answer``); cofe cannot take it apart. Its factory can hand cofe the one seam that matters: it
takes a ``fixed_documents`` keyword (``None`` in ``cofe run``) and, when given one, builds the
pipeline with the retriever taken from it::

    def build(fixed_documents=None):
        retriever = (
            fixed_documents.langchain_retriever() if fixed_documents else store.as_retriever()
        )
        return ({"context": retriever | format_docs, "question": RunnablePassthrough()}
                | prompt | llm | StrOutputParser()).invoke

The retriever it gets is the framework's own kind -- a LangChain ``BaseRetriever``, a LlamaIndex
``BaseRetriever`` or node postprocessor, a Haystack component with a ``documents`` output --
that returns the documents cofe sets before each replay (the oracle chunks, as the framework's
documents). Everything after the retriever is the app's, unchanged; nothing private is patched.
The framework classes are defined on first use: importing cofe.replay imports no framework.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from cofe.runlog import Chunk

SEAM_KEYWORD = "fixed_documents"


class FixedDocuments:
    """The documents a replayed framework pipeline's retriever returns (set per replay)."""

    def __init__(self) -> None:
        self.chunks: list[Chunk] = []
        self.used = False  # a retriever built from it was called: the seam is wired

    def take(self) -> list[Chunk]:
        self.used = True
        return list(self.chunks)

    def langchain_retriever(self) -> Any:
        """A ``langchain_core`` ``BaseRetriever`` (LangChain and LangGraph)."""
        return _langchain_class()(fixed=self)

    def llama_index_retriever(self) -> Any:
        """A LlamaIndex ``BaseRetriever`` (``RetrieverQueryEngine(retriever=...)``)."""
        return _llama_retriever_class()(self)

    def llama_index_postprocessor(self) -> Any:
        """A LlamaIndex node postprocessor replacing the retrieved nodes
        (``index.as_query_engine(node_postprocessors=[...])``, put first)."""
        return _llama_postprocessor_class()(fixed=self)

    def haystack_retriever(self) -> Any:
        """A Haystack component with a ``documents`` output, in place of the retriever."""
        return _haystack_class()(self)


def _meta(chunk: Chunk) -> dict[str, Any]:
    # what a prompt template or a citation step may read; the text is the chunk's, exactly
    meta: dict[str, Any] = {"source": chunk.doc_id, "cofe_chunk_id": chunk.chunk_id}
    if chunk.start is not None:
        meta["start_index"] = chunk.start
    return meta


@cache
def _langchain_class() -> type:
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    class CofeFixedRetriever(BaseRetriever):
        """Returns the documents cofe set for this replay, whatever the query."""

        fixed: Any

        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            return [Document(page_content=c.text, metadata=_meta(c)) for c in self.fixed.take()]

    return CofeFixedRetriever


def _llama_nodes(fixed: FixedDocuments) -> list[Any]:
    from llama_index.core.schema import NodeWithScore, TextNode

    chunks = fixed.take()
    # scores falling with the rank: a later step that sorts by score keeps cofe's order
    out = []
    for k, c in enumerate(chunks):
        meta = _meta(c)
        # the metadata is for the app's code, not the prompt: the LLM reads the text alone
        node = TextNode(
            text=c.text,
            id_=c.chunk_id,
            metadata=meta,
            excluded_llm_metadata_keys=list(meta),
            excluded_embed_metadata_keys=list(meta),
        )
        out.append(NodeWithScore(node=node, score=1.0 - k / 1000))
    return out


@cache
def _llama_retriever_class() -> type:
    from llama_index.core.retrievers import BaseRetriever

    class CofeFixedNodes(BaseRetriever):
        def __init__(self, fixed: FixedDocuments) -> None:
            self._fixed = fixed
            super().__init__()

        def _retrieve(self, query_bundle: Any) -> list[Any]:
            return _llama_nodes(self._fixed)

    return CofeFixedNodes


@cache
def _llama_postprocessor_class() -> type:
    from llama_index.core.postprocessor.types import BaseNodePostprocessor

    class CofeReplaceNodes(BaseNodePostprocessor):
        fixed: Any = None

        def _postprocess_nodes(self, nodes: list[Any], query_bundle: Any = None) -> list[Any]:
            return _llama_nodes(self.fixed)

    return CofeReplaceNodes


@cache
def _haystack_class() -> type:
    from haystack import Document, component

    @component
    class CofeFixedDocuments:
        def __init__(self, fixed: FixedDocuments) -> None:
            self.fixed = fixed

        @component.output_types(documents=list[Document])
        def run(self, query: str = "", top_k: int | None = None) -> dict[str, Any]:
            docs = [Document(content=c.text, meta=_meta(c)) for c in self.fixed.take()]
            return {"documents": docs}

    # Haystack registers every component class, and OpenInference's Haystack instrumentor
    # wraps each registered class by ``module.ClassName``: a class defined here and not
    # reachable by that name made every later recording of a Haystack pipeline in this
    # process fail with an AttributeError. Reachable by its name, it is wrapped like any other.
    globals()[CofeFixedDocuments.__name__] = CofeFixedDocuments
    return CofeFixedDocuments


def takes_seam(factory: Any) -> bool:
    """Whether a ``--pipeline`` factory accepts the ``fixed_documents`` keyword."""
    if not callable(factory):
        return False
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False
    return SEAM_KEYWORD in parameters


def seam_generator(
    factory: Callable[..., Any], spec: str
) -> tuple[Callable[[str, Sequence[Chunk]], str], FixedDocuments]:
    """``generate(question, contexts) -> answer``: the app built once around a fixed-documents
    retriever, each call setting its documents and asking the app the question."""
    from cofe.adapters import OpenInferencePipeline

    fixed = FixedDocuments()
    app = factory(**{SEAM_KEYWORD: fixed})
    call = getattr(app, "invoke", None) if not inspect.isroutine(app) else None
    ask = call if callable(call) else app
    if not callable(ask):
        raise TypeError(
            f"{spec}(fixed_documents=...) returned {type(app).__name__}, not a callable"
        )

    def generate(question: str, contexts: Sequence[Chunk]) -> str:
        fixed.chunks = list(contexts)
        fixed.used = False
        result = OpenInferencePipeline.answer_of(ask(question))
        if not fixed.used:
            # the app answered without the retriever cofe gave it: the replay would be the run
            raise RuntimeError(
                f"{spec}: the pipeline never called the retriever built from fixed_documents: "
                "build the app's retriever from it"
            )
        return result

    return generate, fixed
