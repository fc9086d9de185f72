"""Parsing: files of many formats to plain text, with unstructured, offline."""

from __future__ import annotations

import hashlib
import importlib
import os
import time
import zipfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from cofe._cache import Cache
from cofe._errors import InputProblem
from cofe.pipeline._offline import offline_unstructured
from cofe.runlog import ParsedDocument

SUPPORTED = {
    ".txt": "text",
    ".text": "text",
    ".md": "md",
    ".markdown": "md",
    ".html": "html",
    ".htm": "html",
    ".docx": "docx",
    ".pptx": "pptx",
    ".xlsx": "xlsx",
    ".pdf": "pdf",
}
PARSER_VERSION = "unstructured-1"
PDF_HINT = (
    "PDF parsing needs unstructured-inference without its dependencies (they would pull a CUDA "
    "torch): pip install --no-deps unstructured-inference==1.6.14"
)


@dataclass
class ParseResult:
    """Parsed documents in file order, plus every file that could not be parsed and why."""

    documents: list[ParsedDocument] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    seconds: float = 0.0


def doc_id_for(path: Path, root: Path) -> str:
    """A stable id: the path relative to the docs folder, with forward slashes."""
    return path.relative_to(root).as_posix()


_PARTITIONERS = {
    "text": ("unstructured.partition.text", "partition_text"),
    "md": ("unstructured.partition.md", "partition_md"),
    "html": ("unstructured.partition.html", "partition_html"),
    "docx": ("unstructured.partition.docx", "partition_docx"),
    "pptx": ("unstructured.partition.pptx", "partition_pptx"),
    "xlsx": ("unstructured.partition.xlsx", "partition_xlsx"),
}


def _partition(path: Path, kind: str) -> list:
    """The partitioner the extension names (not content sniffing: a corrupt .docx must fail)."""
    offline_unstructured()
    if kind == "pdf":
        try:
            from unstructured.partition.pdf import partition_pdf
        except ImportError as error:
            raise RuntimeError(f"{PDF_HINT} ({error})") from None
        # "fast" reads the text layer with pdfminer: no OCR model, no layout model
        return partition_pdf(filename=str(path), strategy="fast", languages=["eng"])
    module, name = _PARTITIONERS[kind]
    partition = getattr(importlib.import_module(module), name)
    if kind in ("docx", "pptx", "xlsx") and not zipfile.is_zipfile(path):
        raise ValueError(f"not a valid .{kind} file (Office files are zip archives): corrupt?")
    return partition(filename=str(path), languages=["eng"])


def parse_file(path: Path, doc_id: str) -> ParsedDocument:
    """Parse one file; raises on corrupt or unsupported input."""
    kind = SUPPORTED.get(path.suffix.lower())
    if kind is None:
        raise ValueError(f"unsupported file type {path.suffix or '(none)'!r}")
    if kind == "pdf":
        with path.open("rb") as handle:
            if not handle.read(1024).lstrip().startswith(b"%PDF"):
                raise ValueError("not a PDF: the file has no %PDF header (corrupt or misnamed)")
    elements = _partition(path, kind)
    texts = [el.text.strip() for el in elements if getattr(el, "text", "").strip()]
    if not texts:
        raise ValueError("no text found (a scanned PDF needs OCR, which cofe does not run)")
    categories = Counter(type(el).__name__ for el in elements)
    return ParsedDocument(
        doc_id=doc_id,
        source=path.name,
        text="\n\n".join(texts),
        meta={"format": kind, "parser": PARSER_VERSION, "elements": dict(categories)},
    )


def find_documents(root: Path) -> list[Path]:
    """Every file under ``root`` in a stable order (hidden files skipped)."""
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such file or folder")
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def _file_key(path: Path) -> str:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return f"{PARSER_VERSION}:{path.suffix.lower()}:{digest}"


def parse_documents(
    root: str | os.PathLike[str],
    *,
    cache: Cache | None = None,
) -> ParseResult:
    """Parse every file under ``root``. A file that fails is reported and skipped."""
    root = Path(root)
    started = time.perf_counter()
    result = ParseResult()
    paths = find_documents(root)
    base = root if root.is_dir() else root.parent
    for path in paths:
        doc_id = doc_id_for(path, base)
        try:
            key = _file_key(path) if cache else None
            stored = cache.get_json("parsed", key) if cache else None
            if stored is not None:  # the same bytes parsed before, perhaps under another name
                doc = ParsedDocument.model_validate(
                    {**stored, "doc_id": doc_id, "source": path.name}
                )
            else:
                doc = parse_file(path, doc_id)
                if cache:
                    cache.put_json("parsed", key, doc.model_dump(mode="json"))
            result.documents.append(doc)
        except Exception as error:  # any parser failure skips only this file
            message = f"skipped: {type(error).__name__}: {error}"
            result.problems.append(InputProblem(str(path), None, None, message))
    result.seconds = time.perf_counter() - started
    return result


def documents_from_texts(texts: Iterable[tuple[str, str]]) -> list[ParsedDocument]:
    """Already-plain texts as parsed documents: ``(doc_id, text)`` pairs."""
    return [
        ParsedDocument(doc_id=doc_id, source=doc_id, text=text, meta={"format": "text"})
        for doc_id, text in texts
    ]
