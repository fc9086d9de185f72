"""The chunk corpus and the documents of a LlamaIndex pipeline, read before the first query.

Chunk-level measures (nDCG, chunk recall, "not in the corpus") need *every*
chunk the retriever could have returned, not only those it did return. They
are read, in order, from ``nodes=``, ``index=``'s docstore, the docstore of
the index behind the engine's retriever (found through the retriever, so
``index=`` is optional), and the vector store when the docstore is empty
(an external store such as Qdrant or Chroma keeps the text itself). A
pipeline whose corpus cannot be read at all is refused before the first
query: the scores would be silently wrong.

Documents are named by a *document key*: ``doc_key=`` (a metadata key or a
function of the node), else the ``file_name`` metadata that
``SimpleDirectoryReader`` sets, else ``file_path``, else the node's
``ref_doc_id``. ``SimpleDirectoryReader`` and ``load_index_from_storage``
give random document ids, which an eval set's ``source.doc`` never names;
file names are what it names.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from cofe._errors import ConfigurationError
from cofe.runlog import Chunk, ParsedDocument

DocKey = str | Callable[[Any], str | None] | None
UNKNOWN_DOC = "(unknown)"


class UnsupportedLlamaIndexPipeline(ConfigurationError):
    """The pipeline cannot be recorded faithfully; the message says what to pass instead."""


def doc_key_of(node: Any, doc_key: DocKey) -> str:
    """The document a node (or a LlamaIndex document) belongs to, as the run names it."""
    meta = getattr(node, "metadata", None) or {}
    if callable(doc_key):
        key = doc_key(node)
        if key:
            return str(key)
    elif isinstance(doc_key, str) and meta.get(doc_key):
        return str(meta[doc_key])
    for name in ("file_name", "file_path"):
        if meta.get(name):
            return str(meta[name])
    return str(getattr(node, "ref_doc_id", None) or UNKNOWN_DOC)


def node_chunk(
    node: Any, doc_key: DocKey = None, span: tuple[int | None, int | None] | None = None
) -> Chunk:
    """A LlamaIndex node as a chunk, with an id made from its content (stable across rebuilds).
    ``span``: the node's offsets in its document when they are not its own (see
    :func:`absolute_spans`)."""
    text = node.get_content()
    doc = doc_key_of(node, doc_key)
    if span is None:
        span = getattr(node, "start_char_idx", None), getattr(node, "end_char_idx", None)
    start, end = span
    digest = hashlib.sha1(text.encode()).hexdigest()[:10]
    where = f"@{start}" if start is not None else ""
    meta = getattr(node, "metadata", None) or {}
    keep = {k: v for k, v in meta.items() if isinstance(v, str | int | float | bool)}
    return Chunk(
        chunk_id=f"{doc}{where}:{digest}",
        doc_id=doc,
        text=text,
        start=start if start is not None and start >= 0 else None,
        end=end if end is not None and end >= 0 else None,
        meta=keep,
    )


def document_record(doc: Any, doc_key: DocKey = None) -> ParsedDocument:
    meta = getattr(doc, "metadata", None) or {}
    key = doc_key_of(doc, doc_key)
    if key == UNKNOWN_DOC:  # a LlamaIndex Document is its own ref doc
        key = str(doc.doc_id)
    return ParsedDocument(
        doc_id=key,
        source=str(meta.get("file_path") or meta.get("file_name") or key),
        text=doc.get_content(),
        meta={"reader": "llama-index"},
    )


def rebuilt_documents(chunks: Sequence[Chunk]) -> list[ParsedDocument]:
    """Documents put back together from their chunks' offsets, when ``documents=`` was not given
    (a persisted index keeps nodes, not documents). Gaps between chunks are blanks, so every
    chunk's offsets stay true; a document whose chunks carry no offsets is their concatenation
    (offsets then unknown). The scorer needs a document per name to find a sample's source."""
    by_doc: dict[str, list[Chunk]] = defaultdict(list)
    for chunk in chunks:
        by_doc[chunk.doc_id].append(chunk)
    documents = []
    for doc_id, members in by_doc.items():
        placed = [
            (c.start, c.end, c.text) for c in members if c.start is not None and c.end is not None
        ]
        if placed:
            size = max(end for _, end, _ in placed)
            text = [" "] * size
            for start, end, chunk_text in placed:
                # an offset-less or inconsistent chunk never corrupts the others
                if end - start == len(chunk_text):
                    text[start:end] = chunk_text
            body = "".join(text)
        else:
            body = "\n\n".join(c.text for c in members)
        meta = {"reader": "llama-index", "rebuilt_from_chunks": True}
        documents.append(ParsedDocument(doc_id=doc_id, source=doc_id, text=body, meta=meta))
    return documents


def _index_of(retriever: Any) -> Any:
    """The index behind a retriever, through the attributes LlamaIndex's retrievers keep it in."""
    for name in ("_index", "index"):
        found = getattr(retriever, name, None)
        if found is not None and hasattr(found, "docstore"):
            return found
    return None


def retrievers_of(retriever: Any) -> list[Any]:
    """The retriever and the retrievers inside it (fusion, auto-merging, router...)."""
    out, todo, seen = [], [retriever], set()
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        out.append(current)
        for name in ("_retrievers", "retrievers", "sub_retrievers"):  # fusion, router, graph
            inner = getattr(current, name, None)
            if isinstance(inner, dict):
                todo.extend(inner.values())
            elif isinstance(inner, list | tuple):
                todo.extend(r[0] if isinstance(r, tuple) else r for r in inner)
        for name in ("_vector_retriever", "_retriever", "retriever"):
            todo.append(getattr(current, name, None))
    return out


def vector_store_nodes(vector_store: Any) -> list[Any] | None:
    """Every node an external vector store holds, or None when it cannot list them.

    Qdrant's ``get_nodes`` stops at 9,999 points unless given a limit: the count is asked
    first, and a short read is refused rather than taken for the whole corpus."""
    if not getattr(vector_store, "stores_text", False):
        return None
    client, collection = (
        getattr(vector_store, "client", None),
        getattr(vector_store, "collection_name", None),
    )
    expected = None
    try:
        if client is not None and collection and hasattr(client, "count"):
            expected = client.count(collection_name=collection, exact=True).count
            nodes = vector_store.get_nodes(limit=max(expected, 1))
        else:
            nodes = vector_store.get_nodes()
    except (NotImplementedError, TypeError):
        return None
    if expected is not None and len(nodes) != expected:
        raise UnsupportedLlamaIndexPipeline(
            f"the vector store holds {expected} nodes but listed {len(nodes)}: the chunk corpus "
            "would be incomplete; pass nodes= (every node you indexed)"
        )
    return list(nodes)


def index_nodes(index: Any) -> list[Any]:
    """Every node of an index: its docstore, else its vector store."""
    docs = list(getattr(index.docstore, "docs", {}).values())
    if docs:
        return docs
    store = getattr(index, "vector_store", None)
    listed = vector_store_nodes(store) if store is not None else None
    return listed or []


def corpus_nodes(
    nodes: Sequence[Any] | None, index: Any, retriever: Any
) -> tuple[list[Any], str | None]:
    """(every node of the corpus, None) or ([], why it cannot be read)."""
    if nodes is not None:
        return list(nodes), None
    found: list[Any] = []
    seen: set[str] = set()

    def add(more: Iterable[Any]) -> None:
        for node in more:
            if node.node_id not in seen:
                seen.add(node.node_id)
                found.append(node)

    if index is not None:
        add(index_nodes(index))
    for inner in retrievers_of(retriever):
        inner_index = _index_of(inner)
        if inner_index is not None and inner_index is not index:
            add(index_nodes(inner_index))
        # a retriever that keeps its own nodes (BM25) or a storage context (auto-merging,
        # whose parents live in the docstore but not in the vector index)
        own = getattr(inner, "_nodes", None)
        if isinstance(own, list):
            add(own)
        add(_bm25_nodes(inner))
        storage = getattr(inner, "_storage_context", None)
        if storage is not None:
            add(getattr(storage.docstore, "docs", {}).values())
        add(graph_chunk_nodes(getattr(inner, "_graph_store", None)))
    if found:
        return found, None
    return [], (
        "cofe cannot read this pipeline's chunk corpus (no index docstore, no vector store that "
        "lists its nodes, no retriever holding nodes); chunk-level measures would count only the "
        "chunks ever retrieved. Pass nodes= (the nodes you indexed) or index= (the index)"
    )


def graph_chunk_nodes(store: Any) -> list[Any]:
    """The text chunks a property graph was extracted from (``PropertyGraphIndex`` keeps them in
    its graph store as chunk nodes, next to the entities): the corpus of a graph RAG."""
    if store is None or not callable(getattr(store, "get_llama_nodes", None)):
        return []
    try:
        labelled = store.get()
    except (NotImplementedError, TypeError):  # a store that cannot list every node
        return []
    ids = [node.id for node in labelled if type(node).__name__ == "ChunkNode"]
    return list(store.get_llama_nodes(ids)) if ids else []


def _bm25_nodes(retriever: Any) -> list[Any]:
    """LlamaIndex's BM25 retriever keeps its corpus as node dicts (``corpus``)."""
    corpus = getattr(retriever, "corpus", None)
    if not isinstance(corpus, list) or not corpus or not isinstance(corpus[0], dict):
        return []
    from llama_index.core.vector_stores.utils import metadata_dict_to_node

    return [metadata_dict_to_node(item) for item in corpus if "_node_content" in item]


Span = tuple[int | None, int | None]


def absolute_spans(nodes: Sequence[Any], doc_texts: dict[str, str]) -> dict[str, Span]:
    """Each node's offsets in its document. ``HierarchicalNodeParser`` (auto-merging) gives a
    child node offsets into its *parent node's* text: they are shifted by the parent's own
    document offset, recursively. Where the document text is known, the shift is kept only
    if it puts the node's text there (a parser with document offsets is left as it is)."""
    by_id = {n.node_id: n for n in nodes}
    spans: dict[str, Span] = {}

    def span(node: Any, depth: int) -> Span:
        found = spans.get(node.node_id)
        if found is not None:
            return found
        start, end = node.start_char_idx, node.end_char_idx
        parent = getattr(node, "parent_node", None)
        result: Span = (start, end)
        if start is not None and end is not None and parent is not None and depth < 64:
            parent_node = by_id.get(parent.node_id)
            parent_start = span(parent_node, depth + 1)[0] if parent_node is not None else None
            if parent_start is not None:
                shifted = (parent_start + start, parent_start + end)
                text = doc_texts.get(str(node.ref_doc_id))
                if text is None or text[shifted[0] : shifted[1]] == node.get_content():
                    result = shifted
        spans[node.node_id] = result
        return result

    for node in nodes:
        span(node, 0)
    return spans


def with_parents(chunks: list[Chunk], nodes: Sequence[Any], ids: dict[str, str]) -> list[Chunk]:
    """Chunks whose node has a parent in the corpus (hierarchical parsing, auto-merging) say
    so in ``meta["parent_chunk_id"]``: leaf and parent are both in the corpus, related."""
    out = []
    for chunk, node in zip(chunks, nodes, strict=True):
        parent = getattr(node, "parent_node", None)
        parent_id = ids.get(parent.node_id) if parent is not None else None
        if parent_id is not None:
            chunk = chunk.model_copy(update={"meta": {**chunk.meta, "parent_chunk_id": parent_id}})
        out.append(chunk)
    return out


SUMMARY_LEVEL = "level"  # RAPTOR: metadata of a cluster summary (its tree level)
SUMMARY_PARENT = "parent_id"  # RAPTOR: metadata of a node naming the summary it went into


def with_summaries(chunks: list[Chunk], nodes: Sequence[Any], ids: dict[str, str]) -> list[Chunk]:
    """RAPTOR's cluster summaries (``llama-index-packs-raptor``: a node with a ``level`` that
    other nodes name as their ``parent_id``) are derived items, not corpus chunks: kind
    ``summary``, derived from the nodes clustered into them (leaves, or lower summaries), their
    document that of their leaves when they share one."""
    children: dict[str, list[str]] = defaultdict(list)
    for node in nodes:
        parent = (getattr(node, "metadata", None) or {}).get(SUMMARY_PARENT)
        if isinstance(parent, str) and parent in ids:
            children[ids[parent]].append(ids[node.node_id])
    summaries = {
        ids[node.node_id]
        for node in nodes
        if SUMMARY_LEVEL in (getattr(node, "metadata", None) or {})
        and ids[node.node_id] in children
    }
    if not summaries:
        return chunks
    by_id = {chunk.chunk_id: chunk for chunk in chunks}

    def leaf_docs(chunk_id: str, seen: frozenset[str]) -> set[str]:
        if chunk_id not in summaries:
            return {by_id[chunk_id].doc_id}
        return set().union(*(leaf_docs(c, seen | {c}) for c in children[chunk_id] if c not in seen))

    out = []
    for chunk in chunks:
        if chunk.chunk_id in summaries:
            docs = leaf_docs(chunk.chunk_id, frozenset([chunk.chunk_id]))
            chunk = chunk.model_copy(
                update={
                    "kind": "summary",
                    "derived_from": list(dict.fromkeys(children[chunk.chunk_id])),
                    "doc_id": next(iter(docs)) if len(docs) == 1 else DERIVED_DOC,
                    "start": None,
                    "end": None,
                }
            )
        out.append(chunk)
    return out


DERIVED_DOC = "(derived)"
"""The document of a derived item built from several documents (scoring uses its leaves')."""


def check_doc_keys(nodes: Sequence[Any], doc_key: DocKey) -> None:
    """Two files with one name in different folders would merge into one document: refused."""
    if doc_key is not None:
        return
    paths: dict[str, set[str]] = defaultdict(set)
    for node in nodes:
        meta = getattr(node, "metadata", None) or {}
        if meta.get("file_name") and meta.get("file_path"):
            paths[str(meta["file_name"])].add(str(meta["file_path"]))
    clashes = {name: sorted(found) for name, found in paths.items() if len(found) > 1}
    if clashes:
        name, found = next(iter(clashes.items()))
        raise UnsupportedLlamaIndexPipeline(
            f"{len(clashes)} file name(s) belong to several files (e.g. {name!r}: "
            f"{', '.join(found[:3])}); pass doc_key='file_path' (and name sources by path in "
            "the eval set) or a function of the node"
        )


def unmatched_sources(sources: Iterable[str], doc_names: Iterable[str]) -> str | None:
    """Why no sample's source names a document of the run (None when some do). Names match
    as the scorer matches them: whole, by base name, or by stem."""
    import os

    known: set[str] = set()
    for name in doc_names:
        base = os.path.basename(name)
        known.update((name, base, os.path.splitext(base)[0]))
    wanted = sorted({s for s in sources if s})
    if not wanted:
        return None
    for source in wanted:
        base = os.path.basename(source)
        if {source, base, os.path.splitext(base)[0]} & known:
            return None
    shown_docs = ", ".join(sorted(doc_names)[:4]) or "(none)"
    return (
        f"no source of the eval set names a document of the pipeline: the eval set names "
        f"{', '.join(wanted[:4])}; the pipeline's documents are {shown_docs}. Documents are "
        "named by their file_name metadata; pass doc_key= (a metadata key or a function) so "
        "they match the eval set's source.doc"
    )
