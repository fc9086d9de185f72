"""The tiny replay fixture as framework apps: LangChain (LCEL), LlamaIndex, Haystack.

Each factory takes ``fixed_documents`` (None when ``cofe run`` records it) and builds its
retriever from it when given, as docs/replay.md asks of an app. The retriever of the recorded
run is scripted per question (as in ``_tiny``); the "LLM" is a stand-in that answers with
cofe's extractive generator over the documents its prompt holds, so an answer depends on
what reached the model and nothing touches the network. ``SEEN`` keeps the last prompt's
documents: what the app's model was really given.
"""

from __future__ import annotations

from typing import Any

from cofe.pipeline import ExtractiveGenerator
from cofe.runlog import Chunk
from tests.replay import _tiny

SEP = "\n\n"
SEEN: list[list[str]] = []
_extract = ExtractiveGenerator()


def reply(prompt: str) -> str:
    """The stand-in LLM: the prompt is ``CONTEXT\\n\\nQuestion: Q``; its documents joined by SEP."""
    context, _, question = prompt.rpartition(f"{SEP}Question: ")
    texts = [t for t in context.split(SEP) if t]
    SEEN.append(texts)
    chunks = [Chunk(chunk_id=f"p{k}", doc_id="p", text=t) for k, t in enumerate(texts)]
    return _extract(question, chunks)


def _by_id() -> dict[str, Chunk]:
    return {c.chunk_id: c for c in _tiny.chunks()}


def _pools() -> dict[str, list[Chunk]]:
    by_id = _by_id()
    return {q: [by_id[i] for i in pool] for q, _, _, pool in _tiny.QUESTIONS.values()}


def langchain_documents() -> list[Any]:
    """The corpus as LangChain documents (what the recorded run reads as its chunks)."""
    from langchain_core.documents import Document

    return [
        Document(page_content=c.text, metadata={"source": c.doc_id, "start_index": c.start})
        for c in _tiny.chunks()
    ]


def langchain_app(fixed_documents: Any = None) -> Any:
    """``{"context": retriever | format, "question": passthrough} | prompt | llm | parser``."""
    from langchain_core.documents import Document
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import PromptTemplate
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough

    pools = _pools()

    class Scripted(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            return [
                Document(page_content=c.text, metadata={"source": c.doc_id, "start_index": c.start})
                for c in pools[query]
            ]

    retriever = fixed_documents.langchain_retriever() if fixed_documents else Scripted()
    prompt = PromptTemplate.from_template("{context}" + SEP + "Question: {question}")
    chain = (
        {
            "context": retriever
            | RunnableLambda(lambda docs: SEP.join(d.page_content for d in docs)),
            "question": RunnablePassthrough(),
        }
        | prompt
        | RunnableLambda(lambda value: reply(value.to_string()))
        | StrOutputParser()
    )
    return chain.invoke


def ignores_the_seam(fixed_documents: Any = None) -> Any:
    """Takes the keyword and builds its own retriever anyway: the replay must refuse it."""
    return langchain_app(None)


def llama_index_app(fixed_documents: Any = None) -> Any:
    """A LlamaIndex query engine whose first node postprocessor is cofe's (replacing the
    retrieved nodes); its LLM is the stand-in."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
    from llama_index.core.llms.callbacks import llm_completion_callback
    from llama_index.core.prompts import PromptTemplate
    from llama_index.core.schema import TextNode

    class StandIn(CustomLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="stand-in")

        @llm_completion_callback()
        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            return CompletionResponse(text=reply(prompt))

        @llm_completion_callback()
        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            raise NotImplementedError

    nodes = [TextNode(text=c.text, id_=c.chunk_id) for c in _tiny.chunks()]
    index = VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8))
    post = [fixed_documents.llama_index_postprocessor()] if fixed_documents else []
    engine = index.as_query_engine(
        llm=StandIn(),
        similarity_top_k=2,
        node_postprocessors=post,
        text_qa_template=PromptTemplate("{context_str}" + SEP + "Question: {query_str}"),
    )
    return engine.query


def haystack_app(fixed_documents: Any = None) -> Any:
    """A Haystack pipeline: retriever -> prompt builder -> the stand-in generator."""
    from haystack import Pipeline, component
    from haystack.components.builders import PromptBuilder
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.dataclasses import Document
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    @component
    class StandIn:
        @component.output_types(replies=list[str])
        def run(self, prompt: str) -> dict[str, Any]:
            return {"replies": [reply(prompt)]}

    # reachable by module.ClassName, as Haystack's registry and its instrumentor expect: a
    # later test instrumenting Haystack in this process must not fail on it
    globals()["StandIn"] = StandIn

    store = InMemoryDocumentStore()
    store.write_documents([Document(content=c.text, id=c.chunk_id) for c in _tiny.chunks()])
    retriever = (
        fixed_documents.haystack_retriever()
        if fixed_documents
        else InMemoryBM25Retriever(store, top_k=2)
    )
    template = "{% for d in documents %}{{ d.content }}" + SEP + "{% endfor %}Question: {{ q }}"
    pipe = Pipeline()
    pipe.add_component("retriever", retriever)
    pipe.add_component("prompt", PromptBuilder(template=template, required_variables=["q"]))
    pipe.add_component("llm", StandIn())
    pipe.connect("retriever.documents", "prompt.documents")
    pipe.connect("prompt.prompt", "llm.prompt")

    def ask(query: str) -> Any:
        return pipe.run({"retriever": {"query": query}, "prompt": {"q": query}})

    return ask
