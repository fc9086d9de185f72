"""Tables and layout in the built-in pipeline, on real-looking files of every format.

The files are written by benchmarks/documents.py (python-docx, python-pptx, openpyxl, CSV,
HTML, Markdown, a matplotlib PDF with two columns, a running header and page footers); the
golden facts are the rows and sentences it wrote, found with plain string search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from benchmarks.documents import (
    FORMATS,
    INCOME,
    STORES,
    evidence_span,
    questions,
    row_in_order,
    write_format,
)
from cofe.pipeline import parse_file, split_documents
from cofe.pipeline._parse import join_elements, pdf_table_rows, table_text
from cofe.runlog import ParsedDocument


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, ParsedDocument]]:
    root = tmp_path_factory.mktemp("documents")
    out: dict[str, dict[str, ParsedDocument]] = {}
    for fmt in FORMATS:
        out[fmt] = {p.name: parse_file(p, p.name) for p in write_format(fmt, root / fmt)}
    return out


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_table_row_is_kept_whole_and_in_order(parsed, fmt: str) -> None:
    docs = parsed[fmt]
    rows = [q for q in questions(fmt) if q.kind == "row"]
    assert len(rows) == sum(len(t.rows) for t in (INCOME, STORES)) + 10 + 24
    lost = [q.keywords for q in rows if not row_in_order(docs[q.file].text, q.keywords)]
    assert lost == []
    tables = [item for d in docs.values() for item in d.meta["layout"] if item[2] == "Table"]
    assert tables, f"{fmt}: no element of type Table"


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FORMATS)
def test_headings_paragraphs_and_bullets_keep_their_facts(parsed, fmt: str) -> None:
    docs = parsed[fmt]
    prose = [q for q in questions(fmt) if q.kind != "row"]
    kept = [q for q in prose if evidence_span(docs[q.file].text, q.keywords)]
    # a PDF's page furniture (footer, running header) may fall inside one sentence: one fact
    assert len(kept) >= len(prose) - (1 if fmt == "pdf" else 0)
    if fmt not in ("xlsx", "csv"):
        types = {item[2] for d in docs.values() for item in d.meta["layout"]}
        assert "Title" in types


@pytest.mark.slow
def test_pdf_pages_and_page_furniture_are_recorded(parsed) -> None:
    doc = parsed["pdf"]["report.pdf"]
    pages = {item[3] for item in doc.meta["layout"]}
    assert {1, 2} <= pages and None not in pages
    assert doc.meta["elements"].get("Footer") or doc.meta["elements"].get("Header")


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["pdf", "docx", "xlsx"])
def test_table_aware_chunks_never_split_a_row_and_repeat_the_header(parsed, fmt: str) -> None:
    docs = list(parsed[fmt].values())
    chunks = split_documents(docs, chunk_size=64, chunk_overlap=0, tables=True)
    texts = {d.doc_id: d.text for d in docs}
    for q in (q for q in questions(fmt) if q.kind == "row"):
        span = evidence_span(texts[q.file], q.keywords)
        assert span is not None
        assert any(
            c.doc_id == q.file and c.start <= span[0] and c.end >= span[1] for c in chunks
        ), q.keywords
    headed = [c for c in chunks if "header" in c.meta]
    assert headed, "no table piece repeats its header"
    for chunk in headed:
        a, b = chunk.meta["header"]
        assert chunk.text.startswith(texts[chunk.doc_id][a:b] + "\n")
        assert chunk.meta["types"] == ["Table"]
    plain = split_documents(docs, chunk_size=64, chunk_overlap=0)
    cut = [
        q.keywords
        for q in questions(fmt)
        if q.kind == "row"
        and not any(
            c.doc_id == q.file and c.start <= s[0] and c.end >= s[1]
            for c in plain
            for s in [evidence_span(texts[q.file], q.keywords)]
        )
    ]
    assert cut, "the default splitter at 64 tokens should cut some row (else this proves little)"


@pytest.mark.slow
def test_chunks_carry_pages_and_element_types(parsed) -> None:
    chunks = split_documents(list(parsed["pdf"].values()), chunk_size=128, chunk_overlap=0)
    assert all(c.meta.get("pages") for c in chunks)
    assert any(c.meta["pages"] == [2] for c in chunks)
    assert {t for c in chunks for t in c.meta["types"]} >= {"Table", "NarrativeText"}


# --- fast checks: no parser ------------------------------------------------------------------


@dataclass
class _Meta:
    page_number: int | None = None
    text_as_html: str | None = None
    coordinates: Any = None


@dataclass
class _Element:
    text: str
    category: str
    metadata: _Meta


@dataclass
class _Coordinates:
    points: tuple[tuple[float, float], ...]


def _at(text: str, x: float, y: float, page: int = 1, category: str = "Title") -> _Element:
    width = 6 * len(text)
    points = ((x, y), (x, y + 9), (x + width, y + 9), (x + width, y))
    return _Element(text, category, _Meta(page, None, _Coordinates(points)))


def test_a_table_is_written_one_row_a_line_from_its_html() -> None:
    html = (
        "<table><tr><th>Item</th><th>2023</th></tr><tr><td>Net <b>income</b></td>"
        "<td>96,995</td></tr><tr><td></td><td></td></tr></table>"
    )
    assert table_text(html) == "Item | 2023\nNet income | 96,995"
    text, layout = join_elements(
        [
            _Element("Results", "Title", _Meta(3)),
            _Element("Item 2023 Net income 96,995", "Table", _Meta(3, html)),
        ]
    )
    assert text == "Results\n\nItem | 2023\nNet income | 96,995"
    assert layout == [[0, 7, "Title", 3], [9, len(text), "Table", 3]]


def test_a_pdf_table_read_column_by_column_is_put_back_in_rows() -> None:
    """pdfminer's order: every label, then a paragraph, then every figure."""
    elements = [
        _at("Results", 40, 80),
        _at("Revenue", 40, 100),
        _at("Net income", 40, 115),
        _at("A paragraph below the table, in the left column.", 40, 150, category="Text"),
        _at("383,285", 330, 100),
        _at("96,995", 330, 115),
        _at("Page 1", 500, 800, category="Footer"),
    ]
    rebuilt = pdf_table_rows(elements)
    text, layout = join_elements(rebuilt)
    assert "Revenue | 383,285\nNet income | 96,995" in text
    assert text.index("Results") < text.index("Revenue") < text.index("A paragraph")
    assert [item[2] for item in layout].count("Table") == 1


def test_two_columns_of_prose_are_not_a_table() -> None:
    lines = [
        _at("The company sells its products through", 40, 100 + 15 * i, category="Text")
        for i in range(4)
    ] + [
        _at("its retail and online stores and its direct", 320, 100 + 15 * i, category="Text")
        for i in range(4)
    ]
    assert pdf_table_rows(lines) == lines


def _report_doc() -> ParsedDocument:
    rows = ["Item | 2023 | 2022"] + [
        f"Line {i} of the table | {i},000 | {i},500" for i in range(40)
    ]
    table = "\n".join(rows)
    intro = "Results. " * 30
    text = f"{intro}\n\n{table}\n\nAfter the table."
    t0 = len(intro) + 2
    layout = [
        [0, len(intro), "NarrativeText", 1],
        [t0, t0 + len(table), "Table", 2],
        [t0 + len(table) + 2, len(text), "NarrativeText", 3],
    ]
    return ParsedDocument(doc_id="r", source="r.pdf", text=text, meta={"layout": layout})


def test_table_aware_chunking_keeps_rows_whole_and_heads_each_piece() -> None:
    doc = _report_doc()
    chunks = split_documents([doc], chunk_size=48, chunk_overlap=0, tables=True)
    rows = [m for m in doc.text.split("\n") if m.startswith(("Line", "Item"))]
    for row in rows:  # every row is whole in a chunk's own span
        at = doc.text.index(row)
        assert any(c.start <= at and c.end >= at + len(row) for c in chunks), row
    pieces = [c for c in chunks if c.meta.get("types") == ["Table"]]
    assert len(pieces) > 3
    assert pieces[0].text.startswith("Item | 2023 | 2022\nLine 0 ")
    assert "header" not in pieces[0].meta
    for piece in pieces[1:]:
        assert piece.text.startswith("Item | 2023 | 2022\nLine ")
        assert piece.text.endswith(doc.text[piece.start : piece.end])
        assert piece.meta["pages"] == [2]
    assert chunks[0].meta == {"pages": [1], "types": ["NarrativeText"]}
    assert chunks[-1].text == "After the table." and chunks[-1].meta["pages"] == [3]


def test_without_tables_the_splitter_is_unchanged_but_chunks_carry_their_layout() -> None:
    doc = _report_doc()
    bare = doc.model_copy(update={"meta": {}})
    plain = split_documents([doc], chunk_size=48, chunk_overlap=0)
    same = split_documents([bare], chunk_size=48, chunk_overlap=0)
    assert [(c.start, c.end, c.text) for c in plain] == [(c.start, c.end, c.text) for c in same]
    assert all(c.meta.get("types") for c in plain) and not any(c.meta for c in same)


def test_a_table_row_longer_than_a_chunk_is_cut_by_the_splitter_alone() -> None:
    flat = "Item 2023 2022 " + " ".join(f"Line {i} {i},000 {i},500" for i in range(60))
    doc = ParsedDocument(
        doc_id="f",
        source="f.docx",
        text=f"Intro.\n\n{flat}",
        meta={"layout": [[0, 6, "Title", None], [8, 8 + len(flat), "Table", None]]},
    )
    chunks = split_documents([doc], chunk_size=32, chunk_overlap=0, tables=True)
    assert len(chunks) > 3 and not any("header" in c.meta for c in chunks)
    assert all(c.text == doc.text[c.start : c.end] for c in chunks)


def test_the_tables_option_is_in_the_manifest_only_when_chosen() -> None:
    """Runs made before the option still resume: their description is unchanged."""
    from cofe.pipeline import DefaultPipeline, PipelineConfig

    assert "tables" not in DefaultPipeline(PipelineConfig()).describe()
    assert DefaultPipeline(PipelineConfig(tables=True)).describe()["tables"] is True
