"""Keywords are marked in the bad-case browser only where cofe matches them."""

from __future__ import annotations

from cofe import Chunk, EvalSample, Manifest, RankedChunk, RunWriter, SampleRecord
from cofe.cli import main
from cofe.evalset import write_evalset
from cofe.matching import MatchMode
from cofe.report._html import _highlight


def test_a_rejected_bad_label_is_never_marked_inside_words() -> None:
    text = "The complexity of P versus NP"
    assert _highlight(text, ["P"]) == "The complexity of P versus NP"  # one letter: rejected
    assert "<mark>" not in _highlight(text, ["of"])  # only a stopword: rejected


def test_strict_mode_marks_whole_tokens_only() -> None:
    marked = _highlight("cat concatenate Cat, 8,700 cats; 北京大学", ["cat", "8700", "北京"])
    assert marked == (
        "<mark>cat</mark> concatenate <mark>Cat</mark>, <mark>8,700</mark> cats; "
        "<mark>北京</mark>大学"
    )
    assert _highlight("Super  Bowl 50!", ["super bowl 50"]) == "<mark>Super  Bowl 50</mark>!"


def test_cofe_rag_mode_marks_what_it_matches() -> None:
    # that mode matches plain substrings with non-word characters removed, bad labels too
    marked = _highlight("concatenate Super-Bowl", ["cat", "superbowl"], MatchMode.COFE_RAG)
    assert marked == "con<mark>cat</mark>enate <mark>Super-Bowl</mark>"


def test_markup_is_still_escaped_around_marks() -> None:
    assert _highlight("<b>cat</b>", ["cat"]) == "&lt;b&gt;<mark>cat</mark>&lt;/b&gt;"


def test_the_report_marks_no_bad_label_inside_a_word(tmp_path) -> None:
    run = tmp_path / "run"
    evalset = tmp_path / "evalset.jsonl"
    text = "Time complexity classes: P is contained in NP."
    write_evalset(
        evalset,
        [
            EvalSample(
                id="q1",
                query="What contains P?",
                coarse_keywords=["complexity classes"],
                fine_keywords=[["P", "NP"], ["PSPACE"]],
                source={"doc": "d.txt"},
            )
        ],
    )
    writer = RunWriter(run)
    writer.start(
        Manifest(run_id="r", top_k=1, stages=["chunking", "retrieval", "generation"]), evalset
    )
    writer.add_chunks([Chunk(chunk_id="c1", doc_id="d", text=text)])
    writer.add_samples(
        [
            SampleRecord(
                sample_id="q1",
                pool=[RankedChunk(chunk_id="c1", score=1)],
                answer="P is in NP; complexity aside.",
            )
        ]
    )
    out = tmp_path / "report.html"
    assert main(["report", str(run), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    cases = page[page.index("<section id='cases'>") :]
    assert "<mark>NP</mark>" in cases and "<mark>complexity classes</mark>" in cases
    assert "com<mark>p</mark>lexity" not in cases.lower()
    assert "<mark>P</mark>" not in cases  # a single letter is a bad label: never matched
