"""The review loop: export an eval set for people (CSV to edit, HTML to read), import their decisions.

In the CSV a reviewer sets ``decision`` to ``accept``, ``reject`` or ``edit``
(empty means not reviewed yet: kept, counted as pending) and may change
``query``, ``coarse_keywords`` (separated by `` | ``), ``fine_keywords``
(points separated by `` || ``, fragments by `` | ``) and ``reference_answer``.
A changed row is an edit whatever its decision says, unless rejected.
"""

from __future__ import annotations

import csv
import html
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
POINT_SEP, KEYWORD_SEP = " || ", " | "


def _keyword_text(keyword) -> str:
    return keyword if isinstance(keyword, str) else KEYWORD_SEP.join(keyword.any_of)


def _fine_text(sample: EvalSample) -> str:
    return POINT_SEP.join(
        KEYWORD_SEP.join(_keyword_text(k) for k in point) for point in sample.fine_keywords
    )


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
        "coarse_keywords": KEYWORD_SEP.join(sample.coarse_keywords),
        "fine_keywords": _fine_text(sample),
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
            writer.writerow(_row(sample))
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


def import_review(evalset: str | os.PathLike[str], csv_in: str | os.PathLike[str]) -> ReviewResult:
    """Apply a reviewed CSV to the eval set it was exported from; bad rows are reported, not applied."""
    samples = {s.id: s for s in read_evalset(evalset).samples}
    result = ReviewResult(kept=[])
    decided: dict[str, tuple[str, EvalSample | None]] = {}
    with open(csv_in, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        missing = set(COLUMNS[:7]) - set(reader.fieldnames or [])
        if missing:
            raise InputError(InputProblem(str(csv_in), 1, None,
                f"missing column(s): {', '.join(sorted(missing))}"))  # fmt: skip
        for row in reader:
            line = reader.line_num
            ident = (row.get("id") or "").strip()
            if ident not in samples:
                result.problems.append(
                    InputProblem(str(csv_in), line, "id", f"unknown sample id {ident!r}")
                )
                continue
            decision = (row.get("decision") or "").strip().lower()
            if decision not in DECISIONS:
                result.problems.append(InputProblem(str(csv_in), line, "decision",
                    f"{decision!r} is not one of accept, reject, edit (or empty)"))  # fmt: skip
                continue
            original = samples[ident]
            if decision == "reject":
                decided[ident] = ("reject", None)
                continue
            changes = {}
            if row["query"].strip() != original.query:
                changes["query"] = row["query"].strip()
            coarse = [
                k.strip() for k in row["coarse_keywords"].split(KEYWORD_SEP.strip()) if k.strip()
            ]
            if KEYWORD_SEP.join(coarse) != KEYWORD_SEP.join(original.coarse_keywords):
                changes["coarse_keywords"] = coarse
            if row["fine_keywords"].strip() != _fine_text(original):
                changes["fine_keywords"] = _split_points(row["fine_keywords"])
            if row["reference_answer"].strip() != (original.reference_answer or ""):
                changes["reference_answer"] = row["reference_answer"].strip()
            if row["query_type"].strip() != original.query_type.value:
                changes["query_type"] = row["query_type"].strip()
            if changes or decision == "edit":
                data = original.model_dump(mode="json")
                data.update(changes)
                data["meta"] = {**data.get("meta", {}), "review": "edited"}
                try:
                    decided[ident] = ("edit", EvalSample.model_validate(data))
                except ValidationError as error:
                    result.problems.append(InputProblem.from_validation(str(csv_in), line, error))
                continue
            reviewed = original.model_copy(
                update={"meta": {**original.meta, "review": decision or "pending"}}
            )
            decided[ident] = (decision or "pending", reviewed)
    for ident, sample in samples.items():
        kind, reviewed = decided.get(ident, ("pending", sample))
        result.counts[kind] += 1
        if reviewed is not None:
            result.kept.append(reviewed)
    return result


def apply_review(evalset, csv_in, out) -> ReviewResult:
    result = import_review(evalset, csv_in)
    write_evalset(out, result.kept)
    return result
