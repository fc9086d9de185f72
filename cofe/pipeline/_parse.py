"""Parsing: files of many formats to plain text, with unstructured, offline.

The text is the elements' texts joined by blank lines, a table written one row a line
(its cells, in order, between `` | ``: a row's label stays with its figures). Where each
element sits is kept in ``meta["layout"]``: ``[start, end, type, page]`` per element
(``type`` unstructured's category -- Title, NarrativeText, ListItem, Table, ...; ``page``
its page number, or None), which the chunker reads for its chunks' metadata and, with
``tables=True``, to keep table rows whole.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib
import logging
import os
import re
import time
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from itertools import pairwise
from pathlib import Path
from typing import Any

from cofe._cache import Cache
from cofe._errors import CofeError, InputError, InputProblem
from cofe._progress import progress_wanted
from cofe._text import decode_text
from cofe.pipeline._bounded import (
    FORK_LOCK,
    BoundedParser,
    ParseFailed,
    ParseLimits,
    fork_available,
)
from cofe.pipeline._html import LXML_DEPTH, read_html
from cofe.pipeline._offline import offline_unstructured
from cofe.runlog import ParsedDocument

SUPPORTED = {
    ".txt": "text",
    ".text": "text",
    ".md": "md",
    ".markdown": "md",
    ".html": "html",
    ".htm": "html",
    ".docx": "docx",
    ".pptx": "pptx",
    ".xlsx": "xlsx",
    ".csv": "csv",
    ".tsv": "csv",
    ".pdf": "pdf",
}
SUPPORTED_SUFFIXES = tuple(SUPPORTED)  # what --docs reads, as error messages list it
PARSER_VERSION = "unstructured-2"  # 2: tables one row a line; element layout in meta
TEXT_PARSER_VERSION = "text-2"  # plain text is read by cofe itself (see parse_text)
# zip-based formats (docx, pptx, xlsx) are refused before the parser sees them when their
# directory promises more than this: a 30 KB file can unpack to gigabytes (and the XML
# parsers behind unstructured hold several times the inflated size in memory)
ZIP_KINDS = frozenset({"docx", "pptx", "xlsx"})
MAX_UNZIPPED_BYTES = 200 * 2**20
MAX_ZIP_RATIO = 100  # per member over 1 MB: real Office XML compresses about 5-20 times
MAX_ZIP_MEMBERS = 20_000
# Office files store members deflated or as they are; zipfile inflates bzip2 and LZMA
# members in one call, whatever their directory declares
ZIP_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
PDF_HINT = (
    "PDF parsing needs unstructured-inference without its dependencies (they would pull a CUDA "
    "torch): pip install --no-deps unstructured-inference==1.6.14"
)
# the packages of the modules unstructured and unstructured-inference import to read a PDF's
# text layer (strategy "fast"), where the module's name is not the package's
_PDF_PACKAGES = {
    "cv2": "opencv-python-headless",
    "pdfminer": "pdfminer.six",
    "pi_heif": "pi-heif",
    "PIL": "pillow",
    "huggingface_hub": "huggingface_hub",
}


def pdf_hint(error: ImportError) -> str:
    """What to install when reading a PDF failed on a missing module: the package that is
    really missing (unstructured-inference itself, or one of the modules it imports)."""
    module = (error.name or "").split(".")[0]
    if not module or module == "unstructured_inference":
        return f"{PDF_HINT} ({error})"
    if not isinstance(error, ModuleNotFoundError):  # there, but not the version expected
        return (
            f"PDF parsing could not import what it needs ({error}): reinstall the PDF "
            'dependencies with pip install "cofe[pdf]"'
        )
    package = _PDF_PACKAGES.get(module, module.replace("_", "-"))
    return (
        f"PDF parsing needs {package} (no module named {module!r}): pip install {package} "
        '(pip install "cofe[pdf]" installs all of the PDF dependencies)'
    )


@dataclass
class ParseResult:
    """Parsed documents in file order, plus every file that could not be parsed and why."""

    documents: list[ParsedDocument] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    seconds: float = 0.0


def doc_id_for(path: Path, root: Path) -> str:
    """A stable id: the path relative to the docs folder, with forward slashes."""
    return path.relative_to(root).as_posix()


_PARTITIONERS = {
    "text": ("unstructured.partition.text", "partition_text"),
    "md": ("unstructured.partition.md", "partition_md"),
    "html": ("unstructured.partition.html", "partition_html"),
    "docx": ("unstructured.partition.docx", "partition_docx"),
    "pptx": ("unstructured.partition.pptx", "partition_pptx"),
    "xlsx": ("unstructured.partition.xlsx", "partition_xlsx"),
    "csv": ("unstructured.partition.csv", "partition_csv"),
}


class Refused(InputError):
    """A file cofe will not parse (a zip bomb, a link out of the docs folder), and why."""


def check_zip(path: Path) -> None:
    """Refuse an archive whose directory promises too much (sizes, ratio, member count), or
    whose members do not inflate to the sizes it declares. The declared sizes are checked
    first; then each member is inflated a megabyte at a time, up to one byte past its declared
    size: a parser reading a member whole inflates it in one call, however far past its
    declared size it goes, so a member that lies is refused before the parser sees it."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            _check_directory(members)
            for member in members:
                _check_inflates_as_declared(archive, member)
    except zipfile.BadZipFile as error:
        raise InputError(
            f"not a valid zip archive (Office files are zip archives): {error}"
        ) from None


def _check_directory(members: list[zipfile.ZipInfo]) -> None:
    if len(members) > MAX_ZIP_MEMBERS:
        raise Refused(f"refused: {len(members):,} files inside (limit {MAX_ZIP_MEMBERS:,})")
    total = sum(m.file_size for m in members)
    if total > MAX_UNZIPPED_BYTES:
        raise Refused(
            f"refused: unpacks to {total / 2**20:,.0f} MB (limit "
            f"{MAX_UNZIPPED_BYTES // 2**20} MB); a zip bomb?"
        )
    for member in members:
        if member.compress_type not in ZIP_METHODS:
            raise Refused(
                f"refused: {member.filename} is compressed with method "
                f"{member.compress_type} (Office files use deflate or none)"
            )
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > 2**20 and ratio > MAX_ZIP_RATIO:
            raise Refused(
                f"refused: {member.filename} inflates {ratio:,.0f} times (limit "
                f"{MAX_ZIP_RATIO}); a zip bomb?"
            )


def _check_inflates_as_declared(archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> None:
    """Inflate the member in bounded reads, one byte further than declared, and compare."""
    probe = copy.copy(member)
    probe.file_size = member.file_size + 1  # zipfile stops at the size it is told
    inflated = 0
    try:
        with archive.open(probe) as stream:
            while block := stream.read(2**20):
                inflated += len(block)
    except (zipfile.BadZipFile, RuntimeError, EOFError, zlib.error):
        inflated = -1  # the checksum failed (more or fewer bytes), encrypted, or cut short
    if inflated != member.file_size:
        raise Refused(
            f"refused: {member.filename} does not inflate to the "
            f"{member.file_size:,} bytes its directory declares; a zip bomb?"
        )


def _partition(path: Path, kind: str) -> list[Any]:
    """The partitioner the extension names (not content sniffing: a corrupt .docx must fail)."""
    offline_unstructured()
    if kind == "pdf":
        try:  # unstructured imports some of what it needs only once it reads the file
            from unstructured.partition.pdf import partition_pdf

            # "fast" reads the text layer with pdfminer: no OCR model, no layout model
            pdf_elements: list[Any] = partition_pdf(
                filename=str(path), strategy="fast", languages=["eng"]
            )
            return pdf_elements
        except ImportError as error:
            raise RuntimeError(pdf_hint(error)) from None
    module, name = _PARTITIONERS[kind]
    partition = getattr(importlib.import_module(module), name)
    if kind in ZIP_KINDS:
        if not zipfile.is_zipfile(path):
            raise InputError(f"not a valid .{kind} file (Office files are zip archives): corrupt?")
        check_zip(path)
    elements: list[Any] = partition(filename=str(path), languages=["eng"])  # unstructured's
    return elements


def _tiny_pdf() -> bytes:
    """A one-page PDF saying "Warm up." (what ``warm`` parses to load the PDF readers)."""
    content = b"BT /F1 12 Tf 20 100 Td (Warm up.) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    return pdf_bytes(objects)


def pdf_bytes(objects: list[bytes]) -> bytes:
    """A PDF of these objects (numbered from 1), with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % at for at in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


# what ``warm`` parses per kind: the readers load what they need on their first file
_WARM_SAMPLES = {
    "md": b"# Warm\n\nUp.\n",
    "html": b"<html><body><p>Warm up.</p></body></html>",
    "csv": b"a,b\n1,2\n",
}
_warmed: set[str] = set()


def warm(kind: str) -> None:
    """Load the parser of ``kind`` in this process, by importing it and parsing a tiny
    sample of the kind, so that a worker forked after it (``cofe.pipeline._bounded``)
    spends a file's time bound on the file, not on importing unstructured (16 s for the
    PDF reader on a busy machine, 3 s more on its first page). Failures are left for the
    real file to report."""
    if kind == "text" or kind in _warmed:
        return
    _warmed.add(kind)
    import tempfile

    sample = _tiny_pdf() if kind == "pdf" else _WARM_SAMPLES.get(kind)
    with contextlib.suppress(Exception), library_noise():
        offline_unstructured()
        if sample is None:  # Office formats: the partitioner and the sentence model
            importlib.import_module(_PARTITIONERS[kind][0])
            from unstructured.nlp.tokenize import sent_tokenize

            sent_tokenize("Warm up. Twice.")
            return
        with tempfile.TemporaryDirectory(prefix="cofe-warm-") as folder:
            path = Path(folder) / f"warm.{kind}"
            path.write_bytes(sample)
            _partition(path, kind)


def parse_text(path: Path, doc_id: str) -> ParsedDocument:
    """A plain-text file, read by cofe (linear in its size, whatever its shape): decoded with
    its detected encoding, line ends unified, paragraphs (blocks between blank lines) kept,
    each stripped, joined by blank lines. The encoding used is recorded in ``meta``."""
    text, encoding, warning = decode_text(path.read_bytes())
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    paragraphs = [block.strip() for block in _BLANK_LINES.split(text)]
    paragraphs = [p for p in paragraphs if p]
    if not paragraphs:
        raise InputError("no text found")
    meta = {
        "format": "text",
        "parser": TEXT_PARSER_VERSION,
        "encoding": encoding,
        "elements": {"Paragraph": len(paragraphs)},
    }
    if warning:
        meta["warning"] = warning
    return ParsedDocument(doc_id=doc_id, source=path.name, text="\n\n".join(paragraphs), meta=meta)


_BLANK_LINES = re.compile(r"\n[ \t\f\v]*\n")


def parse_file(path: Path, doc_id: str) -> ParsedDocument:
    """Parse one file; raises on corrupt or unsupported input."""
    kind = SUPPORTED.get(path.suffix.lower())
    if kind is None:
        raise InputError(f"unsupported file type {path.suffix or '(none)'!r}")
    if kind == "text":
        return parse_text(path, doc_id)
    if kind == "pdf":
        with path.open("rb") as handle:
            if not handle.read(1024).lstrip().startswith(b"%PDF"):
                raise InputError("not a PDF: the file has no %PDF header (corrupt or misnamed)")
    with library_noise() as noise:  # pypdf's "EOF marker not found" is cofe's to explain
        elements = _partition(path, kind)
    damage = pdf_damage(path, noise) if kind == "pdf" else None
    if kind == "pdf":
        elements = pdf_table_rows(elements)
    text, layout = join_elements(elements)
    warning = f"text may be missing: {damage}" if damage else None
    if kind == "html":
        text, layout, elements, warning = _deep_html(path, text, layout, elements, warning)
    if not text and damage:
        raise InputError(f"no text found: {damage}")
    if not text:
        message = "no text found"
        if kind == "pdf":  # why: damaged, fonts without letters, a scan, blank pages
            message += f" ({pdf_no_text(path)})"
        raise InputError(message)
    categories = Counter(
        el.category if isinstance(el, _Element) else type(el).__name__ for el in elements
    )
    return ParsedDocument(
        doc_id=doc_id,
        source=path.name,
        text=text,
        meta={
            "format": kind,
            "parser": PARSER_VERSION,
            "elements": dict(categories),
            "layout": layout,
            # a damaged PDF whose readable part was kept, HTML read by cofe: a person
            # should look
            **({"warning": warning} if warning else {}),
        },
    )


def _deep_html(
    path: Path, text: str, layout: list[list[Any]], elements: list[Any], warning: str | None
) -> tuple[str, list[list[Any]], list[Any], str | None]:
    """A page nested deeper than lxml reads (``cofe.pipeline._html``): when lxml's reading
    lost text, the page's paragraphs as cofe reads them, said in a warning; else as it was."""
    depth, paragraphs = read_html(decode_text(path.read_bytes())[0])
    ours = "\n\n".join(paragraphs)
    if depth <= LXML_DEPTH - 5 or len("".join(ours.split())) <= len("".join(text.split())):
        return text, layout, elements, warning  # (a margin: lxml counts implied elements)
    said = (
        f"the page nests its elements {depth:,} deep and its HTML parser (lxml) stops at "
        f"{LXML_DEPTH}, dropping the rest of the page"
    )
    if not ours:
        raise InputError(f"no text found ({said}; no text outside it either)")
    at, layout = 0, []
    for paragraph in paragraphs:
        layout.append([at, at + len(paragraph), "NarrativeText", None])
        at += len(paragraph) + len(ELEMENT_SEPARATOR)
    kept = (
        f"{said}: read by cofe as plain paragraphs instead (headings, lists and tables "
        "not told apart)"
    )
    elements = [_Element(p, "NarrativeText", _Meta(None)) for p in paragraphs]
    return ELEMENT_SEPARATOR.join(paragraphs), layout, elements, kept


def pdf_no_text(path: Path) -> str:
    """Why a PDF that is not cut short gave no text, read from its pages with pypdf: its
    page tree or a page's content cannot be read (a loop of references), its text is drawn
    without letters (fonts with no Unicode map), it holds only images (a scan: OCR), or its
    pages are empty."""
    from pypdf import PdfReader

    with library_noise():
        try:
            pages = PdfReader(path).pages
            count = len(pages)
        except Exception as error:  # pypdf's errors are many; each says what it found
            return f"the PDF is damaged: its pages cannot be listed ({error})"
        if count == 0:
            return "the PDF has no pages"
        unreadable: list[tuple[int, Exception]] = []
        drawn = scanned = 0
        for number, page in enumerate(pages, 1):
            if number > MAX_PAGES_EXAMINED:
                break
            try:
                contents = page.get_contents()
                data = contents.get_data() if contents is not None else b""
                images = _has_images(page, data)
            except Exception as failure:
                unreadable.append((number, failure))
                continue
            drawn += bool(_TEXT_OPERATORS.search(data))
            scanned += images
    if unreadable:
        number, first = unreadable[0]
        pages_said = f"{len(unreadable)} of {count} page(s)" if count > 1 else "its page"
        # pypdf names an object with its Python id: the PDF's object number is what helps
        said = _PYPDF_OBJECT.sub(r"object \1 \2", str(first)).rstrip(".")
        return (
            f"the PDF is damaged: the content of {pages_said} cannot be read (page {number}: "
            f"{said}), so its text cannot be reached; OCR would not help"
        )
    if drawn:
        return (
            f"text is drawn on {drawn} page(s) but with fonts that give no letters (no "
            "Unicode map); the PDF's text cannot be read as text"
        )
    if scanned:
        return "pages of images only: a scanned PDF needs OCR, which cofe does not run"
    return f"its {count} page(s) draw no text and no image: blank"


MAX_PAGES_EXAMINED = 200  # pages pdf_no_text reads: enough to say why, bounded
_PYPDF_OBJECT = re.compile(r"IndirectObject\((\d+), (\d+), \d+\)")
_TEXT_OPERATORS = re.compile(rb"(?:^|[\s)\]>])(?:Tj|TJ|'|\")(?:$|[\s(\[/<])")


def _has_images(page: Any, data: bytes) -> bool:
    """Whether a page draws an image: an image XObject among its resources, or one inline."""
    if re.search(rb"(?:^|\s)BI(?:\s|$)", data):
        return True
    resources: Any = page.get("/Resources")
    objects: Any = resources.get_object().get("/XObject") if resources else None
    if not objects:
        return False
    return any(
        item.get_object().get("/Subtype") == "/Image" for item in objects.get_object().values()
    )


# the libraries that read files log their complaints (pypdf: "EOF marker not found") to
# stderr when nothing else handles them; cofe captures them and says what they mean
NOISY_LOGGERS = ("pypdf", "pdfminer", "unstructured", "PIL")


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def library_noise() -> Iterator[list[str]]:
    """The warnings the parsing libraries log (and Python warnings they raise) while the
    block runs, collected instead of printed."""
    import warnings

    collect = _Collect()
    saved = []
    for name in NOISY_LOGGERS:
        logger = logging.getLogger(name)
        saved.append((logger, logger.propagate))
        logger.addHandler(collect)
        logger.propagate = False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield collect.messages
        collect.messages.extend(str(w.message) for w in caught)
    finally:
        for logger, propagate in saved:
            logger.removeHandler(collect)
            logger.propagate = propagate


_PDF_END = b"%%EOF"


def pdf_damage(path: Path, noise: list[str]) -> str | None:
    """Why a PDF looks damaged, or None: a PDF ends with ``%%EOF`` (in its last kilobyte, as
    readers look for it); a file cut short during a download or a copy does not."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        handle.seek(max(0, size - 1024))
        tail = handle.read()
    said = "; ".join(dict.fromkeys(noise))
    if _PDF_END not in tail:
        reason = (
            f"the PDF is damaged or truncated (it does not end with the %%EOF marker; "
            f"{size:,} bytes: cut short during a download or a copy?)"
        )
        return reason + (f"; the PDF reader said: {said}" if said else "")
    if any("EOF" in m or "xref" in m.lower() or "damaged" in m.lower() for m in noise):
        return f"the PDF is damaged (the PDF reader said: {said})"
    return None


ELEMENT_SEPARATOR = "\n\n"
CELL_SEPARATOR = " | "


def join_elements(elements: Iterable[Any]) -> tuple[str, list[list[Any]]]:
    """The parsed text of a file's elements, and where each sits: ``[start, end, type,
    page]``. A table is written from its HTML (``metadata.text_as_html``) one row a line,
    cells in order; without HTML, its text as unstructured gives it."""
    parts: list[str] = []
    layout: list[list[Any]] = []
    at = 0
    for element in elements:
        category = getattr(element, "category", None) or type(element).__name__
        metadata = getattr(element, "metadata", None)
        html = getattr(metadata, "text_as_html", None) if category == "Table" else None
        text = table_text(html) if html else ""
        if not text:
            text = (getattr(element, "text", "") or "").strip()
        if not text:
            continue
        if parts:
            at += len(ELEMENT_SEPARATOR)
        parts.append(text)
        page = getattr(metadata, "page_number", None)
        layout.append([at, at + len(text), category, page if isinstance(page, int) else None])
        at += len(text)
    return ELEMENT_SEPARATOR.join(parts), layout


_FIGURE = re.compile(r"^[\s$€£¥%()\[\]+\-–—.,:/0-9]*[0-9][\s$€£¥%()\[\]+\-–—.,:/0-9]*$")


@dataclass
class _Element:
    """An element cofe builds (a PDF table put back together), read like unstructured's."""

    text: str
    category: str
    metadata: Any


@dataclass
class _Meta:
    page_number: int | None
    text_as_html: str | None = None


# an element's index on its page and its box: (left, top, right, bottom)
_Box = tuple[int, tuple[float, float, float, float]]


def _box(element: Any) -> tuple[float, float, float, float] | None:
    coordinates = getattr(getattr(element, "metadata", None), "coordinates", None)
    points = getattr(coordinates, "points", None)
    if not points:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs), min(ys), max(xs), max(ys)


def pdf_table_rows(elements: list[Any]) -> list[Any]:
    """A PDF's tables put back together from the text layer's positions.

    pdfminer reads a table column by column (every label, then every figure), so a row's
    label and its figures end up far apart. Here, per page, text boxes side by side on one
    line form a row when one of them after the first is a figure (digits, signs, %); two or
    more such rows one under the other are a table, written one row a line, cells left to
    right, where its first box was read. Two columns of prose never qualify (no figures)."""
    pages: dict[Any, list[_Box]] = {}
    for i, element in enumerate(elements):
        box = _box(element)
        text = (getattr(element, "text", "") or "").strip()
        if box is not None and text and getattr(element, "category", "") != "Table":
            page = getattr(element.metadata, "page_number", None)
            pages.setdefault(page, []).append((i, box))
    replaced: dict[int, Any] = {}
    dropped: set[int] = set()
    for page, boxes in pages.items():
        for table in _tables(elements, boxes):
            cells = [[elements[i].text.strip() for i, _ in row] for row in table]
            html = (
                "<table>"
                + "".join(
                    "<tr>" + "".join(f"<td>{_escape(c)}</td>" for c in row) + "</tr>"
                    for row in cells
                )
                + "</table>"
            )
            members = [i for row in table for i, _ in row]
            text = "\n".join(CELL_SEPARATOR.join(row) for row in cells)
            replaced[min(members)] = _Element(text, "Table", _Meta(page, html))
            dropped.update(members)
    if not replaced:
        return elements
    out = []
    for i, element in enumerate(elements):
        if i in replaced:
            out.append(replaced[i])
        elif i not in dropped:
            out.append(element)
    return out


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _tables(elements: list[Any], boxes: list[_Box]) -> list[list[list[_Box]]]:
    """The tables of one page: runs of two or more table rows, each row its boxes by x."""
    if len(boxes) < 4:
        return []
    heights = sorted(b[3] - b[1] for _, b in boxes)
    height = max(heights[len(heights) // 2], 1.0)
    lines: list[list[_Box]] = []
    for item in sorted(boxes, key=lambda ib: (ib[1][1] + ib[1][3]) / 2):
        middle = (item[1][1] + item[1][3]) / 2
        if lines:
            last = lines[-1]
            if abs(middle - sum((b[1] + b[3]) / 2 for _, b in last) / len(last)) <= height / 2:
                last.append(item)
                continue
        lines.append([item])
    rows: list[list[_Box] | None] = []
    for line in lines:
        line.sort(key=lambda ib: ib[1][0])
        side_by_side = all(a[1][2] <= b[1][0] + 1 for a, b in pairwise(line))
        figures = any(_FIGURE.match(elements[i].text.strip()) for i, _ in line[1:])
        rows.append(line if len(line) > 1 and side_by_side and figures else None)
    tables: list[list[list[_Box]]] = []
    run: list[list[_Box]] = []
    previous_bottom = 0.0  # the bottom of the run's last row (read only while a run is open)
    for row in rows:
        if row is not None and (
            not run or (min(b[1] for _, b in row) - previous_bottom) <= 2.5 * height
        ):
            run.append(row)
            previous_bottom = max(b[3] for _, b in row)
            continue
        if len(run) >= 2:
            tables.append(run)
        run = [row] if row is not None else []
        if row is not None:
            previous_bottom = max(b[3] for _, b in row)
    if len(run) >= 2:
        tables.append(run)
    return tables


class _TableRows(HTMLParser):
    """The rows of an HTML table, as lists of cell texts (whitespace collapsed)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            if not self.rows:
                self.rows.append([])
            self._cell = []
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def table_text(html: str) -> str:
    """A table one row a line, its cells in order between `` | `` (empty rows left out)."""
    reader = _TableRows()
    reader.feed(html)
    reader.close()
    rows = [row for row in reader.rows if any(row)]
    return "\n".join(CELL_SEPARATOR.join(row) for row in rows)


def find_documents(root: Path, problems: list[InputProblem] | None = None) -> list[Path]:
    """Every file under ``root`` in a stable order (hidden files skipped). A link that leads
    out of ``root``, or nowhere (missing target, a loop), is skipped and reported in
    ``problems``; a file reached twice (through a link inside ``root``) is listed once, under
    its own name rather than a link's."""
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such file or folder")
    inside = root.resolve()
    listed: dict[Path, Path] = {}  # the real file -> the path it is listed under
    for path in sorted(root.rglob("*")):  # links to folders are not followed: reported below
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError) as error:  # RuntimeError: a loop of links (< 3.13)
            target = os.readlink(path) if path.is_symlink() else error
            _report(
                problems,
                path,
                f"skipped: a link to {target}, which leads nowhere "
                "(a missing file or a loop of links)",
            )
            continue
        if not real.is_relative_to(inside):
            _report(problems, path, f"skipped: a link to {real}, outside the documents folder")
            continue
        if not real.is_file():
            continue
        known = listed.get(real)
        if known is None or (known.is_symlink() and not path.is_symlink()):
            listed[real] = path  # a file's own name wins over a link to it
    return sorted(listed.values())


def _report(problems: list[InputProblem] | None, path: Path, message: str) -> None:
    if problems is not None:
        problems.append(InputProblem(str(path), None, None, message))


def _file_key(path: Path) -> str:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    kind = SUPPORTED.get(path.suffix.lower())
    version = TEXT_PARSER_VERSION if kind == "text" else PARSER_VERSION
    return f"{version}:{path.suffix.lower()}:{digest}"


def page_count(path: Path) -> int:
    """A file's pages, for progress: a PDF's (read from its page tree, not parsed), else 1."""
    if SUPPORTED.get(path.suffix.lower()) != "pdf":
        return 1
    try:
        with library_noise():  # a damaged PDF's complaints are the parse's to explain
            from pypdf import PdfReader

            return max(1, len(PdfReader(path).pages))
    except Exception:  # unreadable here: the parse says why
        return 1


HEARTBEAT_SECONDS = 1.0  # how often a bar is redrawn while one long file is parsed


@contextlib.contextmanager
def parsing_progress(paths: list[Path], show: bool) -> Iterator[Callable[[Path | None], None]]:
    """A progress bar over the pages of ``paths`` (documents done, pages, elapsed time, an
    ETA from the pages parsed so far, and the file being parsed), redrawn every second while
    one file takes long -- so ``progress_lines`` prints a line every 10 s off a terminal.
    Yields ``step(path)``: ``path`` is being parsed now (None: the last one is done)."""
    if not show or not paths:
        yield lambda _path: None
        return
    import sys
    import threading

    from tqdm import tqdm

    pages = {path: page_count(path) for path in paths}
    bar = tqdm(
        total=sum(pages.values()),
        desc=f"parsing {len(paths)} document(s)",
        unit="page",
        file=sys.stderr,
        dynamic_ncols=True,
    )
    done: list[Path] = []
    current: list[Path] = []  # the file being parsed (none between files)
    stop = threading.Event()

    def step(path: Path | None) -> None:
        if current:
            bar.update(pages[current[0]])
            done.append(current.pop())
        if path is not None:
            current.append(path)
        now = f"; now {path.name} ({pages[path]} page(s))" if path is not None else ""
        bar.set_postfix_str(f"{len(done)}/{len(paths)} documents{now}", refresh=True)

    def heartbeat() -> None:
        while not stop.wait(HEARTBEAT_SECONDS):
            with FORK_LOCK:  # never mid-write when a parsing worker is forked
                bar.refresh()

    beat = threading.Thread(target=heartbeat, name="cofe-parse-progress", daemon=True)
    beat.start()
    try:
        yield step
    finally:
        stop.set()
        beat.join()
        bar.close()


def parse_documents(
    root: str | os.PathLike[str],
    *,
    cache: Cache | None = None,
    progress: bool | None = None,
    limits: ParseLimits | None = None,
) -> ParseResult:
    """Parse every file under ``root``. A file that fails is reported and skipped.
    ``progress``: show a bar over documents and pages (None: when ``progress_wanted``).
    ``limits``: each file's time and memory bound (None: ``ParseLimits.from_env()``); a file past
    one is skipped and said, the others parsed (``cofe.pipeline._bounded``)."""
    root = Path(root)
    started = time.perf_counter()
    result = ParseResult()
    paths = find_documents(root, result.problems)
    base = root if root.is_dir() else root.parent
    show = progress_wanted() if progress is None else progress
    bounded = BoundedParser(limits or ParseLimits.from_env()) if fork_available() else None
    try:
        with parsing_progress(paths, show) as step:
            for path in paths:
                step(path)
                _parse_one(path, base, cache, result, bounded)
            step(None)
    finally:
        if bounded is not None:
            bounded.close()
    result.seconds = time.perf_counter() - started
    return result


def _parse_one(
    path: Path,
    base: Path,
    cache: Cache | None,
    result: ParseResult,
    bounded: BoundedParser | None = None,
) -> None:
    """One file parsed (or read from the cache) into ``result``, or its problem recorded."""
    doc_id = doc_id_for(path, base)
    try:
        key = _file_key(path) if cache else None
        stored = cache.get_json("parsed", key) if cache and key is not None else None
        if stored is not None:  # the same bytes parsed before, perhaps under another name
            doc = ParsedDocument.model_validate({**stored, "doc_id": doc_id, "source": path.name})
        else:
            if bounded is not None:
                kind = SUPPORTED.get(path.suffix.lower())
                if kind is not None and kind not in _warmed:
                    warm(kind)
                    bounded.close()  # the next worker is forked with the parser loaded
                doc = bounded.parse(path, doc_id, page_count(path))
            else:
                doc = parse_file(path, doc_id)
            if cache and key is not None:
                cache.put_json("parsed", key, doc.model_dump(mode="json"))
        result.documents.append(doc)
        if doc.meta.get("warning"):  # kept, but a person should look (a guessed encoding)
            result.problems.append(
                InputProblem(str(path), None, None, f"kept: {doc.meta['warning']}")
            )
    except Exception as error:  # any parser failure skips only this file
        # a bound the file went past is named by the bound; cofe's own refusals read as
        # they are; another library's error is named by its type
        if isinstance(error, ParseFailed):
            shown = f"{error.kind}: {error}" if error.kind else str(error)
        elif isinstance(error, CofeError):
            shown = str(error)
        else:
            shown = f"{type(error).__name__}: {error}"
        message = f"skipped: {shown}"
        result.problems.append(InputProblem(str(path), None, None, message))


def documents_from_texts(texts: Iterable[tuple[str, str]]) -> list[ParsedDocument]:
    """Already-plain texts as parsed documents: ``(doc_id, text)`` pairs."""
    return [
        ParsedDocument(doc_id=doc_id, source=doc_id, text=text, meta={"format": "text"})
        for doc_id, text in texts
    ]
