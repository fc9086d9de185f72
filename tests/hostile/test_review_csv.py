"""Issue 10, items 10 and 11: the review CSV is safe to open in a spreadsheet, round-trips
every keyword structure exactly, and a damaged row is one problem naming its row and column."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotators import _review, export_review
from annotators._review import MAX_ROW_CHARS, import_review
from cofe import EvalSample, write_evalset
from cofe.evalset._sample import AnyOf

PIECES = [
    "a",
    "b",
    " ",
    "=",
    "+",
    "-",
    "@",
    "'",
    '"',
    "|",
    " || ",
    " | ",
    ",",
    ";",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\x00",
    "{",
    "[",
    "]",
    "\\",
    '{"any_of": ["x"]}',
    "é",
    "漢",
]
TEXT = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)  # empty and blank included
FILLED = TEXT.filter(str.strip)  # for the fields the model requires to be non-blank
FRAGMENT = st.one_of(TEXT, st.builds(AnyOf, any_of=st.lists(TEXT, min_size=1, max_size=3)))


@st.composite
def samples(draw) -> list[EvalSample]:
    out = []
    for i in range(draw(st.integers(1, 4))):
        out.append(
            EvalSample(
                id=draw(st.sampled_from(["s", "=s", "'s", "''s", "-s", " s ", "\ts"])) + str(i),
                query=draw(FILLED),
                coarse_keywords=draw(st.lists(TEXT, max_size=3)),
                fine_keywords=draw(st.lists(st.lists(FRAGMENT, max_size=3), max_size=3)),
                reference_answer=draw(st.one_of(st.none(), TEXT)),
            )
        )
    return out


def _content(sample: EvalSample) -> tuple:
    return (
        sample.id,
        sample.query,
        sample.coarse_keywords,
        sample.fine_keywords,
        sample.reference_answer or "",
    )


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(samples())
def test_every_keyword_structure_round_trips_exactly(tmp_path, drawn) -> None:
    evalset, table = tmp_path / "set.jsonl", tmp_path / "review.csv"
    write_evalset(evalset, drawn)
    export_review(evalset, table)
    result = import_review(evalset, table)
    assert result.problems == []
    assert dict(result.counts) == {"pending": len(drawn)}  # nothing read as an edit
    assert [_content(s) for s in result.kept] == [_content(s) for s in drawn]


RAW = st.lists(st.sampled_from(['"', '""', ",", "a", "\n", "\r", "\r\n", " "]), max_size=30).map(
    "".join
)


@pytest.mark.parametrize("limit", [MAX_ROW_CHARS, 3])
@settings(max_examples=300, deadline=None)
@given(data=RAW)
def test_rows_are_split_where_the_csv_module_splits_them(limit, data) -> None:
    # hand-edited text included: stray quotes inside or after a cell, bare \r, blank lines
    expected = list(csv.reader(io.StringIO(data, newline="")))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_review, "MAX_ROW_CHARS", limit)  # small: long lines come in pieces
        records = list(_review._records(io.StringIO(data, newline="")))
    assert len(records) == len(expected)
    for (text, whole), cells in zip(records, expected, strict=True):
        if whole:
            assert _review._cells(text) == cells


def _cells(table: Path) -> list[list[str]]:
    with open(table, newline="", encoding="utf-8-sig") as handle:
        return list(csv.reader(handle))


def _rewrite(table: Path, edit) -> None:
    rows = _cells(table)
    edit(rows)
    with open(table, "w", newline="", encoding="utf-8-sig") as handle:
        csv.writer(handle).writerows(rows)


def _evalset(tmp_path: Path, n: int = 6, **fields) -> tuple[Path, Path]:
    drawn = [
        EvalSample(
            id=f"s{i}",
            query=f"Question {i}?",
            coarse_keywords=["Paris"],
            fine_keywords=[["capital"]],
            **fields,
        )
        for i in range(n)
    ]
    evalset, table = tmp_path / "set.jsonl", tmp_path / "review.csv"
    write_evalset(evalset, drawn)
    export_review(evalset, table)
    return evalset, table


def test_no_cell_a_spreadsheet_would_run_as_a_formula(tmp_path) -> None:
    sample = EvalSample(
        id="q1",
        query='=HYPERLINK("http://x.example","click")',
        coarse_keywords=["+1 555"],
        fine_keywords=[["-5 °C", "@home"]],
        reference_answer="\t=cmd",
        source={"doc": "-doc"},
    )
    quoted = EvalSample(id="q2", query="'quoted'", reference_answer="\r=1")
    evalset, table = tmp_path / "set.jsonl", tmp_path / "review.csv"
    write_evalset(evalset, [sample, quoted])
    export_review(evalset, table)
    rows = _cells(table)
    for row in rows[1:]:
        assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in row)
    assert rows[1][3] == "'" + sample.query and rows[1][7] == "'-doc"
    assert rows[2][3] == "''quoted'" and rows[2][6] == "'\r=1"  # a leading quote is escaped too
    kept = import_review(evalset, table).kept
    assert [_content(s) for s in kept] == [_content(sample), _content(quoted)]


def test_edited_keyword_cells_keep_alternatives_and_the_old_plain_syntax_is_read(tmp_path) -> None:
    evalset, table = _evalset(tmp_path, n=2)

    def edit(rows: list[list[str]]) -> None:
        rows[1][4] = '["a | b", "=c"]'
        rows[1][5] = '[["Denver", {"any_of": ["24-10", "24–10"]}], []]'
        rows[2][4], rows[2][5] = "Paris | France", "capital | France || 1889"

    _rewrite(table, edit)
    result = import_review(evalset, table)
    assert result.problems == [] and dict(result.counts) == {"edit": 2}
    first, second = result.kept
    assert first.coarse_keywords == ["a | b", "=c"]
    assert first.fine_keywords == [["Denver", AnyOf(any_of=["24-10", "24–10"])], []]
    assert second.coarse_keywords == ["Paris", "France"]
    assert second.fine_keywords == [["capital", "France"], ["1889"]]


def test_damaged_rows_are_problems_naming_row_and_column_and_the_rest_is_read(tmp_path) -> None:
    evalset, table = _evalset(tmp_path)

    def damage(rows: list[list[str]]) -> None:
        rows[1] = rows[1][:3]  # s0: a short row
        rows[2] = [*rows[2], "extra"]  # s1: a long row
        rows[3][5] = '[["capital"], oops'  # s2: fine_keywords is not JSON
        rows[4][6] = "x" * (MAX_ROW_CHARS + 10)  # s3: a cell over the size limit
        rows[5][1] = "accept"  # s4: fine
        rows[6][1] = "reject"  # s5: fine

    _rewrite(table, damage)
    result = import_review(evalset, table)
    where = [(p.file, p.line, p.field) for p in result.problems]
    assert where == [
        (str(table), 2, "query"),
        (str(table), 3, "column 10"),
        (str(table), 4, "fine_keywords"),
        (str(table), 5, "reference_answer"),
    ]
    assert "3 cell(s) where the header has 9" in result.problems[0].message
    assert "10 cell(s) where the header has 9" in result.problems[1].message
    assert "not a keyword list" in result.problems[2].message
    assert f"{MAX_ROW_CHARS:,}" in result.problems[3].message
    assert dict(result.counts) == {"pending": 4, "accept": 1, "reject": 1}
    assert [s.id for s in result.kept] == ["s0", "s1", "s2", "s3", "s4"]
    assert csv.field_size_limit() == 131072  # the module's limit is put back


def test_an_oversize_cell_spanning_lines_is_one_problem_and_the_next_rows_are_read(
    tmp_path,
) -> None:
    evalset, table = _evalset(tmp_path, n=3)

    def damage(rows: list[list[str]]) -> None:
        rows[1][3] = 'x",\n' * (MAX_ROW_CHARS // 4 + 1)  # quotes, commas and newlines inside
        rows[2][1] = "accept"
        rows[3][1] = "maybe"

    _rewrite(table, damage)
    result = import_review(evalset, table)
    assert [(p.line, p.field) for p in result.problems] == [(2, "query"), (4, "decision")]
    assert dict(result.counts) == {"pending": 2, "accept": 1}


def test_rows_are_numbered_as_a_spreadsheet_shows_them(tmp_path) -> None:
    evalset, table = _evalset(tmp_path, n=3, reference_answer="one\ntwo\r\nthree")

    def damage(rows: list[list[str]]) -> None:
        rows[3][1] = "maybe"  # s2, on the 4th row though the 8th line of the file

    _rewrite(table, damage)
    problems = import_review(evalset, table).problems
    assert [(p.line, p.field) for p in problems] == [(4, "decision")]


def test_a_missing_column_is_a_problem_and_the_other_columns_are_applied(tmp_path) -> None:
    evalset, table = _evalset(tmp_path, n=3)

    def drop(rows: list[list[str]]) -> None:
        rows[1][1], rows[2][1] = "accept", "reject"
        for row in rows:
            del row[5]  # fine_keywords
            del row[2]  # query_type

    _rewrite(table, drop)
    result = import_review(evalset, table)
    assert [(p.line, p.field) for p in result.problems] == [(1, "query_type"), (1, "fine_keywords")]
    assert "missing column" in result.problems[0].message
    assert dict(result.counts) == {"accept": 1, "reject": 1, "pending": 1}
    assert [s.fine_keywords for s in result.kept] == [[["capital"]], [["capital"]]]


def test_without_an_id_column_nothing_is_applied_and_that_is_a_problem(tmp_path) -> None:
    evalset, table = _evalset(tmp_path, n=2)

    def drop(rows: list[list[str]]) -> None:
        rows[1][1] = "reject"
        for row in rows:
            del row[0]

    _rewrite(table, drop)
    result = import_review(evalset, table)
    assert [(p.line, p.field) for p in result.problems] == [(1, "id")]
    assert dict(result.counts) == {"pending": 2}


def test_an_empty_file_is_a_problem_not_a_crash(tmp_path) -> None:
    evalset, table = _evalset(tmp_path, n=1)
    table.write_bytes(b"")
    result = import_review(evalset, table)
    assert [(p.line, p.field) for p in result.problems] == [(1, "id")]
    assert dict(result.counts) == {"pending": 1}


def test_a_csv_saved_as_windows_1252_is_read_and_said_so(tmp_path) -> None:
    evalset, table = _evalset(tmp_path, n=2)
    rows = _cells(table)
    rows[1][1], rows[1][3] = "edit", "Où est le café ? Déjà fermé à Noël."
    with open(table, "w", newline="", encoding="cp1252") as handle:  # Excel's plain "CSV"
        csv.writer(handle).writerows(rows)
    result = import_review(evalset, table)
    assert [(p.line, p.field) for p in result.problems] == [(1, None)]
    assert "not UTF-8: read as cp1252" in result.problems[0].message
    assert result.kept[0].query == "Où est le café ? Déjà fermé à Noël."


def test_two_rows_for_one_sample_are_a_problem_and_the_later_counts(tmp_path) -> None:
    evalset, table = _evalset(tmp_path, n=2)
    _rewrite(table, lambda rows: rows.append([*rows[1][:1], "reject", *rows[1][2:]]))
    result = import_review(evalset, table)
    assert [(p.line, p.field) for p in result.problems] == [(4, "id")]
    assert "also on row 2" in result.problems[0].message
    assert dict(result.counts) == {"reject": 1, "pending": 1}
