"""Bytes of unknown encoding to text: UTF-8 when they are, else the most likely legacy one.

Used for plain-text documents and for CSV files people saved from a
spreadsheet (Excel's plain "CSV" is windows-1252, not UTF-8).
"""

from __future__ import annotations

import re


def decode_text(data: bytes) -> tuple[str, str, str | None]:
    """``(text, encoding, warning)``: UTF-8 when the bytes are UTF-8 (a BOM is dropped), else
    the encoding charset-normalizer finds most likely; undecodable bytes become U+FFFD."""
    try:
        return data.decode("utf-8-sig"), "utf-8", None
    except UnicodeDecodeError:
        pass
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # an optional dependency: the Western default, said out loud
        return (data.decode("cp1252", "replace"), "cp1252",
                "not UTF-8, read as windows-1252 (install charset-normalizer to detect)")  # fmt: skip
    matches = list(from_bytes(data))
    if not matches:
        return (data.decode("utf-8", "replace"), "utf-8",
                "not UTF-8 and no other encoding fits: undecodable bytes replaced by U+FFFD")  # fmt: skip
    best = matches[0]
    # single-byte Latin code pages differ only in their accented letters, which short texts
    # cannot tell apart (French comes out as Baltic cp1257): among them prefer windows-1252,
    # the Western default browsers also fall back to (WHATWG)
    western = next((m for m in matches if m.encoding == "cp1252"), None)
    if western is not None and _LATIN_SINGLE_BYTE.match(best.encoding):
        best = western
    return str(best), best.encoding, None


_LATIN_SINGLE_BYTE = re.compile(  # Latin-script ones only (not Cyrillic, Greek, Hebrew...)
    r"^(cp125[02478]|iso8859_(1|2|3|4|9|10|13|14|15|16)|latin_1|mac_(latin2|roman|iceland))$"
)


def file_encoding(path, sample_bytes: int = 2**20) -> str:
    """The encoding to open a file with: ``utf-8-sig`` when all of it is UTF-8 (checked a block
    at a time, never read whole), else the one ``decode_text`` finds in its first megabyte."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    with open(path, "rb") as handle:
        head = handle.read(sample_bytes)
        block = head
        try:
            while block:
                decoder.decode(block)
                block = handle.read(2**22)
            decoder.decode(b"", final=True)
            return "utf-8-sig"
        except UnicodeDecodeError:
            pass
    # a multi-byte character cut at the sample's end must not spoil the guess
    return decode_text(head[: len(head) - 3] if len(head) == sample_bytes else head)[1]
