"""The review loop: export an eval set for people (CSV to edit, HTML to read), import their decisions.

In the CSV a reviewer sets ``decision`` to ``accept``, ``reject`` or ``edit``
(empty means not reviewed yet: kept, counted as pending) and may change
``query``, ``coarse_keywords``, ``fine_keywords`` and ``reference_answer``.
A changed row is an edit whatever its decision says, unless rejected.

Keyword cells are JSON, so every structure survives the round trip exactly:
``coarse_keywords`` is a list of strings (``["Super Bowl 50"]``),
``fine_keywords`` a list of information points, each a list of fragments,
a fragment a string or a set of alternatives (``[["Denver", {"any_of":
["24-10", "24–10"]}], ["1889"]]``). Cells in the older plain syntax (points
separated by `` || ``, fragments by `` | ``) are still read.

Spreadsheets run a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or
a carriage return as a formula (CSV injection). On export such a cell gets a
leading apostrophe, and so does a cell that already starts with one; on
import one leading apostrophe is removed -- every value comes back as it was.
"""

from __future__ import annotations

import csv
import html
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from cofe._errors import InputError, InputProblem
from cofe.evalset import EvalSample, read_evalset, write_evalset

COLUMNS = ["id", "decision", "query_type", "query", "coarse_keywords", "fine_keywords",
           "reference_answer", "source", "note"]  # fmt: skip
DECISIONS = ("", "accept", "reject", "edit")
POINT_SEP, KEYWORD_SEP = " || ", " | "  # the older plain syntax, still read
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")
MAX_CELL_CHARS = 8 * 2**20  # a larger cell is reported, not read


def neutralise(value: str) -> str:
    """A cell a spreadsheet will show as text, never run (undone by ``restore``)."""
    return "'" + value if value.startswith(_FORMULA_START) else value


def restore(value: str) -> str:
    return value[1:] if value.startswith("'") else value


def _json_cell(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def _fine_json(sample: EvalSample) -> list:
    return [[k if isinstance(k, str) else {"any_of": list(k.any_of)} for k in point]
            for point in sample.fine_keywords]  # fmt: skip


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
            f"repaired {r['from']!r} -> {r['to']!r}"
            for r in sample.meta.get("annotation", {}).get("repairs", [])
        ),
    }


def export_review(evalset: str | os.PathLike[str], csv_out: str | os.PathLike[str],
                  html_out: str | os.PathLike[str] | None = None) -> int:  # fmt: skip
    samples = read_evalset(evalset).samples
    with open(csv_out, "w", newline="", encoding="utf-8-sig") as handle:  # BOM: Excel reads UTF-8
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for sample in samples:
            writer.writerow({k: neutralise(v) for k, v in _row(sample).items()})
    if html_out is not None:
        rows = "\n".join(
            "<tr>" + "".join(f"<td>{html.escape(r[c])}</td>" for c in COLUMNS if c != "decision") + "</tr>"
            for r in map(_row, samples)
        )  # fmt: skip
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
    counts: Counter = field(default_factory=Counter)
    problems: list[InputProblem] = field(default_factory=list)


def _split_points(text: str) -> list[list[str]]:
    return [[k.strip() for k in p.split(KEYWORD_SEP.strip()) if k.strip()]
            for p in text.split(POINT_SEP.strip()) if p.strip()]  # fmt: skip


def _coarse_cell(text: str) -> list[str]:
    text = text.strip()
    if text.startswith("["):
        value = json.loads(text)
        if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
            raise ValueError("expected a JSON list of strings")
        return value
    return [k.strip() for k in text.split(KEYWORD_SEP.strip()) if k.strip()]


def _fine_cell(text: str) -> list:
    text = text.strip()
    if text.startswith("["):
        value = json.loads(text)
        if not isinstance(value, list) or not all(isinstance(p, list) for p in value):
            raise ValueError("expected a JSON list of information points (lists)")
        return value
    return _split_points(text)


class _RowProblem(ValueError):
    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field


def _rows(path: Path, problems: list[InputProblem]):
    """``(line, row)`` for each well-formed row; short, long and oversize rows are problems."""
    limit = csv.field_size_limit()
    csv.field_size_limit(MAX_CELL_CHARS)
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            try:
                header = [restore(h).strip() for h in next(reader)]
            except StopIteration:
                header = []
            missing = set(COLUMNS[:7]) - set(header)
            if missing:
                raise InputError(InputProblem(str(path), 1, None,
                    f"missing column(s): {', '.join(sorted(missing))}"))  # fmt: skip
            while True:
                try:
                    cells = next(reader)
                except StopIteration:
                    return
                except csv.Error as error:  # a cell over the size limit, a stray NUL...
                    problems.append(InputProblem(str(path), reader.line_num, None,
                        f"unreadable row ({error}; cells are limited to {MAX_CELL_CHARS:,} "
                        "characters); skipped"))  # fmt: skip
                    continue
                if not any(c.strip() for c in cells):
                    continue
                if len(cells) != len(header):
                    problems.append(InputProblem(str(path), reader.line_num, None,
                        f"{len(cells)} cell(s) where the header has {len(header)}; skipped"))  # fmt: skip
                    continue
                yield reader.line_num, {h: restore(c) for h, c in zip(header, cells, strict=True)}
    finally:
        csv.field_size_limit(limit)


def import_review(evalset: str | os.PathLike[str], csv_in: str | os.PathLike[str]) -> ReviewResult:
    """Apply a reviewed CSV to the eval set it was exported from; bad rows are reported, not applied."""
    samples = {s.id: s for s in read_evalset(evalset).samples}
    result = ReviewResult(kept=[])
    decided: dict[str, tuple[str, EvalSample | None]] = {}
    for line, row in _rows(Path(csv_in), result.problems):
        try:
            decided_row = _decide(samples, row)
        except _RowProblem as problem:
            result.problems.append(InputProblem(str(csv_in), line, problem.field, str(problem)))
            continue
        except ValidationError as error:
            result.problems.append(InputProblem.from_validation(str(csv_in), line, error))
            continue
        decided[decided_row[0]] = decided_row[1]
    for ident, sample in samples.items():
        kind, reviewed = decided.get(ident, ("pending", sample))
        result.counts[kind] += 1
        if reviewed is not None:
            result.kept.append(reviewed)
    return result


def _decide(samples: dict[str, EvalSample], row: dict[str, str]):
    """``(id, (decision, sample or None))`` for one row, or a ``_RowProblem``."""
    ident = row["id"].strip()
    if ident not in samples:
        raise _RowProblem("id", f"unknown sample id {ident!r}")
    decision = row["decision"].strip().lower()
    if decision not in DECISIONS:
        raise _RowProblem("decision", f"{decision!r} is not one of accept, reject, edit (or empty)")
    original = samples[ident]
    if decision == "reject":
        return ident, ("reject", None)
    changes: dict = {}
    # a cell equal to the original but for surrounding whitespace is unchanged
    if row["query"].strip() != original.query.strip():
        changes["query"] = row["query"].strip()
    for name, read, was in (
        ("coarse_keywords", _coarse_cell, list(original.coarse_keywords)),
        ("fine_keywords", _fine_cell, _fine_json(original)),
    ):
        try:
            value = read(row[name])
        except ValueError as error:  # JSONDecodeError included
            raise _RowProblem(name, f"not a keyword list: {error}") from None
        if value != was:
            changes[name] = value
    if row["reference_answer"].strip() != (original.reference_answer or "").strip():
        changes["reference_answer"] = row["reference_answer"].strip()
    if row["query_type"].strip() != original.query_type.value:
        changes["query_type"] = row["query_type"].strip()
    if changes or decision == "edit":
        data = original.model_dump(mode="json")
        data.update(changes)
        data["meta"] = {**data.get("meta", {}), "review": "edited"}
        return ident, ("edit", EvalSample.model_validate(data))
    reviewed = original.model_copy(
        update={"meta": {**original.meta, "review": decision or "pending"}}
    )
    return ident, (decision or "pending", reviewed)


def apply_review(evalset, csv_in, out) -> ReviewResult:
    result = import_review(evalset, csv_in)
    write_evalset(out, result.kept)
    return result
