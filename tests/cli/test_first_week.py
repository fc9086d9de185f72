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
