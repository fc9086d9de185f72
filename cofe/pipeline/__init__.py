"""The built-in offline pipeline and its parts (parsing, chunking, retrieval, reranking, generation).

Heavy libraries (unstructured, llama-index, torch) are imported only when a
part is used, so ``import cofe.pipeline`` stays cheap.
"""

from cofe._cache import Cache, content_key, default_cache_dir
from cofe.pipeline._bounded import ParseLimits
from cofe.pipeline._chunk import Splitter, split_documents
from cofe.pipeline._default import DefaultPipeline, PipelineConfig
from cofe.pipeline._embed import Embedder, shared_embedder
from cofe.pipeline._generate import ExtractiveGenerator, OpenAIGenerator, split_sentences
from cofe.pipeline._offline import OfflineSetupError, offline_unstructured
from cofe.pipeline._parse import (
    SUPPORTED_SUFFIXES,
    ParseResult,
    documents_from_texts,
    parse_documents,
    parse_file,
)
from cofe.pipeline._rerank import CrossEncoderReranker, LLMReranker, MiniLMReranker, RerankFailed
from cofe.pipeline._retrieve import (
    BM25Retriever,
    DenseRetriever,
    HybridRetriever,
    RetrieverKind,
    reciprocal_rank_fusion,
)

__all__ = [
    "SUPPORTED_SUFFIXES",
    "BM25Retriever",
    "Cache",
    "CrossEncoderReranker",
    "DefaultPipeline",
    "DenseRetriever",
    "Embedder",
    "ExtractiveGenerator",
    "HybridRetriever",
    "LLMReranker",
    "MiniLMReranker",
    "OfflineSetupError",
    "OpenAIGenerator",
    "ParseLimits",
    "ParseResult",
    "PipelineConfig",
    "RerankFailed",
    "RetrieverKind",
    "Splitter",
    "content_key",
    "default_cache_dir",
    "documents_from_texts",
    "offline_unstructured",
    "parse_documents",
    "parse_file",
    "reciprocal_rank_fusion",
    "shared_embedder",
    "split_documents",
    "split_sentences",
]
