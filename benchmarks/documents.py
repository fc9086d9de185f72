"""Real-looking documents of every format the built-in pipeline reads, scored against gold.

    python benchmarks/documents.py [--sizes 256,1024] [--formats pdf,docx,...]
                                   [--overlap TOKENS] [--workdir DIR] [--json FILE]

One annual report -- headings, paragraphs, a bullet list, an income statement, net sales by
category and by region, and a table of national GDP figures -- is written as PDF (two
columns of text, tables as positioned text, a running header and a page footer: what a
text layer looks like), DOCX (headings, real tables), PPTX (bullet slides, table slides),
XLSX (one sheet a table), CSV (one file a table), HTML and Markdown, with the libraries
teams use (matplotlib for the PDF, python-docx, python-pptx, openpyxl). The figures follow
public tables (Apple's FY2023 10-K; World Bank GDP, rounded); what is checked is only that
the documents' own facts survive.

Questions ask for a table row (its label and its 2023 figure: one information point of two
keywords), a heading-scoped paragraph fact and a bullet. Per format the benchmark prints:

* parse seconds (after a first, untimed parse that imports the parser's libraries), per MB
  of input, and the Python heap's peak while parsing (tracemalloc: memory lxml or pdfminer
  hold in C is not in it);
* facts kept: questions whose every keyword is in the parsed text (plain ``str.find``,
  case-folded, whitespace collapsed);
* rows in order: table-row questions whose label is followed by its figure on the same line
  of the parsed text;
* per chunk size, default chunking and ``tables=True``: split points (gold: the row or fact
  is in the parsed text but no chunk's offsets cover it whole) and the agreement of cofe's
  verdict stage with gold taken from offsets (never from cofe's matcher): parse, chunking
  (no chunk covers the evidence span), retrieval (no covering chunk in the context),
  generation (the answer lacks a keyword), pass.

The default pipeline (BM25 pool of 30, top 4, extractive generator) runs one corpus per
format, so a fact is found only in its own format's files.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import sys
import time
import tracemalloc
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

WORK = ROOT / "benchmarks" / "_work" / "documents"
FORMATS = ("pdf", "docx", "pptx", "xlsx", "csv", "html", "md")

# --------------------------------------------------------------------------------------------
# The report's content

TITLE = "Example Inc. Annual Report 2023"
COMPANY = "Example Inc."


@dataclass(frozen=True)
class Table:
    name: str  # a heading, a sheet name, a file name
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    question: str  # with {label}


INCOME = Table(
    "Consolidated Statements of Operations",
    ("Line item (USD millions)", "2023", "2022"),
    (
        ("Net sales, products", "298,085", "316,199"),
        ("Net sales, services", "85,200", "78,129"),
        ("Total net sales", "383,285", "394,328"),
        ("Cost of sales, products", "189,282", "201,471"),
        ("Cost of sales, services", "24,855", "22,075"),
        ("Total cost of sales", "214,137", "223,546"),
        ("Gross margin", "169,148", "170,782"),
        ("Research and development", "29,915", "26,251"),
        ("Selling, general and administrative", "24,932", "25,094"),
        ("Total operating expenses", "54,847", "51,345"),
        ("Operating income", "114,301", "119,437"),
        ("Other income/(expense), net", "(565)", "(334)"),
        ("Income before provision for income taxes", "113,736", "119,103"),
        ("Provision for income taxes", "16,741", "19,300"),
        ("Net income", "96,995", "99,803"),
    ),
    "What was {label} in fiscal 2023 in the consolidated statements of operations?",
)
SEGMENTS = Table(
    "Net Sales by Category and Region",
    ("Category or region (USD millions)", "2023", "2022"),
    (
        ("iPhone", "200,583", "205,489"),
        ("Mac", "29,357", "40,177"),
        ("iPad", "28,300", "29,292"),
        ("Wearables, Home and Accessories", "39,845", "41,241"),
        ("Services", "85,200", "78,129"),
        ("Americas", "162,560", "169,658"),
        ("Europe", "94,294", "95,118"),
        ("Greater China", "72,559", "74,200"),
        ("Japan", "24,257", "25,977"),
        ("Rest of Asia Pacific", "29,615", "29,375"),
    ),
    "What were net sales of {label} in 2023?",
)
GDP = Table(
    "Gross Domestic Product of Selected Economies",
    ("Economy", "2023", "2022"),
    tuple(
        (country, f"{a:,.1f}", f"{b:,.1f}")
        for country, a, b in (
            ("United States", 27360.9, 25744.1),
            ("China", 17794.8, 17881.8),
            ("Germany", 4456.1, 4082.5),
            ("Japan", 4212.9, 4256.4),
            ("India", 3549.9, 3353.5),
            ("United Kingdom", 3340.0, 3088.8),
            ("France", 3030.9, 2775.3),
            ("Italy", 2254.9, 2046.9),
            ("Brazil", 2173.7, 1951.9),
            ("Canada", 2140.1, 2161.5),
            ("Russian Federation", 2021.4, 2266.0),
            ("Mexico", 1789.1, 1463.3),
            ("Korea, Rep.", 1712.8, 1673.9),
            ("Australia", 1723.8, 1776.1),
            ("Spain", 1580.7, 1417.8),
            ("Indonesia", 1371.2, 1319.1),
            ("Netherlands", 1118.1, 1009.4),
            ("Saudi Arabia", 1067.6, 1108.6),
            ("Turkiye", 1108.0, 905.8),
            ("Switzerland", 884.9, 818.4),
            ("Poland", 811.2, 689.8),
            ("Argentina", 640.6, 631.1),
            ("Sweden", 593.3, 579.4),
            ("Belgium", 632.2, 583.4),
        )
    ),
    "What was the gross domestic product of {label} in 2023 in USD billions?",
)
CITIES = (
    "Amsterdam",
    "Athens",
    "Atlanta",
    "Auckland",
    "Austin",
    "Bangkok",
    "Barcelona",
    "Beijing",
    "Berlin",
    "Bogota",
    "Boston",
    "Brussels",
    "Budapest",
    "Buenos Aires",
    "Cairo",
    "Chicago",
    "Copenhagen",
    "Dallas",
    "Delhi",
    "Denver",
    "Dubai",
    "Dublin",
    "Frankfurt",
    "Geneva",
    "Hamburg",
    "Helsinki",
    "Hong Kong",
    "Houston",
    "Istanbul",
    "Jakarta",
    "Johannesburg",
    "Kuala Lumpur",
    "Lagos",
    "Lima",
    "Lisbon",
    "London",
    "Los Angeles",
    "Madrid",
    "Manila",
    "Melbourne",
    "Mexico City",
    "Miami",
    "Milan",
    "Montreal",
    "Moscow",
    "Mumbai",
    "Munich",
    "Nairobi",
    "Oslo",
    "Paris",
    "Prague",
    "Rome",
    "Santiago",
    "Seoul",
    "Shanghai",
    "Singapore",
    "Stockholm",
    "Sydney",
    "Taipei",
    "Tokyo",
    "Toronto",
    "Vienna",
    "Warsaw",
    "Zurich",
)


def _stores() -> Table:
    """A long table (generated figures, a fixed seed): the kind a chunk boundary cuts."""
    import random

    draw = random.Random(7)
    rows = []
    for city in CITIES:
        stores, staff = draw.randint(1, 40), draw.randint(80, 4000)
        rows.append((city, f"{draw.randint(20, 2400):,}", str(stores), f"{staff:,}"))
    return Table(
        "Retail Stores by City",
        ("City", "Net sales 2023 (USD millions)", "Stores", "Employees"),
        tuple(rows),
        "What were net sales in {label} in 2023?",
    )


STORES = _stores()
TABLES = (INCOME, SEGMENTS, GDP, STORES)

SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Business Overview",
        (
            f"{COMPANY} designs, manufactures and markets smartphones, personal computers, tablets, "
            "wearables and accessories, and sells a variety of related services. The fiscal year "
            "ends on the last Saturday of September.",
            "The company sells its products through its retail and online stores and its direct "
            "sales force, as well as through third-party cellular network carriers, wholesalers, "
            "retailers and resellers.",
        ),
    ),
    (
        "Human Capital",
        (
            "As of September 30, 2023, the company had approximately 161,000 full-time equivalent "
            "employees.",
            "The company believes that its compensation and benefits are competitive and that "
            "diversity and inclusion make it stronger.",
        ),
    ),
    (
        "Properties",
        (
            "The company's headquarters are located in Cupertino, California, where it owns "
            "about 11.7 million square feet of building space.",
            "Outside the United States, the company owns facilities for manufacturing operations "
            "in Cork, Ireland, and leases space for research and development in many countries.",
        ),
    ),
    (
        "Capital Return Program",
        (
            "During 2023 the company repurchased 471 million shares of its common stock for "
            "$76.6 billion.",
            "The company also paid dividends and dividend equivalents of $15.0 billion during "
            "the year.",
        ),
    ),
)
BULLETS = (
    "Outlook for 2024",
    (
        "Capital expenditures of about 10.9 billion dollars planned",
        "Gross margin expected between 45 and 46 percent",
        "Operating expenses expected near 14.4 billion dollars a quarter",
        "Effective tax rate expected around 16 percent",
    ),
)
# filler so that chunk boundaries fall where they fall in long reports
FILLER = (
    "Forward-looking statements in this report are subject to risks and uncertainties that "
    "could cause actual results to differ materially. Readers are cautioned not to place undue "
    "reliance on them, and the company assumes no obligation to revise or update them."
)


@dataclass(frozen=True)
class Question:
    qid: str
    query: str
    keywords: tuple[str, ...]  # one information point
    kind: str  # row | paragraph | bullet
    file: str  # which file of the format holds the evidence


def questions(fmt: str) -> list[Question]:
    """Every question the format's files can answer (sheets and CSV files hold no prose)."""
    out = []
    for t, table in enumerate(TABLES):
        file = table_file(fmt, t)
        for r, row in enumerate(table.rows):
            out.append(
                Question(
                    f"{fmt}-t{t}r{r}",
                    table.question.format(label=row[0]),
                    (row[0], row[1]),
                    "row",
                    file,
                )
            )
    if fmt in ("xlsx", "csv"):
        return out
    facts = (
        ("161,000", "full-time equivalent employees", "How many employees did the company have?"),
        ("Cupertino", "11.7 million square feet", "Where is the headquarters and how large?"),
        ("471 million shares", "$76.6 billion", "How many shares did the company repurchase?"),
        ("Cork, Ireland", "manufacturing operations", "Where does it own manufacturing?"),
    )
    for i, (a, b, query) in enumerate(facts):
        out.append(Question(f"{fmt}-p{i}", query, (a, b), "paragraph", f"report.{fmt}"))
    for i, bullet in enumerate(BULLETS[1]):
        words = bullet.split()
        out.append(
            Question(
                f"{fmt}-b{i}",
                f"What is the 2024 outlook: {' '.join(words[:3])}?",
                (" ".join(words[:2]), " ".join(words[-3:])),
                "bullet",
                f"report.{fmt}",
            )
        )
    return out


def table_file(fmt: str, t: int) -> str:
    if fmt == "csv":
        return f"table{t}.csv"
    return f"report.{fmt}"


# --------------------------------------------------------------------------------------------
# Writers


def write_format(fmt: str, folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    writer = {
        "pdf": write_pdf,
        "docx": write_docx,
        "pptx": write_pptx,
        "xlsx": write_xlsx,
        "csv": write_csv,
        "html": write_html,
        "md": write_md,
    }[fmt]
    return writer(folder)


def _flow() -> list[tuple[str, Any]]:
    """The report in reading order: ("title"|"heading"|"para"|"bullets"|"table", content)."""
    flow: list[tuple[str, Any]] = [("title", TITLE), ("para", FILLER)]
    for i, (heading, paragraphs) in enumerate(SECTIONS):
        flow.append(("heading", heading))
        flow += [("para", p) for p in paragraphs]
        if i < len(TABLES):
            flow.append(("heading", TABLES[i].name))
            flow.append(("para", f"The table below shows {TABLES[i].name.lower()}."))
            flow.append(("table", TABLES[i]))
        flow.append(("para", FILLER))
    for table in TABLES[len(SECTIONS) :]:
        flow += [("heading", table.name), ("para", FILLER), ("table", table)]
    flow.append(("heading", BULLETS[0]))
    flow.append(("bullets", BULLETS[1]))
    return flow


def write_docx(folder: Path) -> list[Path]:
    import docx

    document = docx.Document()
    for kind, content in _flow():
        if kind == "title":
            document.add_heading(content, 0)
        elif kind == "heading":
            document.add_heading(content, 1)
        elif kind == "para":
            document.add_paragraph(content)
        elif kind == "bullets":
            for item in content:
                document.add_paragraph(item, style="List Bullet")
        else:
            table = document.add_table(rows=0, cols=len(content.header))
            table.style = "Table Grid"
            for row in (content.header, *content.rows):
                cells = table.add_row().cells
                for cell, value in zip(cells, row, strict=True):
                    cell.text = value
    path = folder / "report.docx"
    document.save(path)
    return [path]


def write_pptx(folder: Path) -> list[Path]:
    import pptx
    from pptx.util import Inches, Pt

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[0])
    slide.shapes.title.text = TITLE
    slide.placeholders[1].text = COMPANY
    for heading, paragraphs in SECTIONS:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = heading
        body = slide.placeholders[1].text_frame
        body.text = paragraphs[0]
        for more in paragraphs[1:]:
            body.add_paragraph().text = more
    for table in TABLES:  # a slide holds about a dozen rows: the header repeats per slide
        for first in range(0, len(table.rows), 12):
            rows = table.rows[first : first + 12]
            slide = deck.slides.add_slide(deck.slide_layouts[5])
            slide.shapes.title.text = table.name
            shape = slide.shapes.add_table(
                len(rows) + 1,
                len(table.header),
                Inches(0.5),
                Inches(1.5),
                Inches(9),
                Inches(0.3) * (len(rows) + 1),
            )
            for r, row in enumerate((table.header, *rows)):
                for c, value in enumerate(row):
                    cell = shape.table.cell(r, c)
                    cell.text = value
                    cell.text_frame.paragraphs[0].font.size = Pt(11)
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = BULLETS[0]
    body = slide.placeholders[1].text_frame
    body.text = BULLETS[1][0]
    for item in BULLETS[1][1:]:
        body.add_paragraph().text = item
    path = folder / "report.pptx"
    deck.save(path)
    return [path]


def write_xlsx(folder: Path) -> list[Path]:
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for table in TABLES:
        sheet = book.create_sheet(table.name[:31])
        for row in (table.header, *table.rows):
            sheet.append(list(row))
    path = folder / "report.xlsx"
    book.save(path)
    return [path]


def write_csv(folder: Path) -> list[Path]:
    paths = []
    for t, table in enumerate(TABLES):
        path = folder / table_file("csv", t)
        with path.open("w", newline="", encoding="utf-8") as handle:
            csv.writer(handle).writerows((table.header, *table.rows))
        paths.append(path)
    return paths


def write_html(folder: Path) -> list[Path]:
    from html import escape

    parts = [f"<html><head><title>{escape(TITLE)}</title></head><body>"]
    for kind, content in _flow():
        if kind == "title":
            parts.append(f"<h1>{escape(content)}</h1>")
        elif kind == "heading":
            parts.append(f"<h2>{escape(content)}</h2>")
        elif kind == "para":
            parts.append(f"<p>{escape(content)}</p>")
        elif kind == "bullets":
            parts.append("<ul>" + "".join(f"<li>{escape(i)}</li>" for i in content) + "</ul>")
        else:
            head = "".join(f"<th>{escape(c)}</th>" for c in content.header)
            body = "".join(
                "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>"
                for row in content.rows
            )
            parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    parts.append("</body></html>")
    path = folder / "report.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    return [path]


def write_md(folder: Path) -> list[Path]:
    lines = []
    for kind, content in _flow():
        if kind == "title":
            lines += [f"# {content}", ""]
        elif kind == "heading":
            lines += [f"## {content}", ""]
        elif kind == "para":
            lines += [content, ""]
        elif kind == "bullets":
            lines += [f"- {item}" for item in content] + [""]
        else:
            lines.append("| " + " | ".join(content.header) + " |")
            lines.append("|" + " --- |" * len(content.header))
            lines += ["| " + " | ".join(row) + " |" for row in content.rows]
            lines.append("")
    path = folder / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return [path]


def write_pdf(folder: Path) -> list[Path]:
    """A4 pages through matplotlib's PDF backend: a running header and a page footer, prose in
    two columns, tables as positioned text (a label column and figure columns)."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    path = folder / "report.pdf"
    state = {"figure": None, "y": 0.0, "column": 0, "page": 0}
    line = 0.018

    with PdfPages(path) as pdf:

        def new_page() -> None:
            if state["figure"] is not None:
                pdf.savefig(state["figure"])
                plt.close(state["figure"])
            state["page"] += 1
            figure = plt.figure(figsize=(8.27, 11.69))
            figure.text(0.07, 0.97, f"{COMPANY} | Annual Report 2023", fontsize=8)
            figure.text(0.88, 0.03, f"Page {state['page']}", fontsize=8)
            state.update(figure=figure, y=0.92, column=0)

        def room(lines: int) -> None:
            if state["y"] - lines * line < 0.07:
                if state["column"] == 0:
                    state.update(column=1, y=state["top"])
                else:
                    new_page()
                    state["top"] = state["y"]

        def x() -> float:
            return 0.07 if state["column"] == 0 else 0.53

        new_page()
        state["top"] = state["y"]
        for kind, content in _flow():
            if kind == "title":
                state["figure"].text(0.07, state["y"], content, fontsize=16, weight="bold")
                state["y"] -= 3 * line
                state["top"] = state["y"]
            elif kind == "heading":
                room(3)
                state["figure"].text(x(), state["y"], content, fontsize=11, weight="bold")
                state["y"] -= 1.6 * line
            elif kind in ("para", "bullets"):
                items = [content] if kind == "para" else [f"- {i}" for i in content]
                for item in items:
                    for wrapped in textwrap.wrap(item, 52):
                        room(1)
                        state["figure"].text(x(), state["y"], wrapped, fontsize=9)
                        state["y"] -= line
                    state["y"] -= 0.4 * line
            else:  # a table spans both columns below the text; a long one runs on
                rows = (content.header, *content.rows)
                if state["column"] == 1 or state["y"] - min(len(rows), 10) * line < 0.07:
                    new_page()
                for r, row in enumerate(rows):
                    if state["y"] < 0.07:
                        new_page()
                    figure = state["figure"]
                    figure.text(
                        0.07, state["y"], row[0], fontsize=9, weight="bold" if r == 0 else None
                    )
                    for c, value in enumerate(row[1:]):
                        figure.text(0.55 + 0.14 * c, state["y"], value, fontsize=9)
                    state["y"] -= line
                state["y"] -= line
                state["top"] = state["y"]
                state["column"] = 0
        pdf.savefig(state["figure"])
        plt.close(state["figure"])
    return [path]


# --------------------------------------------------------------------------------------------
# Gold from the parsed text (plain string search, never cofe's matcher)


def _fold(text: str) -> tuple[str, list[int]]:
    """Case-folded text with whitespace runs as one space, and each character's offset."""
    out, offsets, space = [], [], False
    for i, char in enumerate(text):
        if char.isspace():
            if not space and out:
                out.append(" ")
                offsets.append(i)
            space = True
            continue
        space = False
        out.append(char.casefold())
        offsets.append(i)
    return "".join(out), offsets


def _find_all(haystack: str, needle: str) -> list[int]:
    found, at = [], haystack.find(needle)
    while at >= 0:
        found.append(at)
        at = haystack.find(needle, at + 1)
    return found


def evidence_span(parsed: str, keywords: Sequence[str]) -> tuple[int, int] | None:
    """The shortest stretch of the parsed text holding every keyword (first keyword first,
    as a row's label precedes its figure), in parsed-text offsets; None if one is missing."""
    folded, offsets = _fold(parsed)
    needles = [_fold(k)[0] for k in keywords]
    hits = [_find_all(folded, n) for n in needles]
    if not all(hits):
        return None
    best: tuple[int, int] | None = None
    for start in hits[0]:
        end = start + len(needles[0])
        ok = True
        for needle, places in zip(needles[1:], hits[1:], strict=True):
            after = [p for p in places if p >= start]
            if not after:
                ok = False
                break
            end = max(end, after[0] + len(needle))
        if ok and (best is None or end - start < best[1] - best[0]):
            best = (start, end)
    if best is None:  # a figure before its label (a column read before another)
        lo = min(h[0] for h in hits)
        hi = max(h[-1] + len(n) for h, n in zip(hits, needles, strict=True))
        best = (lo, hi)
    return offsets[best[0]], offsets[best[1] - 1] + 1


def row_in_order(parsed: str, keywords: Sequence[str]) -> bool:
    """The label is followed by its figure on one line of the parsed text."""
    label, figure = (_fold(k)[0] for k in keywords[:2])
    for text_line in parsed.split("\n"):
        folded = _fold(text_line)[0]
        at = folded.find(label)
        if at >= 0 and folded.find(figure, at + len(label)) >= 0:
            return True
    return False


@dataclass
class Gold:
    stage: str
    span: tuple[int, int] | None


def gold_stage(question: Question, parsed: str | None, chunks: list, record: Any) -> Gold:
    span = evidence_span(parsed, question.keywords) if parsed is not None else None
    if span is None:
        return Gold("parse", None)
    covering = {
        c.chunk_id
        for c in chunks
        if c.start is not None and c.start <= span[0] and c.end >= span[1]
    }
    if not covering:
        return Gold("chunking", span)
    context = [r.chunk_id for r in (record.context or record.pool or [])][:4]
    if not covering & set(context):
        return Gold("retrieval", span)
    answer = _fold(record.answer or "")[0]
    if not all(_fold(k)[0] in answer for k in question.keywords):
        return Gold("generation", span)
    return Gold("pass", span)


# --------------------------------------------------------------------------------------------
# Runs


@dataclass
class FormatReport:
    format: str
    files: int
    megabytes: float
    parse_seconds: float
    heap_peak_mb: float
    elements: dict[str, int]
    questions: int
    facts_kept: int
    rows: int
    rows_in_order: int
    runs: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def run_format(
    fmt: str, sizes: Sequence[int], workdir: Path, cache, overlap: int | None = None
) -> FormatReport:
    from cofe import EvalSample, ScoreConfig, SourceRef, score_run, write_evalset
    from cofe.pipeline import DefaultPipeline, PipelineConfig, parse_file
    from cofe.runlog import read_run
    from cofe.runner import run_pipeline

    folder = workdir / fmt
    docs = folder / "docs"
    paths = write_format(fmt, docs)
    megabytes = sum(p.stat().st_size for p in paths) / 2**20
    # the parser's first use imports its libraries: not the file's cost (a failure is
    # reported by the timed parse below, which fails the same way)
    with contextlib.suppress(Exception):
        parse_file(paths[0], paths[0].name)
    tracemalloc.start()
    started = time.perf_counter()
    parsed, problems = [], []
    for path in paths:
        try:
            parsed.append(parse_file(path, path.name))
        except Exception as error:  # reported, as cofe's parse_documents would
            problems.append(f"{path.name}: {type(error).__name__}: {error}")
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    texts = {d.doc_id: d.text for d in parsed}
    elements: Counter = Counter()
    for d in parsed:
        elements.update(d.meta.get("elements", {}))
    asked = questions(fmt)
    kept = [q for q in asked if q.file in texts and evidence_span(texts[q.file], q.keywords)]
    rows = [q for q in asked if q.kind == "row"]
    ordered = [q for q in rows if q.file in texts and row_in_order(texts[q.file], q.keywords)]
    report = FormatReport(
        fmt,
        len(paths),
        round(megabytes, 3),
        seconds,
        peak,
        dict(elements),
        len(asked),
        len(kept),
        len(rows),
        len(ordered),
        problems=problems,
    )
    samples = [
        EvalSample(
            id=q.qid,
            query=q.query,
            fine_keywords=[list(q.keywords)],
            reference_answer=" ".join(q.keywords),
            source=SourceRef(doc=q.file),
            meta={"kind": q.kind},
        )
        for q in asked
    ]
    evalset = folder / "evalset.jsonl"
    write_evalset(evalset, samples)
    for size in sizes:
        for tables in (False, True):
            out = folder / f"chunk{size}{'-tables' if tables else ''}"
            extra = {} if overlap is None else {"chunk_overlap": overlap}
            config = PipelineConfig(chunk_size=size, tables=tables, **extra)
            run_pipeline(
                DefaultPipeline(config),
                evalset,
                out,
                documents=parsed,
                cache=cache,
                fresh=True,
                concurrency=1,
                progress=False,
            )
            log = read_run(out)
            result = score_run(out, config=ScoreConfig())
            verdicts = result.verdicts.set_index("sample_id")
            by_doc: dict[str, list] = {}
            for chunk in log.chunks.values():
                by_doc.setdefault(chunk.doc_id, []).append(chunk)
            agree = total = split_gold = split_cofe = split_points = 0
            confusion: Counter = Counter()
            for q in asked:
                record = log.records.get(q.qid)
                if record is None or q.qid not in verdicts.index:
                    continue
                gold = gold_stage(q, texts.get(q.file), by_doc.get(q.file, []), record)
                row = verdicts.loc[q.qid]
                if row["verdict"] in ("unscorable", "pipeline_error"):
                    continue
                stage = row["stage"] if isinstance(row["stage"], str) else "pass"
                total += 1
                agree += stage == gold.stage
                confusion[(gold.stage, stage)] += stage != gold.stage
                split_gold += gold.stage == "chunking"
                split_cofe += row["verdict"] == "chunk_split"
                split_points += "no chunk in scope holds the whole point" in row["explanation"]
            report.runs.append(
                {
                    "size": size,
                    "tables": tables,
                    "chunks": len(log.chunks),
                    "scored": total,
                    "agreement": agree / total if total else None,
                    "split_gold": split_gold,
                    "chunk_split": split_cofe,
                    "split_points": split_points,
                    "disagreements": {f"{g} -> {c}": n for (g, c), n in confusion.items() if n},
                }
            )
    return report


def markdown(reports: list[FormatReport]) -> str:
    head = ["format", "KB", "parse s", "s/MB", "heap peak MB", "facts kept", "rows in order"]
    sizes = sorted({r["size"] for rep in reports for r in rep.runs})
    for size in sizes:
        head += [f"{size}: split (gold) default → tables", f"{size}: agree default → tables"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for rep in reports:
        mb = max(rep.megabytes, 1e-9)
        row = [
            rep.format,
            f"{rep.megabytes * 1024:.0f}",
            f"{rep.parse_seconds:.2f}",
            f"{rep.parse_seconds / mb:.0f}",
            f"{rep.heap_peak_mb:.1f}",
            f"{rep.facts_kept}/{rep.questions}",
            f"{rep.rows_in_order}/{rep.rows}",
        ]
        for size in sizes:
            runs = {r["tables"]: r for r in rep.runs if r["size"] == size}
            base, tab = runs.get(False), runs.get(True)
            if base is None or tab is None:
                row += ["–", "–"]
                continue
            row.append(f"{base['split_gold']} → {tab['split_gold']}")
            row.append(f"{_pct(base['agreement'])} → {_pct(tab['agreement'])}")
        lines.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        "Per run: cofe's chunk_split verdicts (of them, split points: every keyword in "
        "some chunk, none whole), and disagreements (gold → cofe stage):",
    ]
    for rep in reports:
        for r in rep.runs:
            shown = ", ".join(f"{k} {n}" for k, n in r["disagreements"].items()) or "none"
            mode = "tables" if r["tables"] else "default"
            lines.append(
                f"- {rep.format} {r['size']} {mode}: chunk_split {r['chunk_split']} "
                f"({r['split_points']} split points); disagreements: {shown}"
            )
    for rep in reports:
        if rep.problems:
            lines.append(f"- {rep.format} problems: {'; '.join(rep.problems)}")
    return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="256,1024", help="chunk sizes (tokens)")
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument(
        "--overlap",
        type=int,
        default=None,
        help="chunk overlap in tokens (default: the pipeline's, 20)",
    )
    parser.add_argument("--workdir", type=Path, default=WORK)
    parser.add_argument("--cache", type=Path, default=None, help="cofe cache (default: cofe's)")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write JSON here")
    args = parser.parse_args(argv)
    os.environ.setdefault("DO_NOT_TRACK", "1")

    from cofe._cache import Cache, default_cache_dir

    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        parser.error(f"unknown format(s) {unknown}; choose from {FORMATS}")
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    cache = Cache(args.cache or default_cache_dir())
    reports = []
    for fmt in formats:
        started = time.perf_counter()
        reports.append(run_format(fmt, sizes, args.workdir, cache, args.overlap))
        print(f"[{fmt}] done in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    if args.json:
        Path(args.json).write_text(
            json.dumps([r.__dict__ for r in reports], indent=2) + "\n", encoding="utf-8"
        )
    print(markdown(reports))


if __name__ == "__main__":
    main()
