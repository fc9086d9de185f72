"""The verdict-validity pipeline written with LangChain or Haystack, as a team would write it,
recorded by cofe from its OpenInference spans.

Both read the same article files as the built-in pipeline (one document per file, named by
its file name as the eval set's ``source.doc`` is), split them by tokens (cl100k, overlap 20)
with the framework's own splitter keeping each chunk's offset, retrieve a pool of 30 with the
framework's BM25 retriever, give the first 4 to the generator through a prompt, and answer
with an *LLM to the framework* whose reply is extractive: the prompt's context sentence
sharing most content words with the question (cofe's :class:`ExtractiveGenerator` over the
context the prompt holds). Deterministic and offline.

- LangChain: ``TextLoader`` per file, ``RecursiveCharacterTextSplitter.from_tiktoken_encoder
  (chunk_size=size, chunk_overlap=20, add_start_index=True)``, ``BM25Retriever`` (k=30; words
  and single CJK characters as BM25 terms, like Haystack's default), an LCEL chain
  ``{"context": retriever | first 4 | format, "question": passthrough} | prompt | chat model |
  StrOutputParser``; the chat model is a ``BaseChatModel`` subclass.
- Haystack: ``DocumentSplitter(split_by="token", split_length=size, split_overlap=20,
  tokenizer_encoding="cl100k_base")`` (offsets in ``split_idx_start``), an
  ``InMemoryDocumentStore`` (its default BM25L; CJK characters are single terms),
  ``InMemoryBM25Retriever(top_k=30)``, a top-4 cut component, ``ChatPromptBuilder``, and a
  chat generator component (its class name ends in ``Generator``: an LLM span).

``build(kind, docs_dir, size)`` returns an :class:`OpenInferencePipeline` given the splitter's
output as ``corpus=`` and the loaded files as ``documents=``, so every chunk carries its offset
into the text cofe records and the gold (answer offsets) can be laid over the chunks.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # no analytics call home


def _offline_tiktoken() -> None:
    """tiktoken reads cl100k from llama-index's bundled cache instead of downloading it."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return
    try:
        import llama_index.core
    except ImportError:
        return
    cache = Path(llama_index.core.__file__).parent / "_static" / "tiktoken_cache"
    if cache.is_dir():
        os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)


_offline_tiktoken()

KINDS = ("langchain", "haystack")
POOL = 30  # the built-in pipeline's candidates
TOP_K = 4  # ... and top_k
OVERLAP = 20
ENCODING = "cl100k_base"  # the built-in pipeline's chunk sizes are cl100k tokens
INSTRUCTION = "Answer the question using only the context."
_CONTEXT = re.compile(r"Context:\n(.*)\n\nQuestion: (.*)\Z", re.S)
# BM25 terms: a run of letters/digits, or one CJK character (Haystack's default, for LangChain)
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TERM = re.compile(rf"[^\W{_CJK}]+|[{_CJK}]")


def bm25_terms(text: str) -> list[str]:
    return _TERM.findall(text.lower())


def extractive_reply(prompt: str) -> str:
    """The reply of the offline "LLM": the context sentence sharing most content words with
    the question, read from the prompt alone (what any LLM would be given)."""
    from cofe.pipeline._generate import ExtractiveGenerator
    from cofe.runlog import Chunk

    found = _CONTEXT.search(prompt)
    if found is None:
        return ""
    context, question = found.group(1), found.group(2).strip()
    return ExtractiveGenerator()(
        question, [Chunk(chunk_id="prompt", doc_id="prompt", text=context)]
    )


def _files(docs_dir: Path) -> list[Path]:
    return sorted(p for p in Path(docs_dir).iterdir() if p.suffix == ".txt")


# --- LangChain ---------------------------------------------------------------------------

try:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
except ImportError:  # the LangChain pipeline is unavailable
    BaseChatModel = None  # type: ignore[assignment,misc]

if BaseChatModel is not None:

    class ExtractiveChatModel(BaseChatModel):
        """A chat model (an LLM to LangChain) replying with :func:`extractive_reply`."""

        @property
        def _llm_type(self) -> str:
            return "extractive-chat"

        def _generate(
            self,
            messages: list[BaseMessage],
            stop: Any = None,
            run_manager: Any = None,
            **kwargs: Any,
        ) -> ChatResult:
            prompt = "\n".join(str(m.content) for m in messages)
            message = AIMessage(content=extractive_reply(prompt))
            return ChatResult(generations=[ChatGeneration(message=message)])


def langchain_pipeline(docs_dir: Path, size: int) -> Any:
    from langchain_community.document_loaders import TextLoader
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnablePassthrough
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from cofe.adapters import OpenInferencePipeline

    documents = []
    for path in _files(docs_dir):
        for doc in TextLoader(str(path), encoding="utf-8").load():
            doc.metadata["source"] = path.name  # as the eval set's source.doc names it
            documents.append(doc)
    splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name=ENCODING, chunk_size=size, chunk_overlap=OVERLAP, add_start_index=True
    )
    splits = splitter.split_documents(documents)
    retriever = BM25Retriever.from_documents(splits, k=POOL, preprocess_func=bm25_terms)
    prompt = ChatPromptTemplate.from_messages(
        [("system", INSTRUCTION), ("human", "Context:\n{context}\n\nQuestion: {question}")]
    )

    def format_docs(docs: list[Any]) -> str:
        return "\n\n".join(d.page_content for d in docs[:TOP_K])

    chain = (
        {"context": retriever | format_docs, "question": RunnablePassthrough()}
        | prompt
        | ExtractiveChatModel()
        | StrOutputParser()
    )
    config = {
        "splitter": "RecursiveCharacterTextSplitter.from_tiktoken_encoder",
        "chunk_size": size,
        "chunk_overlap": OVERLAP,
        "retriever": "BM25Retriever",
        "candidates": POOL,
        "top_k": TOP_K,
        "generator": "extractive chat model",
    }
    return OpenInferencePipeline(
        chain.invoke,
        corpus=splits,
        documents=documents,
        frameworks=["langchain"],
        top_k=TOP_K,
        name="langchain",
        config=config,
    )


# --- Haystack ----------------------------------------------------------------------------

try:  # components at module level: the instrumentor wraps their class by its import path
    from haystack import Document as HaystackDocument
    from haystack import component
    from haystack.dataclasses import ChatMessage
except ImportError:  # the Haystack pipeline is unavailable
    component = None  # type: ignore[assignment]

if component is not None:

    @component
    class TopK:
        """The first ``top_k`` documents of a ranked list (what goes to the prompt)."""

        def __init__(self, top_k: int) -> None:
            self.top_k = top_k

        @component.output_types(documents=list[HaystackDocument])
        def run(self, documents: list[HaystackDocument]) -> dict[str, Any]:
            return {"documents": documents[: self.top_k]}

    @component
    class ExtractiveChatGenerator:
        """A chat generator (an LLM span to the instrumentor) replying with
        :func:`extractive_reply`."""

        @component.output_types(replies=list[ChatMessage])
        def run(self, messages: list[ChatMessage]) -> dict[str, Any]:
            prompt = "\n".join(m.text or "" for m in messages)
            return {"replies": [ChatMessage.from_assistant(extractive_reply(prompt))]}


def haystack_pipeline(docs_dir: Path, size: int) -> Any:
    from haystack import Document, Pipeline
    from haystack.components.builders import ChatPromptBuilder
    from haystack.components.preprocessors import DocumentSplitter
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    from cofe.adapters import OpenInferencePipeline

    documents = [
        Document(content=p.read_text(encoding="utf-8"), meta={"file_name": p.name})
        for p in _files(docs_dir)
    ]
    splitter = DocumentSplitter(
        split_by="token", split_length=size, split_overlap=OVERLAP, tokenizer_encoding=ENCODING
    )
    if hasattr(splitter, "warm_up"):
        splitter.warm_up()
    splits = splitter.run(documents)["documents"]
    store = InMemoryDocumentStore(index=f"verdict-validity-{docs_dir}-{size}", shared=False)
    store.write_documents(splits)
    template = [
        ChatMessage.from_system(INSTRUCTION),
        ChatMessage.from_user(
            "Context:\n{% for d in documents %}{{ d.content }}\n\n{% endfor %}"
            "\nQuestion: {{ query }}"
        ),
    ]
    pipe = Pipeline()
    pipe.add_component("bm25", InMemoryBM25Retriever(document_store=store, top_k=POOL))
    pipe.add_component("top_k", TopK(TOP_K))
    pipe.add_component(
        "prompt", ChatPromptBuilder(template=template, required_variables=["query", "documents"])
    )
    pipe.add_component("llm", ExtractiveChatGenerator())
    pipe.connect("bm25", "top_k")
    pipe.connect("top_k", "prompt.documents")
    pipe.connect("prompt", "llm")

    def answer(query: str) -> str:
        result = pipe.run({"bm25": {"query": query}, "prompt": {"query": query}})
        return str(result["llm"]["replies"][0].text)

    config = {
        "splitter": "DocumentSplitter(split_by=token)",
        "chunk_size": size,
        "chunk_overlap": OVERLAP,
        "retriever": "InMemoryBM25Retriever",
        "candidates": POOL,
        "top_k": TOP_K,
        "generator": "extractive chat generator",
    }
    return OpenInferencePipeline(
        answer,
        corpus=splits,
        documents=documents,
        frameworks=["haystack"],
        top_k=TOP_K,
        name="haystack",
        config=config,
    )


def build(kind: str, docs_dir: Path, size: int) -> Any:
    """The ``kind`` pipeline (``langchain`` | ``haystack``) over the ``.txt`` files of
    ``docs_dir`` at ``size`` tokens a chunk, as an :class:`OpenInferencePipeline`."""
    if kind == "langchain":
        return langchain_pipeline(Path(docs_dir), size)
    if kind == "haystack":
        return haystack_pipeline(Path(docs_dir), size)
    raise ValueError(f"unknown pipeline {kind!r}; choose from {', '.join(KINDS)}")
