"""The review loop: export an eval set for people (CSV to edit, HTML to read), import their decisions.

In the CSV a reviewer sets ``decision`` to ``accept``, ``reject`` or ``edit``
(empty means not reviewed yet: kept, counted as pending) and may change
``query``, ``coarse_keywords``, ``fine_keywords`` and ``reference_answer``.
A changed row is an edit whatever its decision says, unless rejected.

Keyword cells are JSON, so every structure survives the round trip exactly:
``coarse_keywords`` is a list of strings (``["Super Bowl 50"]``),
``fine_keywords`` a list of information points, each a list of fragments,
a fragment a string or a set of alternatives (``[["Denver", {"any_of":
["24-10", "24–10"]}], ["1889"]]``); ``[]`` is an empty list. A cell that does
not start with ``[`` is read in the older plain syntax (points separated by
`` || ``, fragments by `` | ``, no alternatives, no ``|`` inside a keyword).

Spreadsheets run a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or
a carriage return as a formula (CSV injection, see OWASP). On export such a
cell gets a leading apostrophe, and so does a cell that already starts with
one; on import one leading apostrophe is removed from every cell -- so every
value comes back as it was (``'x`` is written ``''x``). Files exported before
this rule are read the same way, so there a value's own leading apostrophe is
lost.

On import a damaged row is reported as an ``InputProblem`` naming the file,
the row as a spreadsheet numbers it (the header is row 1, a cell spanning
lines is still one row) and the column, and skipped; the other rows are read.
That covers rows with fewer or more cells than the header, a keyword cell
that is not a keyword list, and a row longer than ``MAX_ROW_CHARS``
characters (the csv module's own limit, 131,072 a cell, is raised to that
while reading). A missing column is reported once; its values stay as they
were, except without ``id`` nothing can be applied.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

from pydantic import ValidationError

from cofe._errors import InputProblem
from cofe._text import file_encoding, neutralise, restore
from cofe.evalset import EvalSample, read_evalset, write_evalset

COLUMNS = [
    "id",
    "decision",
    "query_type",
    "query",
    "coarse_keywords",
    "fine_keywords",
    "reference_answer",
    "source",
    "note",
]
DECISIONS = ("", "accept", "reject", "edit")
POINT_SEP, KEYWORD_SEP = " || ", " | "  # the older plain syntax, still read
REQUIRED = COLUMNS[:7]  # source and note are for reading only
MAX_ROW_CHARS = 8 * 2**20  # a longer row (all its cells) is reported, not read

_Item = TypeVar("_Item")
# fine keywords as a cell writes them: points of fragments, a fragment a string or alternatives
_FineJson = list[list[str | dict[str, list[str]]]]


def _json_cell(value: list[str] | _FineJson) -> str:
    return json.dumps(value, ensure_ascii=False)


def _fine_json(sample: EvalSample) -> _FineJson:
    return [
        [k if isinstance(k, str) else {"any_of": list(k.any_of)} for k in point]
        for point in sample.fine_keywords
    ]


def _row(sample: EvalSample) -> dict[str, str]:
    source = sample.source
    where = ""
    if source is not None:
        where = source.doc + (f" [{source.start}:{source.end}]" if source.start is not None else "")
    return {
        "id": sample.id,
        "decision": "",
        "query_type": sample.query_type.value,
        "query": sample.query,
        "coarse_keywords": _json_cell(sample.coarse_keywords),
        "fine_keywords": _json_cell(_fine_json(sample)),
        "reference_answer": sample.reference_answer or "",
        "source": where,
        "note": "; ".join(
            f"repaired {r['from']!r} -> {r['to']!r}" + (f" ({r['why']})" if r.get("why") else "")
            for r in sample.meta.get("annotation", {}).get("repairs", [])
        ),
    }


def export_review(
    evalset: str | os.PathLike[str],
    csv_out: str | os.PathLike[str],
    html_out: str | os.PathLike[str] | None = None,
) -> int:
    samples = read_evalset(evalset).samples
    with open(csv_out, "w", newline="", encoding="utf-8-sig") as handle:  # BOM: Excel reads UTF-8
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for sample in samples:
            writer.writerow({k: neutralise(v) for k, v in _row(sample).items()})
    if html_out is not None:
        rows = "\n".join(
            "<tr>"
            + "".join(f"<td>{html.escape(r[c])}</td>" for c in COLUMNS if c != "decision")
            + "</tr>"
            for r in map(_row, samples)
        )
        head = "".join(f"<th>{c}</th>" for c in COLUMNS if c != "decision")
        Path(html_out).write_text(
            "<!doctype html><meta charset='utf-8'><title>cofe eval set review</title>"
            "<style>body{font-family:sans-serif}td,th{border:1px solid #ccc;padding:4px;"
            "vertical-align:top}table{border-collapse:collapse}</style>"
            f"<p>{len(samples)} samples. Record decisions in the CSV.</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>\n",
            encoding="utf-8",
        )
    return len(samples)


@dataclass
class ReviewResult:
    kept: list[EvalSample]
    counts: Counter[str] = field(default_factory=Counter)
    problems: list[InputProblem] = field(default_factory=list)


def _split_points(text: str) -> list[list[str]]:
    return [
        [k.strip() for k in p.split(KEYWORD_SEP.strip()) if k.strip()]
        for p in text.split(POINT_SEP.strip())
        if p.strip()
    ]


def _keyword_cell(
    text: str, legacy: Callable[[str], list[_Item]], item_type: type[_Item], expected: str
) -> list[_Item]:
    """A keyword cell: JSON when it starts with ``[`` (each item of ``item_type``), else the
    older plain syntax read by ``legacy``."""
    text = text.strip()
    if not text.startswith("["):
        return legacy(text)
    value = json.loads(text)
    if not isinstance(value, list) or not all(isinstance(item, item_type) for item in value):
        raise ValueError(f"expected a JSON list of {expected}")
    items: list[_Item] = value  # checked just above
    return items


def _coarse_cell(text: str) -> list[str]:
    return _keyword_cell(
        text,
        lambda t: [k.strip() for k in t.split(KEYWORD_SEP.strip()) if k.strip()],
        str,
        "strings",
    )


def _fine_cell(text: str) -> list[list[Any]]:
    """Information points; their fragments are checked when the sample is validated."""
    return _keyword_cell(text, _split_points, list, "information points (lists)")


class _RowProblem(ValueError):
    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field


# Where the csv module's parser (excel dialect, not strict) is inside a row: needed to tell
# a line break that ends a row from one inside a quoted cell without parsing the cells.
_CELL_START, _UNQUOTED, _QUOTED, _QUOTE_IN_QUOTED = range(4)


def _scan(text: str, state: int) -> int:
    """The parser's state after ``text`` (no line break in it), in O(quotes + commas) steps:
    a quote opens a quoted cell only at the cell's start, ``""`` inside one is a quote."""
    i = 0
    while i < len(text):
        if state == _QUOTED:
            i = text.find('"', i) + 1
            if i == 0:
                return _QUOTED
            state = _QUOTE_IN_QUOTED
        elif state == _UNQUOTED:
            i = text.find(",", i) + 1
            if i == 0:
                return _UNQUOTED
            state = _CELL_START
        elif text[i] == '"':  # _CELL_START or _QUOTE_IN_QUOTED: a doubled quote, or an opening
            state, i = _QUOTED, i + 1
        else:  # text after a closing quote is kept as in an unquoted cell, as csv does
            state = _UNQUOTED
    return state


def _records(handle: TextIO) -> Iterator[tuple[str, bool]]:
    """Each row's text and whether it is within ``MAX_ROW_CHARS`` (a longer one is cut there).

    Lines are read ``MAX_ROW_CHARS`` at a time and an oversize row is not kept whole, so a
    huge cell costs bounded memory and the rows after it are found where they start."""
    kept: list[str] = []
    size, state, cut_cr = 0, _CELL_START, False
    while piece := handle.readline(MAX_ROW_CHARS):
        if cut_cr and piece == "\n":  # the rest of a "\r\n" that the size limit cut in two
            cut_cr = False
            continue
        if size <= MAX_ROW_CHARS:
            kept.append(piece)
        size += len(piece)
        body = piece.rstrip("\r\n")
        state = _scan(body, state)
        ends_row = body != piece and state != _QUOTED  # a line break outside a quoted cell
        cut_cr = ends_row and len(piece) == MAX_ROW_CHARS and piece.endswith("\r")
        if ends_row:
            yield "".join(kept)[:MAX_ROW_CHARS], size <= MAX_ROW_CHARS
            kept, size, state = [], 0, _CELL_START
    if kept:
        yield "".join(kept)[:MAX_ROW_CHARS], size <= MAX_ROW_CHARS


def _cells(text: str) -> list[str]:
    return next(csv.reader(io.StringIO(text, newline="")), [])


def _column(header: list[str], index: int) -> str:
    return header[index] if index < len(header) else f"column {index + 1}"


def _rows(path: Path, problems: list[InputProblem]) -> Iterator[tuple[int, dict[str, str]]]:
    """``(row number, cells by column)`` for each well-formed row, numbered as a spreadsheet
    shows them (the header is row 1); missing columns, short, long and oversize rows are
    problems. A missing column is left out of the cells, so its values stay as they were."""

    def problem(row: int, column: str | None, message: str) -> None:
        problems.append(InputProblem(str(path), row, column, message))

    limit = csv.field_size_limit()
    # no cell is longer than its row; the default, 131,072 characters, is raised to fit
    csv.field_size_limit(MAX_ROW_CHARS + 1)
    try:
        encoding = file_encoding(path)  # Excel's plain "CSV" is windows-1252, not UTF-8
        if encoding != "utf-8-sig":
            problem(1, None, f'not UTF-8: read as {encoding} (save as "CSV UTF-8" to be sure)')
        with open(path, newline="", encoding=encoding, errors="replace") as handle:
            records = _records(handle)
            header = [restore(h).strip() for h in _cells(next(records, ("", True))[0])]
            if "id" not in header:
                problem(1, "id", "missing column: no row matches a sample, nothing applied")
                return
            for name in REQUIRED:
                if name not in header:
                    problem(1, name, "missing column: its values are left as they were")
            for number, (text, whole) in enumerate(records, start=2):
                cells = _cells(text)
                if not whole:
                    problem(
                        number,
                        _column(header, len(cells) - 1),
                        f"the row is longer than "
                        f"{MAX_ROW_CHARS:,} characters (past the limit in this cell); skipped",
                    )
                elif not any(c.strip() for c in cells):
                    continue
                elif len(cells) != len(header):  # a shifted cell would land in the wrong column
                    problem(
                        number,
                        _column(header, min(len(cells), len(header))),
                        f"{len(cells)} cell(s) where the header has {len(header)}; skipped",
                    )
                else:
                    yield number, {h: restore(c) for h, c in zip(header, cells, strict=True)}
    finally:
        csv.field_size_limit(limit)


def import_review(evalset: str | os.PathLike[str], csv_in: str | os.PathLike[str]) -> ReviewResult:
    """Apply a reviewed CSV to the eval set it was exported from; bad rows are reported, not applied."""
    samples = {s.id: s for s in read_evalset(evalset).samples}
    result = ReviewResult(kept=[])
    decided: dict[str, tuple[str, EvalSample | None]] = {}
    rows_of: dict[str, int] = {}
    for line, row in _rows(Path(csv_in), result.problems):
        try:
            decided_row = _decide(samples, row)
        except _RowProblem as problem:
            result.problems.append(InputProblem(str(csv_in), line, problem.field, str(problem)))
            continue
        except ValidationError as error:
            result.problems.append(InputProblem.from_validation(str(csv_in), line, error))
            continue
        if decided_row[0] in rows_of:  # two rows for one sample: the later one counts
            result.problems.append(
                InputProblem(
                    str(csv_in),
                    line,
                    "id",
                    f"{decided_row[0]!r} also on row {rows_of[decided_row[0]]}; this row counts",
                )
            )
        rows_of[decided_row[0]] = line
        decided[decided_row[0]] = decided_row[1]
    for ident, sample in samples.items():
        kind, reviewed = decided.get(ident, ("pending", sample))
        result.counts[kind] += 1
        if reviewed is not None:
            result.kept.append(reviewed)
    return result


def _decide(
    samples: dict[str, EvalSample], row: dict[str, str]
) -> tuple[str, tuple[str, EvalSample | None]]:
    """``(id, (decision, sample or None))`` for one row, or a ``_RowProblem``.

    A column missing from ``row`` is unchanged."""
    # ids may have surrounding spaces (only blank ones are refused); an exact match wins
    ident = row["id"] if row["id"] in samples else row["id"].strip()
    if ident not in samples:
        raise _RowProblem("id", f"unknown sample id {ident!r}")
    decision = row.get("decision", "").strip().lower()
    if decision not in DECISIONS:
        raise _RowProblem("decision", f"{decision!r} is not one of accept, reject, edit (or empty)")
    original = samples[ident]
    if decision == "reject":
        return ident, ("reject", None)
    changes: dict[str, Any] = {}
    # a cell equal to the original but for surrounding whitespace is unchanged
    for name, was in (
        ("query", original.query),
        ("query_type", original.query_type.value),
        ("reference_answer", original.reference_answer or ""),
    ):
        if name in row and row[name].strip() != was.strip():
            changes[name] = row[name].strip()
    for name, read, was_keywords in (
        ("coarse_keywords", _coarse_cell, list(original.coarse_keywords)),
        ("fine_keywords", _fine_cell, _fine_json(original)),
    ):
        if name not in row:
            continue
        try:
            value = read(row[name])
        except ValueError as error:  # JSONDecodeError included
            raise _RowProblem(name, f"not a keyword list: {error}") from None
        if value != was_keywords:
            changes[name] = value
    if changes or decision == "edit":
        data = original.model_dump(mode="json")
        data.update(changes)
        data["meta"] = {**data.get("meta", {}), "review": "edited"}
        return ident, ("edit", EvalSample.model_validate(data))
    reviewed = original.model_copy(
        update={"meta": {**original.meta, "review": decision or "pending"}}
    )
    return ident, (decision or "pending", reviewed)


def apply_review(
    evalset: str | os.PathLike[str], csv_in: str | os.PathLike[str], out: str | os.PathLike[str]
) -> ReviewResult:
    result = import_review(evalset, csv_in)
    write_evalset(out, result.kept)
    return result
