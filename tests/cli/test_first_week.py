"""Issue 44: what a newcomer's first week stopped on at the command line."""

from __future__ import annotations

import json
from pathlib import Path

from cofe.cli import main


def test_cofe_parse_prints_the_text_keywords_are_matched_in(tmp_path: Path, capsys) -> None:
    """Friction 4: a documented way to see a document's parsed text before writing keywords."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "lisbon.txt").write_text("Lisbon is the capital.\r\n\r\n\r\nIt lies on the Tagus.")
    (docs / "oslo.html").write_text("<html><body><p>Oslo is in Norway.</p></body></html>")
    assert main(["parse", str(docs / "lisbon.txt")]) == 0
    assert capsys.readouterr().out == "Lisbon is the capital.\n\nIt lies on the Tagus.\n"
    assert main(["parse", str(docs), "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["doc_id"] for r in records] == ["lisbon.txt", "oslo.html"]
    assert records[1]["text"] == "Oslo is in Norway." and records[1]["meta"]["format"] == "html"
    (tmp_path / "broken.pdf").write_bytes(b"not a pdf")
    assert main(["parse", str(tmp_path / "broken.pdf")]) == 2
    err = capsys.readouterr().err
    assert "broken.pdf" in err and "no %PDF header" in err


def test_cofe_schema_describes_how_fine_keywords_nest(capsys) -> None:
    """Friction 3: the nesting of fine_keywords (points of keywords, all required; any_of
    alternatives) is in the schema users read, not only in DESIGN's glossary."""
    assert main(["schema"]) == 0
    sample = json.loads(capsys.readouterr().out)["files"]["evalset.jsonl"]
    fields = sample["properties"]
    fine = fields["fine_keywords"]["description"]
    assert "ALL be found" in fine and "any_of" in fine and "cofe parse" in fine
    assert all(fields[name].get("description") for name in fields)
    assert "any one of them" in sample["$defs"]["AnyOf"]["properties"]["any_of"]["description"]
    docs = (Path(__file__).parents[2] / "docs" / "evalsets.md").read_text(encoding="utf-8")
    assert "must all be found" in docs and "cofe parse" in docs


def test_cli_errors_name_the_flag_the_folder_and_the_option_meant(tmp_path: Path, capsys) -> None:
    """Friction 9: a missing eval set named by its flag; an empty docs folder called empty
    (not "no document could be parsed (0 problem(s))"); ``--topk`` answered with ``--top-k``."""
    import pytest

    with pytest.raises(SystemExit) as exit_:
        main(["run", "--evalset", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "o")])
    assert exit_.value.code == 2
    assert "argument --evalset: no such file" in capsys.readouterr().err
    evalset = tmp_path / "e.jsonl"
    evalset.write_text('{"id": "q1", "query": "Where?", "fine_keywords": [["here"]]}\n')
    (tmp_path / "empty").mkdir()
    args = ["run", "--evalset", str(evalset), "--docs", str(tmp_path / "empty")]
    assert main([*args, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "holds no file" in err and "0 problem" not in err
    with pytest.raises(SystemExit):
        main([*args, "--out", str(tmp_path / "o"), "--topk", "3"])
    assert "did you mean --top-k?" in capsys.readouterr().err


def test_import_jsonl_exits_non_zero_when_a_line_is_rejected(tmp_path: Path, capsys) -> None:
    """Friction 9: ``cofe import jsonl`` exited 0 after rejecting 4 of 8 lines."""
    good = [json.dumps({"id": f"q{i}", "query": "Where?"}) for i in range(4)]
    bad = ['{"id": "x", "query": ""}', "not json", '{"query": "no id"}', "{"]
    (tmp_path / "mine.jsonl").write_text("\n".join(good + bad) + "\n")
    out = tmp_path / "evalset.jsonl"
    assert main(["import", "jsonl", str(tmp_path / "mine.jsonl"), "-o", str(out)]) == 1
    assert "4 record(s) rejected" in capsys.readouterr().err
    assert len(out.read_text().splitlines()) == 4
    (tmp_path / "none.jsonl").write_text("\n".join(bad) + "\n")
    code = main(["import", "jsonl", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "n.jsonl")])
    assert code == 2 and not (tmp_path / "n.jsonl").exists()
    assert "no record could be imported" in capsys.readouterr().err
