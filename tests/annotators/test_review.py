"""The review loop: export to CSV/HTML, people decide, import back."""

from __future__ import annotations

import csv

import pytest

from annotators import apply_review, export_review
from cofe import EvalSample, read_evalset, write_evalset
from cofe.cli import main


@pytest.fixture
def evalset(tmp_path):
    samples = [
        EvalSample(
            id=f"s{i}",
            query=f"Question {i}?",
            query_type="factual",
            coarse_keywords=["Paris"],
            fine_keywords=[["capital", "France"], ["1889"]],
            reference_answer=f"Answer {i}.",
        )
        for i in range(4)
    ]
    path = tmp_path / "set.jsonl"
    write_evalset(path, samples)
    return path


def _edit(path, changes: dict[str, dict[str, str]]) -> None:
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row.update(changes.get(row["id"], {}))
    with open(path, "w", newline="", encoding="utf-8-sig") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_export_then_import_applies_accept_reject_and_edits(tmp_path, evalset) -> None:
    table, page = tmp_path / "review.csv", tmp_path / "review.html"
    assert export_review(evalset, table, page) == 4
    assert "Question 2?" in page.read_text() and "<table>" in page.read_text()
    _edit(
        table,
        {
            "s0": {"decision": "accept"},
            "s1": {"decision": "reject"},
            "s2": {
                "decision": "edit",
                "fine_keywords": "capital | France || 1889 || Eiffel",
                "query": "Question two?",
            },
        },
    )
    result = apply_review(evalset, table, tmp_path / "reviewed.jsonl")
    assert result.problems == []
    assert dict(result.counts) == {"accept": 1, "reject": 1, "edit": 1, "pending": 1}
    kept = {s.id: s for s in read_evalset(tmp_path / "reviewed.jsonl").samples}
    assert set(kept) == {"s0", "s2", "s3"}
    assert kept["s2"].query == "Question two?" and kept["s2"].fine_keywords[2] == ["Eiffel"]
    assert kept["s2"].meta["review"] == "edited" and kept["s0"].meta["review"] == "accept"


def test_bad_rows_name_the_csv_line_and_field_and_are_not_applied(
    tmp_path, evalset, capsys
) -> None:
    table = tmp_path / "review.csv"
    export_review(evalset, table)
    _edit(table, {"s0": {"decision": "maybe"}, "s1": {"id": "s99"}, "s3": {"query_type": "poem"}})
    code = main(["review", "import", str(evalset), str(table), "-o", str(tmp_path / "out.jsonl")])
    err = capsys.readouterr().err
    assert code == 1
    assert "review.csv:2: decision: 'maybe' is not one of" in err
    assert "review.csv:3: id: unknown sample id 's99'" in err
    assert "review.csv:5: query_type" in err
    kept = {s.id: s for s in read_evalset(tmp_path / "out.jsonl").samples}
    assert kept["s3"].query_type.value == "factual"  # the bad edit was not applied


def test_cli_annotate_dry_run_calls_nothing(tmp_path, capsys) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Paris is the capital of France. " * 40, encoding="utf-8")
    assert (
        main(
            ["annotate", str(docs), "-o", str(tmp_path / "e.jsonl"), "--dry-run", "--cache", "none"]
        )
        == 0
    )
    import json

    estimate = json.loads(capsys.readouterr().out)
    assert estimate["segments"] >= 1 and estimate["calls"]["at_most"] == 2 * estimate["segments"]
    assert not (tmp_path / "e.jsonl").exists()
