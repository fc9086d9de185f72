"""Issue 10, items 2, 3, 17 and 18 (links): zip bombs refused, long paragraphs parsed and
chunked in linear time, encodings detected and recorded, links out of the folder skipped.

Then: a member whose directory entry lies about its size, or that is compressed with bzip2 or
LZMA (which zipfile inflates in one call), is refused before a parser reads it; a short Latin-1
or Central European text is not read as UTF-16, Big5 or windows-1252 mojibake, and a guessed
encoding is a problem the run reports; a loop of links or a dangling one does not stop
parsing, and a file is listed under its own name rather than a link's."""

from __future__ import annotations

import os
import random
import struct
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
    assert (
        problem.file == str(bomb)
        and "inflates" in problem.message
        and "zip bomb" in problem.message
    )


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
    assert doc.meta["encoding"].replace("_", "-") in {
        encoding,
        "cp1252",
        "iso8859-1",
        "latin-1",
        "windows-1252",
    }


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


def _declare(path: Path, name: str, size: int) -> None:
    """Make the zip's headers (local and central) declare ``size`` bytes for member ``name``."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(name)
    struct.pack_into("<I", data, info.header_offset + 22, size)
    central = data.find(b"PK\x01\x02")
    while central != -1:
        length = struct.unpack_from("<H", data, central + 28)[0]
        if data[central + 46 : central + 46 + length] == name.encode():
            struct.pack_into("<I", data, central + 24, size)
        central = data.find(b"PK\x01\x02", central + 4)
    path.write_bytes(bytes(data))


def test_a_member_that_lies_about_its_size_is_refused_before_parsing(tmp_path) -> None:
    # 8 MB of zeros declared as 1,000 bytes: the directory passes every size and ratio cap,
    # and python-docx reading the member whole would inflate it all in one call
    docs = tmp_path / "docs"
    docs.mkdir()
    liar = docs / "liar.docx"
    with zipfile.ZipFile(liar, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", b"\0" * 8 * 2**20)
    _declare(liar, "word/document.xml", 1000)
    (docs / "fine.txt").write_text("A fine document.", encoding="utf-8")
    result = parse_documents(docs)
    assert [d.doc_id for d in result.documents] == ["fine.txt"]
    [problem] = result.problems
    assert problem.file == str(liar)
    assert "word/document.xml does not inflate to the 1,000 bytes its directory declares" in (
        problem.message
    )


def test_a_member_compressed_with_bzip2_is_refused(tmp_path) -> None:
    path = tmp_path / "odd.docx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_BZIP2) as archive:
        archive.writestr("word/document.xml", "<w:document/>")
    with pytest.raises(_parse.Refused, match="compressed with method 12"):
        parse_file(path, "odd.docx")


def test_a_member_inflating_over_100_times_is_refused(tmp_path) -> None:
    # about 150 times: under the old limit (200), over the new one
    noise = random.Random(0).randbytes(24 * 2**10)
    path = tmp_path / "dense.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/worksheets/sheet1.xml", noise + b"\0" * 4 * 2**20)
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("xl/worksheets/sheet1.xml")
    assert 120 < info.file_size / info.compress_size < 180
    with pytest.raises(_parse.Refused, match=r"inflates 1\d\d times \(limit 100\)"):
        parse_file(path, "dense.xlsx")


@pytest.mark.parametrize(
    ("encoding", "text"),
    [
        ("latin-1", "Le café était fermé."),  # was read as UTF-16
        ("latin-1", "Fußgängerübergänge"),  # was read as Big5
        ("latin-1", "Über die Brücke gehen Müller und Söhne; Grüße aus München."),
        ("cp1252", "El niño comió piña, “¿qué tal?” — preguntó María, y pagó 5 €."),
        # was read as windows-1252
        (
            "cp1250",
            "Zażółć gęślą jaźń. Wczoraj poszliśmy do kina, a potem na kolację w małej kawiarni.",
        ),
    ],
)
def test_legacy_text_is_not_read_as_mojibake(tmp_path, encoding, text) -> None:
    path = tmp_path / "old.txt"
    path.write_bytes(text.encode(encoding))
    doc = parse_file(path, "old.txt")
    assert doc.text == text
    assert doc.meta["encoding"] == ("cp1250" if encoding == "cp1250" else "cp1252")


def test_a_guessed_encoding_is_decoded_and_reported(tmp_path) -> None:
    # a few Czech words in cp1250 read as well in windows-1252 ('Pøíliš'): too little text to
    # tell; cofe takes the Western default and says it guessed
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "czech.txt").write_bytes("Příliš žlutý kůň úpěl ódy.".encode("cp1250"))
    (docs / "fine.txt").write_text("A fine document.", encoding="utf-8")
    result = parse_documents(docs)
    assert [d.doc_id for d in result.documents] == ["czech.txt", "fine.txt"]
    czech = result.documents[0]
    assert czech.meta["encoding"] == "cp1252" and "a guess" in czech.meta["warning"]
    [problem] = result.problems
    assert problem.file == str(docs / "czech.txt")
    assert problem.message.startswith("kept: not UTF-8; decoded as cp1252, a guess")


def test_undecodable_bytes_are_replaced_and_reported(tmp_path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "noise.txt").write_bytes(bytes(range(256)) * 4)
    result = parse_documents(docs)
    assert len(result.documents) == 1
    [problem] = result.problems
    assert problem.message.startswith("kept: ")


def test_a_loop_of_links_and_a_dangling_link_are_reported_not_fatal(tmp_path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Document a.", encoding="utf-8")
    (docs / "loop1.txt").symlink_to("loop2.txt")
    (docs / "loop2.txt").symlink_to("loop1.txt")
    (docs / "gone.txt").symlink_to("nowhere.txt")
    result = parse_documents(docs)
    assert [d.doc_id for d in result.documents] == ["a.txt"]
    problems = {os.path.basename(p.file): p.message for p in result.problems}
    assert set(problems) == {"loop1.txt", "loop2.txt", "gone.txt"}
    assert problems["gone.txt"] == (
        "skipped: a link to nowhere.txt, which leads nowhere (a missing file or a loop of links)"
    )
    assert problems["loop1.txt"].startswith("skipped: a link to loop2.txt, which leads nowhere")


def test_a_file_is_listed_under_its_own_name_not_a_links(tmp_path) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "sub" / "report.txt").write_text("The report.", encoding="utf-8")
    (docs / "0-latest.txt").symlink_to(docs / "sub" / "report.txt")  # sorts first
    (docs / "current").symlink_to(docs / "sub", target_is_directory=True)
    (docs / "away").symlink_to(tmp_path, target_is_directory=True)
    result = parse_documents(docs)
    assert [d.doc_id for d in result.documents] == ["sub/report.txt"]
    [problem] = result.problems
    assert problem.file == str(docs / "away")
    assert (
        problem.message == f"skipped: a link to {tmp_path.resolve()}, outside the documents folder"
    )
