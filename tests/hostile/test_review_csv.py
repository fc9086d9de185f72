"""Issue 10, items 10 and 11: the review CSV is safe to open in a spreadsheet, round-trips
every keyword structure exactly, and a damaged row is one problem naming its row."""

from __future__ import annotations

import csv
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotators import export_review
from annotators._review import MAX_CELL_CHARS, import_review
from cofe import EvalSample, write_evalset
from cofe.evalset._sample import AnyOf

PIECES = ["a", "b", " ", "=", "+", "-", "@", "'", '"', "|", " || ", " | ", ",", ";", "\t", "\n",
          "\r", "{", "[", "é", "漢"]  # fmt: skip
HOSTILE = st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join).filter(str.strip)
FRAGMENT = st.one_of(HOSTILE, st.builds(AnyOf, any_of=st.lists(HOSTILE, min_size=1, max_size=3)))


@st.composite
def samples(draw) -> list[EvalSample]:
    out = []
    for i in range(draw(st.integers(1, 4))):
        out.append(EvalSample(
            id=draw(st.sampled_from([f"s{i}", f"=s{i}", f"'s{i}", f"-s{i}"])) + str(i),
            query=draw(HOSTILE),
            coarse_keywords=draw(st.lists(HOSTILE, min_size=1, max_size=3)),
            fine_keywords=draw(st.lists(st.lists(FRAGMENT, min_size=1, max_size=3), min_size=1,
                                        max_size=3)),
            reference_answer=draw(st.one_of(st.none(), HOSTILE)),
        ))  # fmt: skip
    return out


def _content(sample: EvalSample) -> tuple:
    return (sample.id, sample.query, sample.coarse_keywords, sample.fine_keywords,
            sample.reference_answer or "")  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(samples())
def test_every_keyword_structure_round_trips_exactly(tmp_path, drawn) -> None:
    evalset, table = tmp_path / "set.jsonl", tmp_path / "review.csv"
    write_evalset(evalset, drawn)
    export_review(evalset, table)
    result = import_review(evalset, table)
    assert result.problems == []
    assert dict(result.counts) == {"pending": len(drawn)}  # nothing read as an edit
    assert [_content(s) for s in result.kept] == [_content(s) for s in drawn]


def _cells(table: Path) -> list[list[str]]:
    with open(table, newline="", encoding="utf-8-sig") as handle:
        return list(csv.reader(handle))


def test_no_cell_a_spreadsheet_would_run_as_a_formula(tmp_path) -> None:
    sample = EvalSample(id="q1", query='=HYPERLINK("http://x.example","click")',
                        coarse_keywords=["+1 555"], fine_keywords=[["-5 °C", "@home"]],
                        reference_answer="\t=cmd")  # fmt: skip
    evalset, table = tmp_path / "set.jsonl", tmp_path / "review.csv"
    write_evalset(evalset, [sample])
    export_review(evalset, table)
    for row in _cells(table)[1:]:
        assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in row)
    assert [_content(s) for s in import_review(evalset, table).kept] == [_content(sample)]


def _rewrite(table: Path, edit) -> None:
    rows = _cells(table)
    edit(rows)
    with open(table, "w", newline="", encoding="utf-8-sig") as handle:
        csv.writer(handle).writerows(rows)


def test_damaged_rows_are_problems_naming_row_and_field_and_the_rest_is_read(tmp_path) -> None:
    drawn = [EvalSample(id=f"s{i}", query=f"Question {i}?", coarse_keywords=["Paris"],
                        fine_keywords=[["capital"]]) for i in range(6)]  # fmt: skip
    evalset, table = tmp_path / "set.jsonl", tmp_path / "review.csv"
    write_evalset(evalset, drawn)
    export_review(evalset, table)

    def damage(rows: list[list[str]]) -> None:
        rows[1] = rows[1][:3]  # s0: a short row
        rows[2] = [*rows[2], "extra"]  # s1: a long row
        rows[3][5] = "[[\"capital\"], oops"  # s2: fine_keywords is not JSON
        rows[4][6] = "x" * (MAX_CELL_CHARS + 10)  # s3: a cell over the size limit
        rows[5][1] = "accept"  # s4: fine
        rows[6][1] = "reject"  # s5: fine

    _rewrite(table, damage)
    result = import_review(evalset, table)
    where = [(p.line, p.field) for p in result.problems]
    assert where == [(2, None), (3, None), (4, "fine_keywords"), (5, None)]
    assert "3 cell(s) where the header has 9" in result.problems[0].message
    assert "not a keyword list" in result.problems[2].message
    assert "limited to" in result.problems[3].message
    assert dict(result.counts) == {"pending": 4, "accept": 1, "reject": 1}
    assert [s.id for s in result.kept] == ["s0", "s1", "s2", "s3", "s4"]
