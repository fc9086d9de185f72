"""Documents to segments bounded in tokens, each keeping its document and character span."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from cofe.pipeline import Splitter, split_documents
from cofe.runlog import ParsedDocument


@dataclass(frozen=True)
class Segment:
    segment_id: str  # doc id, index and a content hash: stable across re-runs of the same docs
    doc_id: str
    title: str
    text: str
    start: int | None
    end: int | None


def document_title(doc: ParsedDocument) -> str:
    """The file name without extension, separators as spaces ("Fresno,_California" -> "Fresno, California")."""
    return Path(doc.source).stem.replace("_", " ").strip() or doc.doc_id


def segment_documents(
    documents: list[ParsedDocument], *, max_tokens: int = 400, min_chars: int = 30
) -> list[Segment]:
    """Sentence-bounded segments of at most ``max_tokens`` cl100k tokens; tiny ones are skipped."""
    by_id = {d.doc_id: d for d in documents}
    segments = []
    for chunk in split_documents(documents, splitter=Splitter.SENTENCE, chunk_size=max_tokens,
                                 chunk_overlap=0):  # fmt: skip
        if len(chunk.text.strip()) < min_chars:
            continue
        digest = hashlib.sha1(chunk.text.encode()).hexdigest()[:8]
        segments.append(
            Segment(
                segment_id=f"{chunk.chunk_id}:{digest}",
                doc_id=chunk.doc_id,
                title=document_title(by_id[chunk.doc_id]),
                text=chunk.text,
                start=chunk.start,
                end=chunk.end,
            )
        )
    return segments
