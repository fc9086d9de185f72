"""Chunking with LlamaIndex's own splitters (sentence- or token-bounded windows)."""

from __future__ import annotations

from enum import StrEnum

from cofe._cache import Cache, content_key, text_digests
from cofe.runlog import Chunk, ParsedDocument


class Splitter(StrEnum):
    SENTENCE = "sentence"
    TOKEN = "token"


def _make_splitter(splitter: Splitter, chunk_size: int, chunk_overlap: int):
    from llama_index.core.node_parser import SentenceSplitter, TokenTextSplitter

    cls = SentenceSplitter if splitter is Splitter.SENTENCE else TokenTextSplitter
    return cls(chunk_size=chunk_size, chunk_overlap=chunk_overlap, include_metadata=False)


def check_chunking(chunk_size: int, chunk_overlap: int) -> None:
    if chunk_size < 16:
        raise ValueError(f"chunk size must be at least 16 tokens, not {chunk_size}")
    if not 0 <= chunk_overlap < chunk_size:
        raise ValueError(
            f"chunk overlap must be between 0 and the chunk size ({chunk_size}), not {chunk_overlap}"
        )


def split_documents(
    documents: list[ParsedDocument],
    *,
    splitter: Splitter = Splitter.SENTENCE,
    chunk_size: int = 256,
    chunk_overlap: int = 20,
    cache: Cache | None = None,
) -> list[Chunk]:
    """Chunks of every document (ids ``doc_id#i``), with character offsets when found."""
    check_chunking(chunk_size, chunk_overlap)
    key = content_key("chunks-1", splitter.value, chunk_size, chunk_overlap,
                      [d.doc_id for d in documents], text_digests(d.text for d in documents))  # fmt: skip
    if cache is not None:
        stored = cache.get_json("chunks", key)
        if stored is not None:
            return [Chunk.model_validate(c) for c in stored]
    from llama_index.core import Document

    parser = _make_splitter(splitter, chunk_size, chunk_overlap)
    chunks: list[Chunk] = []
    for doc in documents:
        nodes = parser.get_nodes_from_documents([Document(text=doc.text, id_=doc.doc_id)])
        for i, node in enumerate(nodes):
            text = node.get_content()
            start, end = node.start_char_idx, node.end_char_idx
            if start is None or end is None or doc.text[start:end] != text:
                start = end = (
                    None  # llama-index could not place it: no offsets rather than wrong ones
                )
            chunks.append(
                Chunk(
                    chunk_id=f"{doc.doc_id}#{i}", doc_id=doc.doc_id, text=text, start=start, end=end
                )
            )
    if cache is not None:
        cache.put_json("chunks", key, [c.model_dump(mode="json") for c in chunks])
    return chunks
