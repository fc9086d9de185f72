"""Issue 10, items 2, 3, 17 and 18 (links): zip bombs refused, long paragraphs parsed and
chunked in linear time, encodings detected and recorded, links out of the folder skipped."""

from __future__ import annotations

import random
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("unstructured")
from cofe.pipeline import _parse
from cofe.pipeline._chunk import split_documents
from cofe.pipeline._parse import parse_documents, parse_file

WORDS = ["harbour", "river", "stone", "market", "north", "light", "ledger", "bridge"]


def _docx_with(path: Path, member_bytes: int) -> Path:
    """A .docx-shaped zip whose document part is ``member_bytes`` of zeros (tiny compressed)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            block = b"\0" * 2**20
            for _ in range(member_bytes // 2**20):
                member.write(block)
    return path


def test_a_zip_bomb_docx_is_refused_and_the_rest_parsed(tmp_path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    bomb = _docx_with(docs / "bomb.docx", 8 * 2**20)
    assert bomb.stat().st_size < 64 * 2**10  # kilobytes on disk, megabytes inflated
    (docs / "fine.txt").write_text("A fine document.", encoding="utf-8")
    result = parse_documents(docs)
    assert [d.doc_id for d in result.documents] == ["fine.txt"]
    [problem] = result.problems
    assert problem.file == str(bomb) and "inflates" in problem.message and "zip bomb" in problem.message


def test_an_archive_promising_too_much_in_total_is_refused(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(_parse, "MAX_UNZIPPED_BYTES", 2**20)
    monkeypatch.setattr(_parse, "MAX_ZIP_RATIO", 10**9)
    bomb = _docx_with(tmp_path / "big.docx", 2 * 2**20)
    with pytest.raises(_parse.Refused, match=r"unpacks to 2 MB \(limit 1 MB\)"):
        parse_file(bomb, "big.docx")


def _prose(n_chars: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    parts, size = [], 0
    while size < n_chars:
        word = rng.choice(WORDS) + ("." if rng.random() < 0.07 else "")
        parts.append(word)
        size += len(word) + 1
    return " ".join(parts)


def test_a_five_megabyte_single_line_is_parsed_and_chunked_whole(tmp_path) -> None:
    path = tmp_path / "one-line.txt"
    path.write_text(_prose(5 * 2**20), encoding="utf-8")
    doc = parse_file(path, "one-line.txt")
    assert doc.text == path.read_text(encoding="utf-8").strip()
    chunks = split_documents([doc], chunk_size=256, chunk_overlap=0)
    assert len(chunks) > 1000
    covered = 0
    for chunk in chunks:  # every chunk placed in the text, in order, nothing skipped
        assert chunk.start is not None and doc.text[chunk.start : chunk.end] == chunk.text
        assert doc.text[covered : chunk.start].strip() == ""
        covered = chunk.end
    assert doc.text[covered:].strip() == ""


def test_plain_text_keeps_its_paragraphs(tmp_path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"\xef\xbb\xbfTitle\r\n\r\nFirst line\nsecond line.\n \n\n- a bullet\n")
    doc = parse_file(path, "notes.txt")
    assert doc.text == "Title\n\nFirst line\nsecond line.\n\n- a bullet"
    assert doc.meta["encoding"] == "utf-8" and doc.meta["elements"] == {"Paragraph": 3}


@pytest.mark.parametrize(
    ("encoding", "text"),
    [
        ("latin-1", "Le café était naïve et déjà fermé à Noël. " * 20),
        ("cp1252", "Le café coûte 5 € — « très » cher, déjà. " * 20),
    ],
)
def test_a_legacy_encoding_is_detected_and_recorded(tmp_path, encoding, text) -> None:
    path = tmp_path / "old.txt"
    path.write_bytes(text.encode(encoding))
    doc = parse_file(path, "old.txt")
    assert doc.text == text.strip()
    assert doc.meta["encoding"].replace("_", "-") in {encoding, "cp1252", "iso8859-1", "latin-1",
                                                      "windows-1252"}  # fmt: skip


def test_links_out_of_the_folder_are_skipped_and_links_inside_read_once(tmp_path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the documents folder", encoding="utf-8")
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.txt").write_text("Document a.", encoding="utf-8")
    (docs / "leak.txt").symlink_to(secret)
    (docs / "sub" / "again.txt").symlink_to(docs / "a.txt")
    (docs / "away").symlink_to(tmp_path, target_is_directory=True)
    result = parse_documents(docs)
    assert [d.doc_id for d in result.documents] == ["a.txt"]
    assert all("outside the documents folder" not in d.text for d in result.documents)
    leaks = [p for p in result.problems if "outside the documents folder" in p.message]
    assert str(docs / "leak.txt") in {p.file for p in leaks}
    assert all("skipped: a link to" in p.message for p in leaks)
