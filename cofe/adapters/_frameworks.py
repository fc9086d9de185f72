"""The chunk corpus of a LangChain, Haystack, DSPy or LlamaIndex pipeline, read from its stores.

Chunk-level measures need *every* chunk the retriever could have returned. cofe finds the
stores by walking the objects a pipeline's callable reaches (a bound method's object, a
closure's cells, the module globals its code names, pydantic fields, attributes, short
containers) and reads each store it knows:

- LangChain: ``InMemoryVectorStore`` (its ``store``), FAISS (its docstore), Chroma (``get``),
  ``BM25Retriever``/``TFIDFRetriever`` (their ``docs``), and a ``ParentDocumentRetriever`` /
  ``MultiVectorRetriever``'s docstore -- the parents it returns, not the children it
  searches (those are never a retriever's output);
- Haystack: any document store with ``filter_documents()`` (``InMemoryDocumentStore``...);
- LlamaIndex: an index's docstore or vector store (as :mod:`._llamaindex_corpus` reads it);
- given: ``corpus=`` (a store, or the splitter's output: documents, nodes, texts, chunks).

A store cofe cannot list (a remote vector database) makes the corpus *partial*: the run's
manifest says ``"corpus": "partial"`` and why, and the corpus step is not judged.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import types
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from cofe._errors import ConfigurationError
from cofe.runlog import Chunk, ParsedDocument

DocKey = str | Callable[[Any], str | None] | None
UNKNOWN_DOC = "(unknown)"
# metadata naming a chunk's document, in order: LlamaIndex's and Haystack's file readers,
# LangChain's loaders ("source" is the path), Haystack's splitter (the parent's id)
DOC_KEYS = ("file_name", "source", "file_path", "source_id")
# metadata giving a chunk's offset in its document: LangChain (add_start_index=True),
# Haystack's DocumentSplitter
START_KEYS = ("start_index", "split_idx_start")
_MAX_OBJECTS = 20_000  # objects walked from one callable
_MAX_ITEMS = 200  # items of one container walked (retriever lists are short, corpora long)
_MAX_DEPTH = 10
# libraries whose objects never hold a store, and whose object graphs are large
_SKIP_MODULES = (
    "torch",
    "numpy",
    "transformers",
    "sentence_transformers",
    "tokenizers",
    "httpx",
    "httpcore",
    "openai",
    "litellm",
    "threading",
    "asyncio",
    "logging",
    "pydantic",
    "opentelemetry",
    "jinja2",
    "concurrent",
    "ssl",
    "socket",
    "networkx.classes.reportviews",
    "tiktoken",
    "sqlite3",
    "scipy",
)


class UnsupportedFrameworkPipeline(ConfigurationError):
    """The pipeline cannot be recorded faithfully; the message says what to pass instead.
    Raised before the first query, or at the first query whose spans cannot give a pool."""


@dataclass
class Corpus:
    """What was found: the framework's items (documents, nodes, texts), the store types
    read, and why the corpus is partial (None: whole)."""

    items: list[Any] = field(default_factory=list)
    read: list[str] = field(default_factory=list)  # "InMemoryVectorStore (12 documents)", ...
    partial: str | None = None


def _skipped(obj: Any) -> bool:
    if obj is None or isinstance(obj, str | bytes | int | float | bool | type | types.ModuleType):
        return True
    module = type(obj).__module__ or ""
    return module.startswith(_SKIP_MODULES)


def _children(obj: Any) -> Iterator[Any]:
    """The objects ``obj`` holds that may lead to a store."""
    if isinstance(obj, types.MethodType):
        yield obj.__self__
        yield obj.__func__
        return
    if isinstance(obj, types.FunctionType):
        for cell in obj.__closure__ or ():
            try:
                yield cell.cell_contents
            except ValueError:  # an empty cell
                continue
        names = obj.__code__.co_names
        for name in names:  # the globals the function's code reads, not the whole module
            if name in obj.__globals__:
                yield obj.__globals__[name]
        for const in obj.__code__.co_consts:  # nested functions name globals too
            if isinstance(const, types.CodeType):
                for name in const.co_names:
                    if name in obj.__globals__:
                        yield obj.__globals__[name]
        wrapped = getattr(obj, "__wrapped__", None)
        if wrapped is not None:
            yield wrapped
        return
    if isinstance(obj, dict):
        for i, value in enumerate(obj.values()):
            if i >= _MAX_ITEMS:
                return
            yield value
        return
    if isinstance(obj, list | tuple | set | frozenset | deque):
        for i, value in enumerate(obj):
            if i >= _MAX_ITEMS:
                return
            yield value
        return
    if isinstance(obj, functools.partial):
        yield obj.func
        yield from obj.args
        yield from obj.keywords.values()
        return
    attributes = getattr(obj, "__dict__", None)
    if isinstance(attributes, dict):
        yield from attributes.values()
    extra = getattr(obj, "__pydantic_extra__", None)
    if isinstance(extra, dict):
        yield from extra.values()
    private = getattr(obj, "__pydantic_private__", None)
    if isinstance(private, dict):
        yield from private.values()
    for slot in getattr(type(obj), "__slots__", ()) or ():
        if isinstance(slot, str) and hasattr(obj, slot):
            yield getattr(obj, slot)


def reachable(root: Any) -> Iterator[Any]:
    """Every object the walk reaches from ``root``, breadth first, each once."""
    seen: set[int] = set()
    todo: deque[tuple[Any, int]] = deque([(root, 0)])
    while todo and len(seen) < _MAX_OBJECTS:
        obj, depth = todo.popleft()
        if id(obj) in seen or _skipped(obj):
            continue
        seen.add(id(obj))
        yield obj
        if depth < _MAX_DEPTH and not _is_leaf(obj):
            for child in _children(obj):
                if id(child) not in seen and not _skipped(child):
                    todo.append((child, depth + 1))


def _is_leaf(obj: Any) -> bool:
    """A document or node: its fields never hold a store, and a corpus has thousands."""
    name = type(obj).__name__
    return name in ("Document", "TextNode", "Node", "ImageNode", "NodeWithScore")


def _class_names(obj: Any) -> set[str]:
    return {cls.__name__ for cls in type(obj).__mro__}


def _has_base(obj: Any, package: str, name: str) -> bool:
    return any(
        cls.__name__ == name and cls.__module__.startswith(package) for cls in type(obj).__mro__
    )


def corpus_of(root: Any) -> Corpus:
    """The corpus of the stores ``root`` reaches (see the module's docstring)."""
    found = Corpus()
    unreadable: list[str] = []
    parents_only: set[int] = set()  # vector stores of parent-document retrievers: children
    stores: list[Any] = []
    for obj in reachable(root):
        names = _class_names(obj)
        if "MultiVectorRetriever" in names:  # ParentDocumentRetriever too
            store = getattr(obj, "vectorstore", None)
            if store is not None:
                parents_only.add(id(store))
        stores.append(obj)
    for obj in stores:
        if id(obj) in parents_only:
            continue
        items, why = _read(obj)
        if items is not None:
            found.items += items
            found.read.append(f"{type(obj).__name__} ({len(items)})")
        elif why is not None:
            unreadable.append(why)
    if unreadable:
        found.partial = "; ".join(dict.fromkeys(unreadable))
    elif not found.items:
        found.partial = (
            "cofe found no document store, vector store or retriever holding "
            "documents behind the pipeline; pass corpus= (the store, or the "
            "splitter's output)"
        )
    return found


def _read(obj: Any) -> tuple[list[Any] | None, str | None]:
    """(the store's items, None), (None, why it cannot be listed), or (None, None): not a store."""
    names = _class_names(obj)
    if "MultiVectorRetriever" in names:  # the parents, from its byte or document store
        return _key_value_items(getattr(obj, "docstore", None), type(obj).__name__)
    if _has_base(obj, "langchain_core", "VectorStore"):  # a user's subclass too
        return _langchain_vectors(obj)
    if "BaseRetriever" in names and isinstance(getattr(obj, "docs", None), list):
        return list(obj.docs), None  # BM25Retriever, TFIDFRetriever
    if callable(getattr(obj, "filter_documents", None)) and type(obj).__module__.startswith(
        "haystack"
    ):
        return list(obj.filter_documents()), None
    if hasattr(obj, "docstore") and hasattr(obj, "index_struct"):  # a LlamaIndex index
        from cofe.adapters._llamaindex_corpus import index_nodes

        return index_nodes(obj), None
    return None, None


def _langchain_vectors(store: Any) -> tuple[list[Any] | None, str | None]:
    name = type(store).__name__
    inner = getattr(store, "store", None)
    if name == "InMemoryVectorStore" and isinstance(inner, dict):
        from langchain_core.documents import Document

        return [
            Document(id=key, page_content=value["text"], metadata=value.get("metadata") or {})
            for key, value in inner.items()
        ], None
    docstore = getattr(getattr(store, "docstore", None), "_dict", None)
    if isinstance(docstore, dict):  # FAISS: an InMemoryDocstore
        return list(docstore.values()), None
    if callable(getattr(store, "get", None)) and name == "Chroma":
        return _chroma_items(store)
    return None, (
        f"cofe cannot list the documents of a {name} (a store that only answers "
        "searches); pass corpus= (the splitter's output)"
    )


def _chroma_items(store: Any) -> tuple[list[Any] | None, str | None]:
    """A LangChain ``Chroma`` store's documents (``get``: every id, text and metadata of its
    collection), checked against the collection's count; a store that cannot be listed (a
    Chroma server refusing, a listing cut short) makes the corpus partial, saying why."""
    from langchain_core.documents import Document

    try:
        got = store.get(include=["documents", "metadatas"])
        items = [
            Document(id=i, page_content=t or "", metadata=m or {})
            for i, t, m in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        ]
    except Exception as error:  # a remote Chroma that refuses, a client of another version
        return None, (
            f"cofe could not list the Chroma collection ({type(error).__name__}: "
            f"{str(error)[:200]}); pass corpus= (the splitter's output)"
        )
    count = getattr(getattr(store, "_collection", None), "count", None)
    try:
        expected = count() if callable(count) else None
    except Exception:
        expected = None
    if isinstance(expected, int) and expected != len(items):
        return None, (
            f"the Chroma collection holds {expected} documents but listing it gave "
            f"{len(items)}; pass corpus= (the splitter's output)"
        )
    return items, None


def _key_value_items(store: Any, owner: str) -> tuple[list[Any] | None, str | None]:
    inner = getattr(store, "store", None)
    if isinstance(inner, dict):  # InMemoryStore / InMemoryByteStore
        return list(inner.values()), None
    keys = getattr(store, "yield_keys", None)
    if callable(keys) and callable(getattr(store, "mget", None)):
        listed = list(keys())
        return [item for item in store.mget(listed) if item is not None], None
    return None, f"cofe cannot list the parents in the docstore of a {owner}; pass corpus="


# --- items as chunks -------------------------------------------------------------------------


def item_text(item: Any) -> str | None:
    """The text of a framework's document or node (or a plain string)."""
    if isinstance(item, str):
        return item
    if isinstance(item, Chunk):
        return item.text
    for name in ("page_content", "content", "text", "long_text"):  # LangChain, Haystack, ...
        value = getattr(item, name, None)
        if isinstance(value, str):
            return value
    get_content = getattr(item, "get_content", None)  # a LlamaIndex node
    if callable(get_content):
        text = get_content()
        return text if isinstance(text, str) else None
    if isinstance(item, dict):
        for name in ("text", "content", "page_content", "long_text"):
            if isinstance(item.get(name), str):
                return str(item[name])
    return None


def item_meta(item: Any) -> dict[str, Any]:
    for name in ("metadata", "meta"):
        value = getattr(item, name, None)
        if isinstance(value, dict):
            return value
    if isinstance(item, dict):
        meta = item.get("metadata") or item.get("meta")
        if isinstance(meta, dict):
            return meta
    return {}


def doc_of(item: Any, doc_key: DocKey) -> str:
    meta = item_meta(item)
    if callable(doc_key):
        key = doc_key(item)
        if key:
            return str(key)
    elif isinstance(doc_key, str) and meta.get(doc_key) not in (None, ""):
        return str(meta[doc_key])
    for name in DOC_KEYS:
        if meta.get(name) not in (None, ""):
            return str(meta[name])
    ref = getattr(item, "ref_doc_id", None)
    return str(ref) if ref else UNKNOWN_DOC


def _start_of(item: Any) -> int | None:
    meta = item_meta(item)
    for name in START_KEYS:
        value = meta.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    start = getattr(item, "start_char_idx", None)
    return start if isinstance(start, int) and start >= 0 else None


def as_chunks(items: Iterable[Any], doc_key: DocKey, doc_texts: dict[str, str]) -> list[Chunk]:
    """The corpus as chunks, each text once, with ids stable across rebuilds
    (``{document}@{start}:{sha1 of text}``). Offsets come from the item's metadata when they
    hold in the document's text, else from finding the text there (after the document's
    previous chunk), else they are unknown."""
    out: list[Chunk] = []
    seen: set[str] = set()
    searched_from: dict[str, int] = {}
    for item in items:
        if isinstance(item, Chunk):
            if item.text not in seen:
                seen.add(item.text)
                out.append(item)
            continue
        text = item_text(item)
        if text is None or not text.strip() or text in seen:
            continue
        seen.add(text)
        doc = doc_of(item, doc_key)
        start = _start_of(item)
        body = doc_texts.get(doc)
        if body is not None and (start is None or body[start : start + len(text)] != text):
            found = body.find(text, searched_from.get(doc, 0))
            if found < 0:
                found = body.find(text)
            start = found if found >= 0 else None
        if start is not None and body is not None:
            searched_from[doc] = start + 1
        digest = hashlib.sha1(text.encode()).hexdigest()[:10]
        where = f"@{start}" if start is not None else ""
        meta = {k: v for k, v in item_meta(item).items() if isinstance(v, str | int | float | bool)}
        out.append(
            Chunk(
                chunk_id=f"{doc}{where}:{digest}",
                doc_id=doc,
                text=text,
                start=start,
                end=start + len(text) if start is not None else None,
                meta=meta,
            )
        )
    return out


def as_documents(items: Sequence[Any] | None, doc_key: DocKey) -> list[ParsedDocument]:
    """Documents given as the framework's own (before splitting) or as parsed documents."""
    out: list[ParsedDocument] = []
    for item in items or ():
        if isinstance(item, ParsedDocument):
            out.append(item)
            continue
        text = item_text(item)
        if text is None:
            raise TypeError(f"documents=: {type(item).__name__} carries no text")
        key = doc_of(item, doc_key)
        out.append(
            ParsedDocument(
                doc_id=key,
                source=key,
                text=text,
                meta={"reader": type(item).__module__.split(".")[0]},
            )
        )
    return out


def describe_callable(fn: Any) -> str:
    """``module.qualname`` of the callable (or of the object whose method it is)."""
    target = getattr(fn, "__self__", None)
    if target is not None and not inspect.ismodule(target):
        name = getattr(fn, "__name__", "__call__")
        return f"{type(target).__module__}.{type(target).__qualname__}.{name}"
    module = getattr(fn, "__module__", None) or type(fn).__module__
    qualname = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{module}.{qualname}"
