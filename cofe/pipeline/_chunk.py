"""Chunking by LlamaIndex's splitting rules (SentenceSplitter, TokenTextSplitter), applied by
cofe over character spans of the text.

The chunks are the ones LlamaIndex's splitters give, but cut here so that (1) a chunk's
offsets are where it was cut (LlamaIndex searches for each chunk's text afterwards, and puts
every chunk of a repeated passage at its first occurrence); (2) the time is linear in the
text: nltk's sentence tokenizer gets bounded windows (nltk stops one regular expression after
5 s, which a megabyte of short sentences reaches), and a sentence over the chunk size falls
back to phrases, words, then characters, each piece counted once (short pieces from a memo)
and streamed to the merge, not kept as millions of objects.

A parsed document's layout (``meta["layout"]``: its elements' spans, types and pages) goes
into each chunk's ``meta``: the ``pages`` and element ``types`` it overlaps. With
``tables=True`` a table (an element of type Table, one row a line) is chunked on its own, by
rows: a row is never split, and every piece after the first starts with the table's header
row (the chunk's offsets are its rows'; ``meta["header"]`` gives the header's span).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Sequence
from enum import StrEnum
from itertools import pairwise
from typing import Any

from cofe._cache import Cache, content_key, text_digests
from cofe._errors import InputError
from cofe.runlog import Chunk, ParsedDocument

# nltk's punkt tokenizer sees at most this many characters at once (a window of short
# sentences takes well under a second, far from nltk's 5 s limit) ...
SENTENCE_WINDOW = 32_768
# ... and a break is taken from a window only this far from its cut ends: punkt decides a
# break from the word before it and the token after it, never from a kilobyte away
SENTENCE_MARGIN = 1_024
_MEMO_LONGEST = 48  # pieces this short (words, characters) are counted once per distinct text
_MEMO_SIZE = 200_000
_SPACE = re.compile(" ")
_NEWLINE = re.compile("\n")


class Splitter(StrEnum):
    SENTENCE = "sentence"
    TOKEN = "token"


def check_chunking(chunk_size: int, chunk_overlap: int) -> None:
    if chunk_size < 16:
        raise InputError(f"chunk size must be at least 16 tokens, not {chunk_size}")
    if not 0 <= chunk_overlap < chunk_size:
        raise InputError(
            f"chunk overlap must be between 0 and the chunk size ({chunk_size}), not {chunk_overlap}"
        )


def sentence_starts(text: str, start: int, end: int) -> list[int]:
    """Where nltk's punkt tokenizer (as LlamaIndex loads it) starts the sentences of
    ``text[start:end]``, as offsets in ``text``. A long span is read in overlapping windows;
    each keeps the breaks found at least ``SENTENCE_MARGIN`` from a cut end, where the window
    holds all the context punkt uses, so they are the breaks of the whole span."""
    from llama_index.core.utils import globals_helper

    punkt = globals_helper.punkt_tokenizer
    if end - start <= SENTENCE_WINDOW:
        return [start + s for s, _ in punkt.span_tokenize(text[start:end])]
    starts: list[int] = []
    low = start
    while True:
        high = min(low + SENTENCE_WINDOW, end)
        keep_from = low if low == start else low + SENTENCE_MARGIN
        keep_to = end if high == end else high - SENTENCE_MARGIN
        for s, _ in punkt.span_tokenize(text[low:high]):
            if keep_from <= low + s < keep_to:
                starts.append(low + s)
        if high == end:
            return starts
        low = high - 2 * SENTENCE_MARGIN  # the next window keeps breaks from keep_to on


def _separated(pattern: re.Pattern[str], text: str, start: int, end: int) -> list[int]:
    """Piece bounds of LlamaIndex's split_by_sep (the separator begins each later piece)."""
    return [start, *(m.start() for m in pattern.finditer(text, start + 1, end)), end]


def _non_overlapping(pattern: re.Pattern[str], text: str, start: int, end: int) -> list[int]:
    """Where ``str.split`` cuts: separator occurrences left to right, after ``start``."""
    return [m.start() for m in pattern.finditer(text, start, end) if m.start() > start]


class _Cutter:
    """The pieces of one splitter's rules, as ``(start, end, tokens)``, handed to ``emit``."""

    def __init__(self, text: str, size: int, emit: Callable[[int, int, int], None]) -> None:
        from llama_index.core.utils import get_tokenizer

        self.text, self.size, self.emit = text, size, emit
        self.encode = get_tokenizer()  # LlamaIndex's global tokenizer, as its splitters use
        self.memo: dict[str, int] = {}

    def tokens(self, start: int, end: int) -> int:
        piece = self.text[start:end]
        if end - start > _MEMO_LONGEST:
            return len(self.encode(piece))
        count = self.memo.get(piece)
        if count is None:
            if len(self.memo) >= _MEMO_SIZE:
                self.memo.clear()
            count = self.memo[piece] = len(self.encode(piece))
        return count

    def pieces(self, start: int, end: int) -> Sequence[int]:
        raise NotImplementedError

    def split(self, start: int, end: int, tokens: int) -> None:
        """LlamaIndex's ``_split``: a span over the size is cut by the first rule that cuts
        it, and each piece still over the size is cut again (characters always fit)."""
        if tokens <= self.size:
            self.emit(start, end, tokens)
            return
        bounds = self.pieces(start, end)
        if isinstance(bounds, range):  # characters: a tight loop, they are the most numerous
            for i in bounds[:-1]:
                self.emit(i, i + 1, self.tokens(i, i + 1))
            return
        alone = len(bounds) == 2  # one piece that cannot be cut: the merge refuses it
        for a, b in pairwise(bounds):
            count = self.tokens(a, b)
            if count <= self.size or alone:
                self.emit(a, b, count)
            else:
                self.split(a, b, count)


class _SentenceCutter(_Cutter):
    def __init__(self, text: str, size: int, emit: Callable[[int, int, int], None]) -> None:
        from llama_index.core.node_parser.text.sentence import (
            CHUNKING_REGEX,
            DEFAULT_PARAGRAPH_SEP,
        )

        super().__init__(text, size, emit)
        self.paragraph = re.compile(re.escape(DEFAULT_PARAGRAPH_SEP))
        self.phrase = re.compile(CHUNKING_REGEX)

    def pieces(self, start: int, end: int) -> Sequence[int]:
        """SentenceSplitter's rules in order: paragraphs, sentences (punkt), phrases, words,
        characters; the first that gives more than one piece is used."""
        found = [start, *_non_overlapping(self.paragraph, self.text, start, end), end]
        if len(found) > 2:
            return found
        starts = sentence_starts(self.text, start, end)
        if len(starts) > 1:
            return [*starts, end]  # punkt's first sentence starts at ``start``
        # the phrases cover the span, one after another
        phrases = [m.start() for m in self.phrase.finditer(self.text, start, end)]
        if len(phrases) > 1:
            return [*phrases, end]
        words = _separated(_SPACE, self.text, start, end)
        return words if len(words) > 2 else range(start, end + 1)


class _TokenCutter(_Cutter):
    def pieces(self, start: int, end: int) -> Sequence[int]:
        """TokenTextSplitter's rules: words (spaces), lines, characters."""
        for pattern in (_SPACE, _NEWLINE):
            found = _separated(pattern, self.text, start, end)
            if len(found) > 2:
                return found
        return range(start, end + 1)


class _SentenceMerge:
    """SentenceSplitter's ``_merge``: pieces are added while the chunk fits; a full chunk is
    closed and the next one starts with the last pieces of it that fit in the overlap."""

    def __init__(self, size: int, overlap: int) -> None:
        self.size, self.overlap = size, overlap
        self.spans: list[tuple[int, int]] = []
        self.current: deque[tuple[int, int, int]] = deque()
        self.length = 0
        self.new = True

    def add(self, start: int, end: int, tokens: int) -> None:
        if tokens > self.size:
            raise ValueError("Single token exceeded chunk size")
        if not self.new and self.length + tokens > self.size:
            self._close()
        if self.new:  # drop overlap until the piece fits
            while self.current and self.length + tokens > self.size:
                self.length -= self.current.popleft()[2]
        self.current.append((start, end, tokens))
        self.length += tokens
        self.new = False

    def _close(self) -> None:
        last = self.current
        self.spans.append((last[0][0], last[-1][1]))
        self.current, self.length, self.new = deque(), 0, True
        for piece in reversed(last):
            if self.length + piece[2] > self.overlap:
                break
            self.current.appendleft(piece)
            self.length += piece[2]

    def finish(self) -> list[tuple[int, int]]:
        if not self.new:
            self.spans.append((self.current[0][0], self.current[-1][1]))
        return self.spans


class _TokenMerge:
    """TokenTextSplitter's ``_merge``: a chunk is closed when the next piece does not fit,
    and pieces are dropped from its front until the rest fits the overlap and the piece."""

    def __init__(self, size: int, overlap: int) -> None:
        self.size, self.overlap = size, overlap
        self.spans: list[tuple[int, int]] = []
        self.current: deque[tuple[int, int, int]] = deque()
        self.length = 0

    def add(self, start: int, end: int, tokens: int) -> None:
        if self.length + tokens > self.size:
            if self.current:
                self.spans.append((self.current[0][0], self.current[-1][1]))
            while self.current and (self.length > self.overlap or self.length + tokens > self.size):
                self.length -= self.current.popleft()[2]
        self.current.append((start, end, tokens))
        self.length += tokens

    def finish(self) -> list[tuple[int, int]]:
        if self.current:
            self.spans.append((self.current[0][0], self.current[-1][1]))
        return self.spans


# TokenTextSplitter keeps room for the metadata it would print before a chunk: its length
# in tokens (none here) plus this many (LlamaIndex's DEFAULT_METADATA_FORMAT_LEN)
_TOKEN_METADATA_ROOM = 2


def chunk_spans(
    text: str, splitter: Splitter, chunk_size: int, chunk_overlap: int
) -> list[tuple[int, int]]:
    """``(start, end)`` of each chunk of ``text``, whitespace-trimmed, empty ones dropped."""
    if text == "":
        return [(0, 0)]  # LlamaIndex gives one empty chunk for an empty text
    if splitter is Splitter.SENTENCE:
        merge: _SentenceMerge | _TokenMerge = _SentenceMerge(chunk_size, chunk_overlap)
        cutter: _Cutter = _SentenceCutter(text, chunk_size, merge.add)
    else:
        size = chunk_size - _TOKEN_METADATA_ROOM
        merge = _TokenMerge(size, chunk_overlap)
        cutter = _TokenCutter(text, size, merge.add)
    cutter.split(0, len(text), cutter.tokens(0, len(text)))
    trimmed = []
    for start, end in merge.finish():
        piece = text[start:end]
        stripped = piece.strip()
        if stripped:
            first = start + len(piece) - len(piece.lstrip())
            trimmed.append((first, first + len(stripped)))
    return trimmed


def split_documents(
    documents: list[ParsedDocument],
    *,
    splitter: Splitter = Splitter.SENTENCE,
    chunk_size: int = 256,
    chunk_overlap: int = 20,
    cache: Cache | None = None,
    tables: bool = False,
) -> list[Chunk]:
    """Chunks of every document (ids ``doc_id#i``) with their character offsets; with the
    pages and element types they overlap in ``meta`` when the document records its layout.
    ``tables``: chunk each table by rows (never split a row; repeat its header)."""
    check_chunking(chunk_size, chunk_overlap)
    # chunks-2: the same texts as chunks-1, with offsets where they were cut
    parts: list[Any] = [
        "chunks-2",
        splitter.value,
        chunk_size,
        chunk_overlap,
        [d.doc_id for d in documents],
        text_digests(d.text for d in documents),
    ]
    if tables:  # the tables' places are part of the input
        parts += ["tables-1", [table_spans(d) for d in documents]]
    key = content_key(*parts)
    if cache is not None:
        stored = cache.get_json("chunks", key)
        if stored is not None:
            return _with_layout([Chunk.model_validate(c) for c in stored], documents)
    chunks = []
    for doc in documents:
        if tables and table_spans(doc):
            pieces = table_aware_spans(doc, splitter, chunk_size, chunk_overlap)
        else:
            spans = chunk_spans(doc.text, splitter, chunk_size, chunk_overlap)
            pieces = [(a, b, None) for a, b in spans]
        for i, (a, b, header) in enumerate(pieces):
            text = doc.text[a:b]
            meta: dict[str, Any] = {}
            if header is not None:
                text = doc.text[header[0] : header[1]] + "\n" + text
                meta["header"] = list(header)
            chunks.append(
                Chunk(
                    chunk_id=f"{doc.doc_id}#{i}",
                    doc_id=doc.doc_id,
                    text=text,
                    start=a,
                    end=b,
                    meta=meta,
                )
            )
    if cache is not None:
        cache.put_json("chunks", key, [c.model_dump(mode="json") for c in chunks])
    return _with_layout(chunks, documents)


def _layout(doc: ParsedDocument) -> list[tuple[int, int, str, int | None]]:
    """A parsed document's element spans, types and pages (``meta["layout"]``), if valid."""
    found = doc.meta.get("layout") if isinstance(doc.meta, dict) else None
    out = []
    for item in found if isinstance(found, list) else ():
        if (
            isinstance(item, list | tuple)
            and len(item) == 4
            and isinstance(item[0], int)
            and isinstance(item[1], int)
            and 0 <= item[0] <= item[1] <= len(doc.text)
        ):
            page = item[3] if isinstance(item[3], int) else None
            out.append((item[0], item[1], str(item[2]), page))
    return out


def table_spans(doc: ParsedDocument) -> list[tuple[int, int]]:
    """Where the document's tables are (elements of type Table)."""
    return [(a, b) for a, b, kind, _ in _layout(doc) if kind == "Table" and b > a]


def _with_layout(chunks: list[Chunk], documents: list[ParsedDocument]) -> list[Chunk]:
    """Each chunk's ``pages`` and element ``types``: those of the elements it overlaps."""
    layouts = {doc.doc_id: _layout(doc) for doc in documents}
    for chunk in chunks:
        layout = layouts.get(chunk.doc_id)
        if not layout or chunk.start is None or chunk.end is None:
            continue
        a, b = chunk.start, chunk.end
        if "header" in chunk.meta:
            a = min(a, chunk.meta["header"][0])
        over = [item for item in layout if item[0] < b and a < item[1]]
        pages = sorted({page for *_, page in over if page is not None})
        if pages:
            chunk.meta["pages"] = pages
        if over:
            chunk.meta["types"] = list(dict.fromkeys(kind for _, _, kind, _ in over))
    return chunks


def table_aware_spans(
    doc: ParsedDocument, splitter: Splitter, chunk_size: int, chunk_overlap: int
) -> list[tuple[int, int, tuple[int, int] | None]]:
    """``(start, end, header)`` per chunk: the text between tables cut by the splitter, each
    table by rows -- as many whole rows as fit the size, every piece after the first headed
    by the table's first row (``header``: its span; not repeated when it would take more
    than half a chunk). A row longer than a whole chunk (a table without row structure) is
    the one thing cut inside, by the splitter, alone."""
    from llama_index.core.utils import get_tokenizer

    encode = get_tokenizer()
    text = doc.text
    out: list[tuple[int, int, tuple[int, int] | None]] = []
    at = 0
    for start, end in table_spans(doc):
        if start < at:
            continue  # overlapping layout entries: the first wins
        out += _text_spans(text, at, start, splitter, chunk_size, chunk_overlap)
        rows = [(m.start(), m.end()) for m in re.finditer(r"[^\n]+", text[start:end])]
        rows = [(start + a, start + b) for a, b in rows if text[start + a : start + b].strip()]
        if rows:
            header = rows[0]
            head_tokens = len(encode(text[header[0] : header[1]] + "\n"))
            repeated = header if head_tokens <= chunk_size // 2 else None
            later_room = chunk_size - (head_tokens if repeated else 0)
            piece: list[tuple[int, int]] = []
            used, room = 0, chunk_size  # the first piece holds the header as its first row
            for row in rows:
                tokens = len(encode(text[row[0] : row[1]] + "\n"))
                if tokens > chunk_size:
                    if piece:
                        out.append(_piece(piece, repeated))
                        piece, used, room = [], 0, later_room
                    out += _text_spans(text, row[0], row[1], splitter, chunk_size, chunk_overlap)
                    continue
                if piece and piece != [header] and used + tokens > room:
                    out.append(_piece(piece, repeated))
                    piece, used, room = [], 0, later_room
                piece.append(row)
                used += tokens
            if piece:
                out.append(_piece(piece, repeated))
        at = end
    out += _text_spans(text, at, len(text), splitter, chunk_size, chunk_overlap)
    return out


def _piece(
    rows: list[tuple[int, int]], header: tuple[int, int] | None
) -> tuple[int, int, tuple[int, int] | None]:
    """A table piece: its rows' span, headed by the header unless it starts with it."""
    return rows[0][0], rows[-1][1], None if header is None or rows[0] == header else header


def _text_spans(
    text: str, start: int, end: int, splitter: Splitter, chunk_size: int, chunk_overlap: int
) -> list[tuple[int, int, None]]:
    """The splitter's chunks of ``text[start:end]`` (nothing for blank text), as offsets."""
    if not text[start:end].strip():
        return []
    return [
        (start + a, start + b, None)
        for a, b in chunk_spans(text[start:end], splitter, chunk_size, chunk_overlap)
    ]
