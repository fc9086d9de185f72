"""A user's RAG service, as it would be written without cofe: LlamaIndex (BM25 retriever, a
reranker that reports itself the way LlamaIndex's integration rerankers do, an OpenAI-like
LLM), instrumented with OpenInference and exporting spans with the OpenTelemetry SDK's
OTLP/HTTP exporter. Nothing in this module imports cofe."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from llama_index.core import Document, get_response_synthesizer
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.events.rerank import ReRankEndEvent, ReRankStartEvent
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.query_engine import RetrieverQueryEngine

dispatcher = get_dispatcher(__name__)
_WORD = re.compile(r"\w+")


class OverlapReranker(BaseNodePostprocessor):
    """Keeps the ``top_n`` nodes sharing most words with the query; ``drop_best`` keeps the
    others instead (a reranker that drops the evidence)."""

    top_n: int = 2
    drop_best: bool = False

    def _postprocess_nodes(self, nodes, query_bundle=None):
        dispatcher.event(
            ReRankStartEvent(
                query=query_bundle, nodes=nodes, top_n=self.top_n, model_name="word-overlap"
            )
        )
        words = set(_WORD.findall(query_bundle.query_str.lower())) if query_bundle else set()
        ranked = sorted(
            nodes, key=lambda n: -len(words & set(_WORD.findall(n.node.get_content().lower())))
        )
        kept = ranked[self.top_n :] if self.drop_best else ranked[: self.top_n]
        dispatcher.event(ReRankEndEvent(nodes=kept))
        return kept


def extractive_reply(messages, request) -> str:
    """What the scripted LLM answers: the context sentence sharing most words with the query."""
    prompt = messages[-1]["content"]
    query = prompt.rsplit("Query:", 1)[-1].split("Answer:")[0]
    words = set(_WORD.findall(query.lower()))
    sentences = re.split(r"(?<=[.!?])\s+", prompt.split("Query:")[0])
    best = max(sentences, key=lambda s: len(words & set(_WORD.findall(s.lower()))))
    return best.strip()


def build_engine(
    texts: dict[str, str],
    llm_base_url: str,
    *,
    top_k: int = 3,
    keep: int = 2,
    drop_best: bool = False,
) -> RetrieverQueryEngine:
    from llama_index.llms.openai_like import OpenAILike
    from llama_index.retrievers.bm25 import BM25Retriever

    documents = [
        Document(text=t, id_=name, metadata={"file_name": name}) for name, t in texts.items()
    ]
    nodes = SentenceSplitter(chunk_size=64, chunk_overlap=0).get_nodes_from_documents(documents)
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=top_k)
    llm = OpenAILike(
        model="scripted",
        api_base=llm_base_url,
        api_key="none",
        is_chat_model=True,
        max_retries=0,
        timeout=10,
    )
    return RetrieverQueryEngine(
        retriever,
        get_response_synthesizer(llm=llm),
        node_postprocessors=[OverlapReranker(top_n=keep, drop_best=drop_best)],
    )


def instrument(endpoint: str):
    """OpenInference on LlamaIndex, exporting over OTLP/HTTP in batches; returns what to
    shut down (the provider flushes on shutdown)."""
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import SpanLimits, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # the SDK's default of 128 attributes per span would drop retrieved documents
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=10_000))
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint), schedule_delay_millis=100)
    )
    instrumentor = LlamaIndexInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    return provider, instrumentor


class QueryService:
    """``POST / {"query": ...}`` -> ``{"answer": ...}``: the service a canary sends queries to."""

    def __init__(self, engine) -> None:
        outer = self
        self.engine = engine

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                answer = str(outer.engine.query(body["query"]))
                reply = json.dumps({"answer": answer}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
