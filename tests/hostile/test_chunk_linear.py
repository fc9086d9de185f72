"""Chunking in linear time with exact offsets, and the same chunks as LlamaIndex's splitters.

cofe applies LlamaIndex's SentenceSplitter and TokenTextSplitter rules itself, over character
spans: a chunk's offsets are where it was cut (LlamaIndex searched for each chunk's text, and
placed every chunk of a repeated passage at its first occurrence), nltk's sentence tokenizer
is given bounded windows (nltk stops a regular expression after 5 s, which a megabyte of
short sentences reaches), and oversized sentences fall back to phrases, words, then
characters without re-tokenizing them one by one through LlamaIndex's node machinery.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

import cofe
from cofe.importers import import_squad
from cofe.pipeline import Splitter, documents_from_texts, split_documents
from cofe.runlog import Chunk, ParsedDocument

DATA = Path(cofe.__file__).parent / "_data"


def _shipped(name: str, n: int | None = None) -> list[ParsedDocument]:
    documents = import_squad(DATA / name).documents
    return documents_from_texts(sorted(documents.items())[:n])


def _digest(chunks: list[Chunk]) -> tuple[int, str]:
    rows = [[c.chunk_id, c.start, c.end, c.text] for c in chunks]
    return len(chunks), hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()[
        :16
    ]


# Chunk ids, offsets and texts of the shipped articles as cofe cut them when it called
# LlamaIndex's splitters (llama-index-core 0.14.25, nltk 3.10.4, tiktoken 0.14.0), but one:
# at 128 tokens, the third chunk of the CMRC article on the 2008 men's 100 metres repeats a
# passage found earlier, and LlamaIndex's search placed it there (127-152, before the second
# chunk) instead of where it was cut (214-239); the texts of all chunks are unchanged.
PINNED = [
    ("squad", Splitter.SENTENCE, 256, 20, (817, "de064c3513798647")),
    ("squad", Splitter.SENTENCE, 128, 20, (1804, "ed404ca345ab20ac")),
    ("squad", Splitter.TOKEN, 256, 20, (790, "7017150d175204f2")),
    ("cmrc", Splitter.SENTENCE, 256, 20, (124, "b6cee8311c77d522")),
    ("cmrc", Splitter.SENTENCE, 128, 20, (251, "91067bcb2515dfcb")),
    ("cmrc", Splitter.TOKEN, 256, 20, (128, "b72b37434380e8d6")),
]


@pytest.mark.parametrize(("corpus", "splitter", "size", "overlap", "expected"), PINNED)
def test_shipped_articles_are_chunked_as_before(corpus, splitter, size, overlap, expected) -> None:
    docs = (
        _shipped("squad/squad-v1.1-dev-part-b.json")
        if corpus == "squad"
        else _shipped("cmrc2018/cmrc2018-trial.json", 40)
    )
    chunks = split_documents(docs, splitter=splitter, chunk_size=size, chunk_overlap=overlap)
    assert _digest(chunks) == expected


def _llamaindex_texts(text: str, splitter: Splitter, size: int, overlap: int) -> list[str]:
    """The chunk texts LlamaIndex's own splitter gives (as cofe called it before)."""
    from llama_index.core import Document
    from llama_index.core.node_parser import SentenceSplitter, TokenTextSplitter

    cls = SentenceSplitter if splitter is Splitter.SENTENCE else TokenTextSplitter
    parser = cls(chunk_size=size, chunk_overlap=overlap, include_metadata=False)
    return [n.get_content() for n in parser.get_nodes_from_documents([Document(text=text)])]


SHAPES = {
    "prose": " ".join(f"Sentence number {i} talks about topic {i % 7}." for i in range(300)),
    "paragraphs": "\n\n\n".join(
        f"Part {i}.\n\nIt has two short lines. And ends here." for i in range(60)
    ),
    "abbreviations": (
        "Dr. Smith met Mr. Jones at 5 p.m. on Jan. 3, 2020. They left (quickly.) "
        '"Why?" he asked!!! The U.S.A. is big... Really. '
    )
    * 40,
    "no punctuation": "lorem ipsum dolor sit amet " * 800,
    "one word": "x" * 6000,
    "commas": "," * 3000,
    "chinese": "北京是中华人民共和国的首都。" * 80,
    "chinese run": "北京是中华人民共和国的首都" * 120,
    "short sentences": "Yes. No. Maybe. " * 400,
    "padded": "   \n  Some text.  \n\n\n  More text here.   " * 100,
    "lines": "ab\n" * 3000,
    "empty": "",
}


@pytest.mark.parametrize("splitter", list(Splitter))
@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_same_chunks_as_llamaindex(shape: str, splitter: Splitter) -> None:
    text = SHAPES[shape]
    for size, overlap in [(64, 8), (256, 20)]:
        chunks = split_documents(
            documents_from_texts([("d", text)]),
            splitter=splitter,
            chunk_size=size,
            chunk_overlap=overlap,
        )
        assert [c.text for c in chunks] == _llamaindex_texts(text, splitter, size, overlap)
        for chunk in chunks:
            assert chunk.start is not None and text[chunk.start : chunk.end] == chunk.text


def _tokens(text: str) -> int:
    from llama_index.core.utils import get_tokenizer

    return len(get_tokenizer()(text))


def _assert_cut_whole(text: str, chunks: list[Chunk], size: int) -> None:
    """Every chunk within the size, placed where it was cut, in order, nothing left out.

    Within the size as LlamaIndex's rules count it: by its pieces, before the chunk is
    trimmed. A chunk whose first piece was " lorem" (one token) reads "lorem" (two), so it
    can be one token over; cofe keeps those rules (SQuAD's articles have such chunks too)."""
    covered = 0
    for chunk in chunks:
        assert chunk.start is not None and chunk.end is not None
        assert text[chunk.start : chunk.end] == chunk.text
        assert _tokens(chunk.text) <= size + 1
        assert chunk.start <= covered or text[covered : chunk.start].strip() == "", chunk.chunk_id
        assert chunk.end > covered  # each chunk goes further: repeated text is not placed twice
        covered = chunk.end
    assert text[covered:].strip() == ""


def test_a_five_megabyte_single_line_is_chunked_whole() -> None:
    # a line without punctuation (words), then one without spaces (characters): LlamaIndex
    # placed each repeated chunk at its first occurrence, so the offsets covered 2 KB
    text = "lorem ipsum dolor sit amet " * (4 * 2**20 // 27) + "x" * 2**20
    assert len(text) > 5_000_000 and "\n" not in text
    chunks = split_documents(
        documents_from_texts([("line", text)]), chunk_size=256, chunk_overlap=20
    )
    assert len(chunks) > 5000
    _assert_cut_whole(text, chunks, 256)


def test_repeated_paragraphs_get_their_own_offsets() -> None:
    text = "\n\n".join(["The same notice is printed on every page of the manual."] * 400)
    chunks = split_documents(
        documents_from_texts([("manual", text)]), chunk_size=64, chunk_overlap=0
    )
    _assert_cut_whole(text, chunks, 64)
    assert chunks[-1].end == len(text)


def test_many_short_sentences_do_not_reach_nltks_time_limit(monkeypatch) -> None:
    # nltk stops one regular expression after DEFAULT_TIMEOUT seconds (5 s), which a megabyte
    # of short sentences reaches when the whole text is given at once; 1 s here, for speed
    import nltk.redos

    monkeypatch.setattr(nltk.redos, "DEFAULT_TIMEOUT", 1.0)
    rng = random.Random(0)
    text = " ".join(
        rng.choice(["Yes.", "No.", "Maybe so.", "Right!", "Why?"]) for _ in range(60_000)
    )
    chunks = split_documents(
        documents_from_texts([("talk", text)]), chunk_size=128, chunk_overlap=10
    )
    _assert_cut_whole(text, chunks, 128)


def test_sentence_starts_found_in_windows_are_those_of_the_whole_text(monkeypatch) -> None:
    from llama_index.core.utils import globals_helper

    from cofe.pipeline import _chunk

    rng = random.Random(1)
    words = [
        "Dr.",
        "Smith",
        "said",
        "(yes.)",
        '"No!"',
        "U.S.",
        "e.g.",
        "3.5",
        "it",
        "ends.",
        "Why?",
        "...",
        "Then",
        "we",
        "left.",
        "Mr.",
        "Jones",
        "!!!",
        "\n\n",
        "ok",
    ]
    text = " ".join(rng.choice(words) for _ in range(20_000))
    whole = [start for start, _ in globals_helper.punkt_tokenizer.span_tokenize(text)]
    monkeypatch.setattr(_chunk, "SENTENCE_WINDOW", 3000)
    monkeypatch.setattr(_chunk, "SENTENCE_MARGIN", 300)
    assert _chunk.sentence_starts(text, 0, len(text)) == whole
    assert _chunk.sentence_starts(text, 500, 40_000) == [
        500 + s for s, _ in globals_helper.punkt_tokenizer.span_tokenize(text[500:40_000])
    ]
