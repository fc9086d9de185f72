"""A bad document costs only itself (issue 45, items 12 and 18): each file is parsed under
a time and a memory bound in a worker process, and a file with no text says what is really
wrong with it. Before, a 45 kB PDF of 400,000 text operators parsed for over 300 s at
1.75 GB, a PDF whose content refers to itself never finished, and a looping PDF or a page
nested past lxml's 256 levels was "no text found" ("a scanned PDF needs OCR")."""

from __future__ import annotations

import os
import signal
import time
import zlib
from pathlib import Path

import pytest

from cofe.pipeline import ParseLimits, _parse, parse_documents
from cofe.pipeline._parse import pdf_bytes

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the bounds need fork")

SPAIN = b"BT /F1 12 Tf 72 700 Td (Madrid is the capital of Spain.) Tj ET"
FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
CATALOG = b"<< /Type /Catalog /Pages 2 0 R >>"
PAGES = b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"


def _page(contents: bytes = b"4 0 R", resources: bytes = b"<< /Font << /F1 5 0 R >> >>") -> bytes:
    return (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents "
        + contents
        + b" /Resources "
        + resources
        + b" >>"
    )


def _stream(data: bytes, extra: bytes = b"", length: bytes | None = None) -> bytes:
    declared = length if length is not None else str(len(data)).encode()
    return b"<< /Length " + declared + extra + b" >>\nstream\n" + data + b"\nendstream"


def _pdf(path: Path, objects: list[bytes]) -> Path:
    """A PDF of these objects (numbered from 1), with a correct cross-reference table."""
    path.write_bytes(pdf_bytes(objects))
    return path


def _spain(path: Path) -> Path:
    return _pdf(path, [CATALOG, PAGES, _page(), _stream(SPAIN), FONT])


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "fine.txt").write_text("A fine document about Lisbon.", encoding="utf-8")
    return docs


def _problems(result) -> dict[str, str]:
    return {Path(p.file).name: p.message for p in result.problems}


# --- the bounds, on stand-in parsers (fork inherits the patched parse_file) ------------------


@pytest.fixture
def misbehaving(monkeypatch):
    """``parse_file`` as the real one, except for files named hang, hog and crash: one
    never returns, one takes 600 MB and holds it, one is killed (as the kernel's OOM
    killer does: SIGKILL)."""
    real = _parse.parse_file

    def parse_file(path: Path, doc_id: str):
        if path.stem == "hang":
            while True:
                time.sleep(1)
        if path.stem == "hog":
            held = bytearray(600 * 2**20)  # zero pages: touch each so they are resident
            for at in range(0, len(held), 4096):
                held[at] = 1
            time.sleep(60)
        if path.stem == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        return real(path, doc_id)

    monkeypatch.setattr(_parse, "parse_file", parse_file)


def test_a_file_that_never_finishes_costs_its_time_bound_and_the_others_are_parsed(
    tmp_path: Path, misbehaving
):
    docs = _docs(tmp_path)
    (docs / "hang.txt").write_text("never read", encoding="utf-8")
    (docs / "later.txt").write_text("Parsed after the hang.", encoding="utf-8")
    result = parse_documents(docs, limits=ParseLimits(seconds=1.5), progress=False)
    assert [d.doc_id for d in result.documents] == ["fine.txt", "later.txt"]
    message = _problems(result)["hang.txt"]
    assert message.startswith("skipped: TimeLimit: parsing took longer than 1.5 s")
    assert "the other files go on" in message and "\n" not in message


def test_a_file_that_takes_too_much_memory_is_stopped_at_its_memory_bound(
    tmp_path: Path, misbehaving
):
    docs = _docs(tmp_path)
    (docs / "hog.txt").write_text("never read", encoding="utf-8")
    result = parse_documents(docs, limits=ParseLimits(seconds=30, memory_mb=200), progress=False)
    assert [d.doc_id for d in result.documents] == ["fine.txt"]
    message = _problems(result)["hog.txt"]
    assert message.startswith("skipped: MemoryLimit: parsing took more than 200 MB of memory")


def test_a_parser_that_crashes_costs_only_its_file(tmp_path: Path, misbehaving):
    docs = _docs(tmp_path)
    (docs / "crash.txt").write_text("never read", encoding="utf-8")
    (docs / "zzz.txt").write_text("Parsed by a new worker.", encoding="utf-8")
    result = parse_documents(docs, progress=False)
    assert [d.doc_id for d in result.documents] == ["fine.txt", "zzz.txt"]
    assert _problems(result) == {
        "crash.txt": "skipped: ParserCrashed: the parser died while reading this file "
        "(killed by signal 9 (out of memory?))"
    }


def test_the_bounds_can_be_set_from_the_environment(monkeypatch):
    monkeypatch.setenv("COFE_PARSE_SECONDS", "5")
    monkeypatch.setenv("COFE_PARSE_MEMORY_MB", "0")
    limits = ParseLimits.from_env()
    assert limits.seconds == 5 and limits.memory_mb is None
    monkeypatch.setenv("COFE_PARSE_SECONDS", "soon")
    from cofe._errors import InputError

    with pytest.raises(InputError, match=r"\$COFE_PARSE_SECONDS: must be a number"):
        ParseLimits.from_env()


# --- real hostile files ------------------------------------------------------------------------


@pytest.mark.slow
def test_hostile_pdfs_cost_their_bound_and_the_good_pdf_is_parsed(tmp_path: Path):
    docs = _docs(tmp_path)
    _spain(docs / "good.pdf")
    # a content stream that is a reference to itself: the reader follows it for ever
    _pdf(docs / "self.pdf", [CATALOG, PAGES, _page(), b"4 0 R", FONT])
    # 400,000 text operators deflated into a few kilobytes
    operators = b"BT /F1 12 Tf 72 700 Td " + b"(a) Tj " * 400_000 + b"ET"
    packed = zlib.compress(operators, 9)
    _pdf(
        docs / "operators.pdf",
        [CATALOG, PAGES, _page(), _stream(packed, b" /Filter /FlateDecode"), FONT],
    )
    assert (docs / "operators.pdf").stat().st_size < 50_000
    result = parse_documents(docs, limits=ParseLimits(seconds=8, memory_mb=1024), progress=False)
    assert [d.doc_id for d in result.documents] == ["fine.txt", "good.pdf"]
    assert "Madrid is the capital of Spain." in result.documents[1].text
    problems = _problems(result)
    assert set(problems) == {"self.pdf", "operators.pdf"}
    for message in problems.values():
        assert "Limit: parsing took " in message and "the other files go on" in message


@pytest.mark.slow
def test_a_pdf_without_text_says_why(tmp_path: Path):
    docs = tmp_path / "docs"
    docs.mkdir()
    # the content's /Length refers to the content itself: a loop, not a scan
    _pdf(docs / "loop.pdf", [CATALOG, PAGES, _page(), _stream(SPAIN, length=b"4 0 R"), FONT])
    image = _stream(
        b"\x00\xff\x00\xff",
        b" /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray"
        b" /BitsPerComponent 8",
    )
    draw = b"q 100 0 0 100 50 50 cm /Im1 Do Q"
    _pdf(
        docs / "scan.pdf",
        [CATALOG, PAGES, _page(resources=b"<< /XObject << /Im1 5 0 R >> >>"), _stream(draw), image],
    )
    _pdf(docs / "blank.pdf", [CATALOG, PAGES, _page(resources=b"<< >>"), _stream(b""), FONT])
    problems = _problems(parse_documents(docs, progress=False))
    assert "needs OCR" not in problems["loop.pdf"] and "OCR" not in problems["blank.pdf"]
    assert "the PDF is damaged: the content of its page cannot be read" in problems["loop.pdf"]
    assert "loop" in problems["loop.pdf"] and "IndirectObject" not in problems["loop.pdf"]
    assert "a scanned PDF needs OCR" in problems["scan.pdf"]
    assert "draw no text and no image: blank" in problems["blank.pdf"]


def _nested(depth: int) -> str:
    return (
        "<html><body><p>Paris is the capital of France.</p>"
        + "<div>" * depth
        + "<p>Madrid is the capital of Spain.</p>"
        + "</div>" * depth
        + "<p>Rome is the capital of Italy.</p></body></html>"
    )


def test_html_nested_past_lxmls_depth_is_read_and_said(tmp_path: Path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "shallow.html").write_text(_nested(10), encoding="utf-8")
    (docs / "deep.html").write_text(_nested(300), encoding="utf-8")
    (docs / "abyss.html").write_text(_nested(50_000), encoding="utf-8")
    result = parse_documents(docs, progress=False)
    texts = {d.doc_id: d.text for d in result.documents}
    for name in ("shallow.html", "deep.html", "abyss.html"):  # lxml kept only Paris of these
        for city in ("Paris", "Madrid", "Rome"):
            assert city in texts[name], (name, texts[name])
    problems = _problems(result)
    assert set(problems) == {"deep.html", "abyss.html"}  # the shallow page says nothing
    assert problems["abyss.html"].startswith(
        "kept: the page nests its elements 50,003 deep and its HTML parser (lxml) stops at 255"
    )
    deep = next(d for d in result.documents if d.doc_id == "deep.html")
    assert [row[2] for row in deep.meta["layout"]] == ["NarrativeText"] * 3
