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


TAIL_SHARE = 0.25  # a document's last segment under this share of the budget is a tail


def segment_documents(
    documents: list[ParsedDocument], *, max_tokens: int = 400, min_chars: int = 30
) -> list[Segment]:
    """Sentence-bounded segments of at most ``max_tokens`` cl100k tokens; tiny ones are skipped.

    A document's last segment under a quarter of the budget joins the segment before it (which
    then passes the budget by at most a quarter): a tail of a sentence or two cannot carry a
    question of its own, and the model asked about it writes one anyway."""
    from cofe.llm import estimate_tokens

    by_id = {d.doc_id: d for d in documents}
    chunks = list(
        split_documents(
            documents, splitter=Splitter.SENTENCE, chunk_size=max_tokens, chunk_overlap=0
        )
    )
    pieces: list[tuple[str, str, str, int | None, int | None]] = []  # id, doc, text, start, end
    for i, chunk in enumerate(chunks):
        last_of_doc = i + 1 == len(chunks) or chunks[i + 1].doc_id != chunk.doc_id
        if (
            last_of_doc
            and pieces
            and pieces[-1][1] == chunk.doc_id
            and estimate_tokens(chunk.text) < TAIL_SHARE * max_tokens
        ):
            chunk_id, doc_id, text, start, end = pieces[-1]
            if start is not None and chunk.end is not None:  # the document's own text between
                text = by_id[doc_id].text[start : chunk.end]
            else:
                text = f"{text} {chunk.text}"
            pieces[-1] = (chunk_id, doc_id, text, start, chunk.end if end is not None else None)
            continue
        pieces.append((chunk.chunk_id, chunk.doc_id, chunk.text, chunk.start, chunk.end))
    segments = []
    for chunk_id, doc_id, text, start, end in pieces:
        if len(text.strip()) < min_chars:
            continue
        digest = hashlib.sha1(text.encode()).hexdigest()[:8]
        segments.append(
            Segment(
                segment_id=f"{chunk_id}:{digest}",
                doc_id=doc_id,
                title=document_title(by_id[doc_id]),
                text=text,
                start=start,
                end=end,
            )
        )
    return segments
