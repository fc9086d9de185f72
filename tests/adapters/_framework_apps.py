"""Framework pipelines as people write them (LangChain, LangGraph, Haystack, DSPy), offline.

Each builder returns what a user's ``--pipeline mod:factory`` returns -- a callable
``query -> answer`` -- plus the objects a test needs to say what the pipeline really did
(its retriever, called again without cofe). Embeddings are deterministic word hashes, the
LLMs echo their prompt (so an answer shows what the generator read), nothing touches the
network.
"""

import hashlib
import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

TEXTS = {
    "harbour.txt": " ".join(
        f"The harbour log entry {i} records that ship number {100 + i} left at dawn."
        for i in range(10)
    ),
    "garden.txt": " ".join(
        f"The garden notebook line {i} says the rose bed {i} was planted in spring."
        for i in range(10)
    ),
}
QUERIES = [f"When did ship number {100 + i} leave the harbour?" for i in range(4)]
_WORD = re.compile(r"\w+")
REWRITE = " or the garden rose bed in spring"  # what the LangGraph loop's rewriter appends


def word_vector(text: str, size: int = 64) -> list[float]:
    """A bag of hashed words, normalised: similar texts are near (unlike random fakes), so
    retrieval is meaningful and deterministic."""
    vector = [0.0] * size
    for word in _WORD.findall(text.lower()):
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % size] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def overlap(query: str, text: str) -> float:
    """How many of the query's words the text holds: the fake cross-encoder's score."""
    words = set(_WORD.findall(query.lower()))
    return float(len(words & set(_WORD.findall(text.lower()))))


def echo(prompt: str) -> str:
    return "ANSWER FROM: " + prompt


# --- LangChain ---------------------------------------------------------------------------


def langchain_parts() -> dict[str, Any]:
    """Splits, embeddings and the models the LangChain apps share."""
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    class WordEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [word_vector(t) for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return word_vector(text)

    class ScriptChat(BaseChatModel):
        """A chat model whose reply is a function of its prompt (echo by default)."""

        reply: Callable[[str], str] = echo

        @property
        def _llm_type(self) -> str:
            return "script-chat"

        def _generate(
            self,
            messages: list[BaseMessage],
            stop: Any = None,
            run_manager: Any = None,
            **kwargs: Any,
        ) -> ChatResult:
            prompt = "\n".join(str(m.content) for m in messages)
            message = AIMessage(content=self.reply(prompt))
            return ChatResult(generations=[ChatGeneration(message=message)])

    documents = [Document(page_content=t, metadata={"source": n}) for n, t in TEXTS.items()]
    splitter = RecursiveCharacterTextSplitter(chunk_size=80, chunk_overlap=0, add_start_index=True)
    splits = splitter.split_documents(documents)
    return {
        "documents": documents,
        "splits": splits,
        "embeddings": WordEmbeddings(),
        "chat": ScriptChat,
        "Document": Document,
    }


def _vector_store(parts: dict[str, Any]) -> Any:
    from langchain_core.vectorstores import InMemoryVectorStore

    return InMemoryVectorStore.from_documents(parts["splits"], parts["embeddings"])


def _format(docs: Sequence[Any]) -> str:
    return "\n\n".join(d.page_content for d in docs)


def _prompt() -> Any:
    from langchain_core.prompts import ChatPromptTemplate

    return ChatPromptTemplate.from_template("Answer from the context.\n{context}\n\nQ: {question}")


@dataclass
class App:
    """A pipeline as its factory returns it, and what the test checks it against."""

    fn: Callable[[str], Any]
    retriever: Any = None  # called again without cofe: the pool the pipeline really had
    corpus_texts: list[str] = field(default_factory=list)
    given: Callable[[Sequence[Any]], Sequence[Any]] = lambda docs: docs  # what the LLM got
    extra: dict[str, Any] = field(default_factory=dict)


def lcel(take: int | None = None, store: str = "memory") -> App:
    """``{"context": retriever | format_docs, "question": passthrough} | prompt | llm | parser``;
    ``take``: the chain formats only the first ``take`` documents; ``store``: ``memory``
    (``InMemoryVectorStore``), ``faiss`` or ``chroma`` (``langchain_chroma.Chroma``, an
    in-memory client)."""
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.runnables import RunnablePassthrough

    parts = _vector_store_parts()
    if store == "faiss":
        from langchain_community.vectorstores import FAISS

        parts["store"] = FAISS.from_documents(parts["splits"], parts["embeddings"])
    elif store == "chroma":
        os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
        from langchain_chroma import Chroma

        parts["store"] = Chroma.from_documents(
            parts["splits"], parts["embeddings"], collection_name=f"cofe-{os.getpid()}-{id(parts)}"
        )
    retriever = parts["store"].as_retriever(search_kwargs={"k": 4})
    cut = (lambda docs: docs[:take]) if take else (lambda docs: docs)
    chain = (
        {
            "context": retriever | (lambda docs: _format(cut(docs))),
            "question": RunnablePassthrough(),
        }
        | _prompt()
        | parts["chat"]()
        | StrOutputParser()
    )
    return App(chain.invoke, retriever, [d.page_content for d in parts["splits"]], cut)


def _vector_store_parts() -> dict[str, Any]:
    parts = langchain_parts()
    parts["store"] = _vector_store(parts)
    return parts


def retrieval_chain() -> App:
    """``create_retrieval_chain(retriever, create_stuff_documents_chain(llm, prompt))``."""
    from langchain_classic.chains import create_retrieval_chain
    from langchain_classic.chains.combine_documents import create_stuff_documents_chain
    from langchain_core.prompts import ChatPromptTemplate

    parts = _vector_store_parts()
    retriever = parts["store"].as_retriever(search_kwargs={"k": 3})
    prompt = ChatPromptTemplate.from_template("Context:\n{context}\n\nQuestion: {input}")
    chain = create_retrieval_chain(retriever, create_stuff_documents_chain(parts["chat"](), prompt))

    def answer(query: str) -> Any:
        return chain.invoke({"input": query})  # a dict: its "answer" is the answer

    return App(answer, retriever, [d.page_content for d in parts["splits"]])


def multi_query() -> App:
    """``MultiQueryRetriever.from_llm``: an LLM writes two more questions, each retrieved."""
    from langchain_classic.retrievers.multi_query import MultiQueryRetriever
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.runnables import RunnablePassthrough

    parts = _vector_store_parts()
    base = parts["store"].as_retriever(search_kwargs={"k": 2})

    def variants(prompt: str) -> str:  # the question, reworded twice
        question = prompt.rsplit("Original question:", 1)[-1].strip()
        return f"{question} ship\nthe garden notebook says the rose bed was planted in spring"

    retriever = MultiQueryRetriever.from_llm(retriever=base, llm=parts["chat"](reply=variants))
    chain = (
        {"context": retriever | _format, "question": RunnablePassthrough()}
        | _prompt()
        | parts["chat"]()
        | StrOutputParser()
    )
    return App(
        chain.invoke,
        retriever,
        [d.page_content for d in parts["splits"]],
        extra={"base": base, "variants": variants},
    )


def compression(top_n: int = 2) -> App:
    """``ContextualCompressionRetriever`` with a cross-encoder reranker (``CrossEncoderReranker``
    over a word-overlap cross-encoder: no model weights offline)."""
    from langchain_classic.retrievers import ContextualCompressionRetriever
    from langchain_classic.retrievers.document_compressors import CrossEncoderReranker
    from langchain_community.cross_encoders.base import BaseCrossEncoder
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.runnables import RunnablePassthrough

    class OverlapCrossEncoder(BaseCrossEncoder):
        def score(self, text_pairs: list[tuple[str, str]]) -> list[float]:
            return [overlap(q, t) for q, t in text_pairs]

    parts = _vector_store_parts()
    base = parts["store"].as_retriever(search_kwargs={"k": 6})
    retriever = ContextualCompressionRetriever(
        base_compressor=CrossEncoderReranker(model=OverlapCrossEncoder(), top_n=top_n),
        base_retriever=base,
    )
    chain = (
        {"context": retriever | _format, "question": RunnablePassthrough()}
        | _prompt()
        | parts["chat"]()
        | StrOutputParser()
    )
    return App(
        chain.invoke,
        base,
        [d.page_content for d in parts["splits"]],
        extra={"compressed": retriever},
    )


def parent_document() -> App:
    """``ParentDocumentRetriever``: small children searched, their parents returned."""
    from langchain_classic.retrievers import ParentDocumentRetriever
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.runnables import RunnablePassthrough
    from langchain_core.stores import InMemoryStore
    from langchain_core.vectorstores import InMemoryVectorStore
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    parts = langchain_parts()
    retriever = ParentDocumentRetriever(
        vectorstore=InMemoryVectorStore(parts["embeddings"]),
        docstore=InMemoryStore(),
        child_splitter=RecursiveCharacterTextSplitter(chunk_size=40, chunk_overlap=0),
        parent_splitter=RecursiveCharacterTextSplitter(
            chunk_size=160, chunk_overlap=0, add_start_index=True
        ),
        search_kwargs={"k": 3},
    )
    retriever.add_documents(parts["documents"])
    parents = [
        d.page_content for d in retriever.docstore.mget(list(retriever.docstore.yield_keys()))
    ]
    chain = (
        {"context": retriever | _format, "question": RunnablePassthrough()}
        | _prompt()
        | parts["chat"]()
        | StrOutputParser()
    )
    return App(chain.invoke, retriever, parents)


def ensemble() -> App:
    """``EnsembleRetriever`` of BM25 and vectors (reciprocal rank fusion)."""
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.runnables import RunnablePassthrough

    parts = _vector_store_parts()
    bm25 = BM25Retriever.from_documents(parts["splits"], k=3)
    dense = parts["store"].as_retriever(search_kwargs={"k": 3})
    retriever = EnsembleRetriever(retrievers=[bm25, dense], weights=[0.5, 0.5])
    chain = (
        {"context": retriever | _format, "question": RunnablePassthrough()}
        | _prompt()
        | parts["chat"]()
        | StrOutputParser()
    )
    return App(
        chain.invoke,
        retriever,
        [d.page_content for d in parts["splits"]],
        extra={"bm25": bm25, "dense": dense},
    )


class State(TypedDict):
    """The LangGraph loop's state (at module level: LangGraph resolves its annotations)."""

    question: str
    queries: list[str]
    documents: list[Any]
    answer: str


def agentic_loop() -> App:
    """A LangGraph loop: the LLM rewrites the question, the graph retrieves again, twice, then
    answers from every document it retrieved (corrective-RAG style)."""
    from langgraph.graph import END, StateGraph

    parts = _vector_store_parts()
    retriever = parts["store"].as_retriever(search_kwargs={"k": 2})
    rewriter = parts["chat"](
        reply=lambda prompt: prompt.rsplit("Rewrite:", 1)[-1].strip() + REWRITE
    )
    writer = parts["chat"]()

    def retrieve(state: State) -> dict[str, Any]:
        query = state["queries"][-1]
        return {"documents": state["documents"] + retriever.invoke(query)}

    def grade(state: State) -> str:
        return "rewrite" if len(state["queries"]) < 2 else "generate"

    def rewrite(state: State) -> dict[str, Any]:
        better = rewriter.invoke("Rewrite: " + state["queries"][-1]).content
        return {"queries": state["queries"] + [better]}

    def generate(state: State) -> dict[str, Any]:
        context = _format(state["documents"])
        reply = writer.invoke(f"Context:\n{context}\n\nQ: {state['question']}").content
        return {"answer": reply}

    graph = StateGraph(State)
    graph.add_node("retrieve", retrieve)
    graph.add_node("rewrite", rewrite)
    graph.add_node("generate", generate)
    graph.set_entry_point("retrieve")
    graph.add_conditional_edges("retrieve", grade, {"rewrite": "rewrite", "generate": "generate"})
    graph.add_edge("rewrite", "retrieve")
    graph.add_edge("generate", END)
    app = graph.compile()

    def answer(query: str) -> str:
        state = app.invoke({"question": query, "queries": [query], "documents": []})
        return str(state["answer"])

    return App(
        answer, retriever, [d.page_content for d in parts["splits"]], extra={"rewriter": rewriter}
    )


# --- Haystack ----------------------------------------------------------------------------

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # no analytics call home
try:  # components at module level: the instrumentor wraps their class by its import path
    from haystack import Document as HaystackDocument
    from haystack import component
except ImportError:  # the tests needing Haystack skip
    component = None

if component is not None:

    @component
    class WordTextEmbedder:
        @component.output_types(embedding=list[float])
        def run(self, text: str) -> dict[str, Any]:
            return {"embedding": word_vector(text)}

    @component
    class OverlapRanker:
        def __init__(self, top_k: int) -> None:
            self.top_k = top_k

        @component.output_types(documents=list[HaystackDocument])
        def run(
            self, query: str, documents: list[HaystackDocument], top_k: int | None = None
        ) -> dict[str, Any]:
            ranked = sorted(documents, key=lambda d: -overlap(query, d.content or ""))
            return {"documents": ranked[: top_k or self.top_k]}


def haystack_hybrid(base_url: str, top_k: int = 3) -> App:
    """BM25 and embedding retrievers over an ``InMemoryDocumentStore``, joined, a ranker
    (a word-overlap stand-in for a cross-encoder: no weights offline), a ``ChatPromptBuilder``
    and an OpenAI chat generator (``base_url``: a loopback server)."""
    from haystack import Document, Pipeline
    from haystack.components.builders import ChatPromptBuilder
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.components.joiners import DocumentJoiner
    from haystack.components.preprocessors import DocumentSplitter
    from haystack.components.retrievers.in_memory import (
        InMemoryBM25Retriever,
        InMemoryEmbeddingRetriever,
    )
    from haystack.dataclasses import ChatMessage
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from haystack.utils import Secret

    splitter = DocumentSplitter(split_by="word", split_length=14, split_overlap=0)
    splits = splitter.run([Document(content=t, meta={"file_name": n}) for n, t in TEXTS.items()])
    store = InMemoryDocumentStore()
    store.write_documents(
        [
            Document(content=d.content, meta=d.meta, embedding=word_vector(d.content or ""))
            for d in splits["documents"]
        ]
    )
    template = [
        ChatMessage.from_user(
            "Context:\n{% for d in documents %}{{ d.content }}\n{% endfor %}\nQuestion: {{ query }}"
        )
    ]
    pipe = Pipeline()
    pipe.add_component("embedder", WordTextEmbedder())
    pipe.add_component("bm25", InMemoryBM25Retriever(document_store=store, top_k=4))
    pipe.add_component("dense", InMemoryEmbeddingRetriever(document_store=store, top_k=4))
    pipe.add_component("joiner", DocumentJoiner())
    pipe.add_component("ranker", OverlapRanker(top_k=top_k))
    pipe.add_component(
        "prompt", ChatPromptBuilder(template=template, required_variables=["query", "documents"])
    )
    pipe.add_component(
        "llm",
        OpenAIChatGenerator(api_key=Secret.from_token("test"), model="echo", api_base_url=base_url),
    )
    pipe.connect("embedder.embedding", "dense.query_embedding")
    pipe.connect("bm25", "joiner")
    pipe.connect("dense", "joiner")
    pipe.connect("joiner", "ranker")
    pipe.connect("ranker", "prompt.documents")
    pipe.connect("prompt", "llm")

    def answer(query: str) -> str:
        result = pipe.run(
            {
                "embedder": {"text": query},
                "bm25": {"query": query},
                "ranker": {"query": query},
                "prompt": {"query": query},
            }
        )
        return str(result["llm"]["replies"][0].text)

    bm25, dense = pipe.get_component("bm25"), pipe.get_component("dense")

    def pool(query: str) -> tuple[list[Any], list[Any]]:
        return (
            bm25.run(query=query)["documents"],
            dense.run(query_embedding=word_vector(query))["documents"],
        )

    return App(
        answer,
        pool,
        [d.content for d in splits["documents"]],
        extra={"ranker": pipe.get_component("ranker"), "pipe": pipe},
    )


def echo_reply(messages: list[dict[str, Any]], request: dict[str, Any]) -> str:
    """The loopback OpenAI server's reply: the prompt, as the echo chat models give it."""
    return echo("\n".join(str(m.get("content")) for m in messages))


# --- DSPy --------------------------------------------------------------------------------


def dspy_rag(k: int = 3) -> App:
    """A DSPy RAG module: ``dspy.Retrieve`` over a retriever model, ``ChainOfThought`` with
    ``DummyLM`` (DSPy's own test LM)."""
    import dspy
    from dspy.utils import DummyLM

    named = [(name, chunk) for name, text in TEXTS.items() for chunk in _sentences(text)]
    passages = [chunk for _, chunk in named]

    def search(query: str, k: int = k, **kwargs: Any) -> list[Any]:
        ranked = sorted(passages, key=lambda p: -overlap(query, p))[:k]
        return [dspy.dsp.utils.dotdict({"long_text": p}) for p in ranked]

    class RAG(dspy.Module):
        def __init__(self) -> None:
            super().__init__()
            self.retrieve = dspy.Retrieve(k=k)
            self.respond = dspy.ChainOfThought("context, question -> answer")

        def forward(self, question: str) -> Any:
            context = self.retrieve(question).passages
            return self.respond(context=context, question=question)

    lm = DummyLM([{"reasoning": "From the log.", "answer": "At dawn."}] * 100)
    dspy.configure(lm=lm, rm=search)
    rag = RAG()

    def answer(query: str) -> str:
        return str(rag(question=query).answer)

    # the corpus= a user passes: the passages with the file each came from
    corpus = [{"text": chunk, "metadata": {"source": name}} for name, chunk in named]
    return App(answer, search, passages, extra={"rag": rag, "corpus": corpus})


def _sentences(text: str) -> list[str]:
    return [s.strip() + "." for s in text.split(".") if s.strip()]


# --- running them as cofe run does ---------------------------------------------------------


def write_samples(path: Any, n: int = 3) -> Any:
    from cofe import EvalSample, write_evalset

    samples = [
        EvalSample(
            id=f"q{i}",
            query=QUERIES[i],
            coarse_keywords=["harbour log"],
            fine_keywords=[[str(100 + i)]],
            reference_answer="At dawn.",
            source={"doc": "harbour.txt"},
        )
        for i in range(n)
    ]
    write_evalset(path, samples)
    return path


def record(pipeline: Any, tmp_path: Any, n: int = 3, **options: Any) -> Any:
    """``run_pipeline`` over ``n`` samples, the run read back (no problem allowed)."""
    from cofe import read_run
    from cofe.runner import run_pipeline

    evalset = write_samples(tmp_path / "evalset.jsonl", n)
    options.setdefault("concurrency", 2)
    run_pipeline(pipeline, evalset, tmp_path / "run", progress=False, **options)
    run = read_run(tmp_path / "run")
    assert run.problems == []
    return run


def texts(run: Any, ranked: Any) -> list[str]:
    return [run.chunks[c.chunk_id].text for c in ranked or ()]


def contents(docs: Sequence[Any]) -> list[str]:
    """The texts of LangChain or Haystack documents (or DSPy passages)."""
    out = []
    for doc in docs:
        text = getattr(doc, "page_content", None) or getattr(doc, "content", None)
        out.append(text if isinstance(text, str) else getattr(doc, "long_text", doc))
    return out


def interleaved(*lists: Sequence[str]) -> list[str]:
    """Ranked lists merged rank by rank, each text once: how cofe records several retrievals."""
    out: list[str] = []
    for rank in range(max(map(len, lists), default=0)):
        for texts_ in lists:
            if rank < len(texts_) and texts_[rank] not in out:
                out.append(texts_[rank])
    return out


def tool_agent() -> App:
    """A tool-calling agent (``langchain.agents.create_agent``, a LangGraph graph) with a
    retriever tool: the model searches twice (the question, then a rewrite), then answers
    from the tool messages."""
    from langchain.agents import create_agent
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import create_retriever_tool

    parts = _vector_store_parts()
    retriever = parts["store"].as_retriever(search_kwargs={"k": 2})
    tool = create_retriever_tool(retriever, "search_logs", "Search the harbour and garden logs.")

    class ToolChat(BaseChatModel):
        """Searches for the question, then for its rewrite, then answers with its prompt."""

        @property
        def _llm_type(self) -> str:
            return "tool-chat"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(
            self,
            messages: list[BaseMessage],
            stop: Any = None,
            run_manager: Any = None,
            **kwargs: Any,
        ) -> ChatResult:
            question = str(messages[0].content)
            searched = sum(isinstance(m, ToolMessage) for m in messages)
            if searched < 2:
                query = question if searched == 0 else question + REWRITE
                call = {"name": "search_logs", "args": {"query": query}, "id": f"call{searched}"}
                message = AIMessage(content="", tool_calls=[call])
            else:
                message = AIMessage(content=echo("\n".join(str(m.content) for m in messages)))
            return ChatResult(generations=[ChatGeneration(message=message)])

    agent = create_agent(ToolChat(), [tool])

    def answer(query: str) -> str:
        state = agent.invoke({"messages": [{"role": "user", "content": query}]})
        return str(state["messages"][-1].content)

    return App(answer, retriever, [d.page_content for d in parts["splits"]])
