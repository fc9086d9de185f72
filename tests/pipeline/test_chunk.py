"""LlamaIndex splitters as the chunking stage: offsets, sizes, validation, cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from cofe.pipeline import Cache, Splitter, documents_from_texts, split_documents

LONG = " ".join(f"Sentence number {i} talks about topic {i % 7}." for i in range(200))
CHINESE = "北京是中华人民共和国的首都。" * 60


@pytest.mark.parametrize("splitter", list(Splitter))
def test_chunks_carry_exact_offsets_and_cover_the_text(splitter: Splitter) -> None:
    docs = documents_from_texts([("en", LONG), ("zh", CHINESE)])
    chunks = split_documents(docs, splitter=splitter, chunk_size=64, chunk_overlap=8)
    by_doc = {d.doc_id: d.text for d in docs}
    assert {c.doc_id for c in chunks} == {"en", "zh"}
    assert len([c for c in chunks if c.doc_id == "en"]) > 5
    for chunk in chunks:
        assert chunk.chunk_id.startswith(chunk.doc_id + "#")
        if chunk.start is not None:
            assert by_doc[chunk.doc_id][chunk.start : chunk.end] == chunk.text
    located = [c for c in chunks if c.start is not None]
    assert len(located) >= 0.9 * len(chunks)
    # the chunks of a document reach its end
    last_en = max((c for c in located if c.doc_id == "en"), key=lambda c: c.end)
    assert last_en.end == len(LONG)


def test_bigger_chunks_mean_fewer_chunks() -> None:
    docs = documents_from_texts([("en", LONG)])
    sizes = [len(split_documents(docs, chunk_size=s, chunk_overlap=0)) for s in (64, 128, 512)]
    assert sizes[0] > sizes[1] > sizes[2] >= 1


@pytest.mark.parametrize(
    ("size", "overlap", "message"),
    [
        (8, 0, "at least 16"),
        (64, 64, "between 0 and the chunk size"),
        (64, -1, "between 0"),
    ],
)
def test_bad_chunk_parameters_are_refused(size: int, overlap: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        split_documents(
            documents_from_texts([("en", LONG)]), chunk_size=size, chunk_overlap=overlap
        )


def test_chunk_cache_returns_the_same_chunks(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    docs = documents_from_texts([("en", LONG)])
    first = split_documents(docs, chunk_size=64, chunk_overlap=8, cache=cache)
    second = split_documents(docs, chunk_size=64, chunk_overlap=8, cache=cache)
    assert cache.hits == 1 and first == second
    split_documents(docs, chunk_size=96, chunk_overlap=8, cache=cache)
    assert cache.misses == 2  # another size is another key
