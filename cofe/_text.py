"""Bytes of unknown encoding to text: UTF-8 when they are, else the most likely legacy one.

Used for plain-text documents and for CSV files people saved from a
spreadsheet (Excel's plain "CSV" is windows-1252, not UTF-8). Also the one rule for CSV
cells a spreadsheet must not run as formulas (``neutralise`` and ``restore``): the review
CSV and the results folder's tables use it.
"""

from __future__ import annotations

import codecs
import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from charset_normalizer import CharsetMatch


def decode_text(data: bytes) -> tuple[str, str, str | None]:
    """``(text, encoding, warning)`` of a plain-text document. UTF-8 when the bytes are UTF-8
    (a BOM is dropped), UTF-16 or UTF-32 when a BOM says so, else the encoding
    charset-normalizer finds most likely; the warning says when that is a guess the bytes
    cannot settle."""
    try:
        return data.decode("utf-8-sig"), "utf-8", None
    except UnicodeDecodeError:
        pass
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(encoding, "replace"), encoding, None
    western_text = _strict(data, "cp1252")
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # an optional dependency: the Western default, said out loud
        return (
            data.decode("cp1252", "replace"),
            "cp1252",
            _guess("cp1252", "install charset-normalizer to detect"),
        )
    # accented letters between ASCII ones (one high byte at a time) are a Latin code page: a
    # double-byte reading (Big5, GBK) would put one CJK character inside a Latin word; and
    # text with no NUL byte is not UTF-16 or UTF-32 (their ASCII has one in every unit)
    wide = b"\0" in data
    western = not wide and _single_high_bytes(data)
    matches = list(
        from_bytes(
            data,
            cp_isolation=list(_LATIN) if western else None,
            cp_exclusion=None if wide else list(_WIDE),
        )
    )
    if not matches:
        if western and western_text is not None:
            return western_text, "cp1252", _guess("cp1252", "no code page fits well")
        return (
            data.decode("utf-8", "replace"),
            "utf-8",
            "not UTF-8 and no other encoding fits: undecodable bytes replaced by U+FFFD",
        )
    best = matches[0]
    if western or best.encoding in _LATIN:
        text, encoding, warning = _latin(matches, western_text)
    else:
        text, encoding, warning = str(best), best.encoding, None
        rivals = [m.encoding for m in matches[1:5] if m.chaos <= best.chaos and str(m) != text]
        if rivals and best.coherence == 0:  # no language recognised to choose between them
            warning = _guess(encoding, f"{', '.join(rivals)} fit as well")
    if warning is None and best.chaos >= 0.1:
        warning = _guess(encoding, f"{best.percent_chaos:.0f} % of it reads as noise")
    return text, encoding, warning


def _latin(matches: list[CharsetMatch], western_text: str | None) -> tuple[str, str, str | None]:
    """Single-byte Latin code pages differ only in their accented letters, which a short text
    cannot tell apart (French comes out as Baltic cp1257): windows-1252, the Western default
    (WHATWG's too), is taken unless it puts symbols inside words (Polish 'Wisła' read as
    cp1252 is 'Wis³a'), or charset-normalizer recognises a language of the other code page in
    the other reading and none of windows-1252's in the windows-1252 one."""
    best = matches[0]
    text = str(best)
    if western_text is None or _inner_symbols(western_text) > _inner_symbols(text):
        return text, best.encoding, None
    if western_text == text:
        return text, "cp1252", None
    cp1252 = next((m for m in matches if "cp1252" in m.could_be_from_charset), None)
    western = (
        cp1252 is not None
        and cp1252.language in _WESTERN
        and cp1252.coherence >= best.coherence - 0.1
    )
    if best.language in _LANGUAGES.get(best.encoding, ()) and not western:
        if best.coherence >= 0.3:
            return text, best.encoding, None
        return western_text, "cp1252", _guess("cp1252", f"{best.language} in {best.encoding}?")
    if best.language == "Unknown":  # too little text to recognise a language
        return western_text, "cp1252", _guess("cp1252", f"or {best.encoding}")
    return western_text, "cp1252", None


_BOMS = [
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
]
_WIDE = ("utf_16", "utf_16_le", "utf_16_be", "utf_32", "utf_32_le", "utf_32_be")
_LATIN = ("cp1252", "cp1250", "cp1257", "cp1254", "iso8859_15")  # Latin-script, single-byte
_LANGUAGES = {  # the languages the other Latin code pages are for (charset-normalizer's names)
    "cp1250": {
        "Croatian",
        "Czech",
        "Hungarian",
        "Polish",
        "Romanian",
        "Serbian",
        "Slovak",
        "Slovene",
    },
    "cp1257": {"Estonian", "Lithuanian"},
    "cp1254": {"Turkish"},
}
_WESTERN = {
    "Danish",
    "Dutch",
    "English",
    "Finnish",
    "French",
    "German",
    "Indonesian",
    "Italian",
    "Norwegian",
    "Portuguese",
    "Spanish",
    "Swedish",
}
_HIGH_RUN = re.compile(rb"[\x80-\xff]+")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_APOSTROPHES = "’‘´`·"


def _guess(encoding: str, why: str) -> str:
    return f"not UTF-8; decoded as {encoding}, a guess ({why}): check the text"


def _strict(data: bytes, encoding: str) -> str | None:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        return None


def _single_high_bytes(data: bytes) -> bool:
    """Most non-ASCII bytes stand alone, as the accented letters of a Latin code page do."""
    runs = [len(run) for run in _HIGH_RUN.findall(data)]
    return bool(runs) and sum(n == 1 for n in runs) >= 0.8 * len(runs)


def _inner_symbols(text: str) -> int:
    """Non-ASCII characters that are not letters but sit between two letters: how a text
    read with the wrong code page looks ('Wis³a', 'Za¿ó³æ')."""
    count = 0
    for match in _NON_ASCII.finditer(text, 1, max(len(text) - 1, 1)):
        i = match.start()
        char = text[i]
        if not char.isalpha() and char not in _APOSTROPHES:
            count += text[i - 1].isalpha() and text[i + 1].isalpha()
    return count


def file_encoding(path: str | os.PathLike[str], sample_bytes: int = 2**20) -> str:
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


# Spreadsheets run a cell that starts with one of these as a formula (CSV injection, see
# OWASP); a leading apostrophe is also escaped, so that removing one gives the value back.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")


def neutralise(value: str) -> str:
    """A CSV cell a spreadsheet will show as text, never run (undone by ``restore``): a value
    starting like a formula, or with an apostrophe, gets a leading apostrophe."""
    return "'" + value if value.startswith(FORMULA_START) else value


def restore(value: str) -> str:
    """The value ``neutralise`` was given: one leading apostrophe removed."""
    return value[1:] if value.startswith("'") else value
