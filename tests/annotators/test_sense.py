"""What verbatim checks cannot catch, end to end through the loopback server: a reply whose
queries are statements, hold their own answers, carry a type that does not fit, or ask two of
one type; and segments without a tiny tail."""

from __future__ import annotations

import json
from pathlib import Path

from annotators import AnnotateConfig, annotate, progress_path, segment_documents
from cofe import read_evalset
from cofe.llm import Endpoint, LLMClient, estimate_tokens
from cofe.runlog import ParsedDocument
from cofe.testing import ScriptedOpenAI

EIFFEL = (
    "The Eiffel Tower in Paris was finished in 1889 for the World's Fair. It is 330 metres "
    "tall and was the tallest structure in the world until 1930."
)


def query(kind: str, text: str, fine: list[list[str]]) -> dict:
    return {
        "type": kind,
        "query": text,
        "coarse_keywords": ["Eiffel Tower"],
        "fine_keywords": fine,
        "answer": "From the passage.",
    }


REPLY = {
    "queries": [
        query("factual", "The Eiffel Tower was finished in 1889.", [["1889"]]),  # not a question
        query("factual", "Was the Eiffel Tower finished in 1889?", [["1889"]]),  # its own answer
        query("comparative", "How tall is the Eiffel Tower?", [["330 metres"]]),  # factual, really
        query(
            "factual",
            "Until when was the Eiffel Tower the tallest structure in the world?",
            [["1930"]],
        ),  # a second factual query: kept, with its own id
    ]
}


def test_each_sense_check_decides_a_drafted_query(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "Eiffel Tower.txt").write_text(EIFFEL, encoding="utf-8")
    out = tmp_path / "evalset.jsonl"
    with ScriptedOpenAI(lambda messages, request: json.dumps(REPLY)) as server:
        client = LLMClient(Endpoint(server.base_url, "scripted", "x", timeout=5, max_retries=0))
        summary = annotate(docs, out, client, AnnotateConfig(concurrency=1), progress=False)
        assert len(server.requests) == 1  # the reply is valid as it is: no repair call
    samples = {s.query: s for s in read_evalset(out).samples}
    assert set(samples) == {
        "How tall is the Eiffel Tower?",
        "Until when was the Eiffel Tower the tallest structure in the world?",
    }
    relabelled = samples["How tall is the Eiffel Tower?"]
    assert relabelled.query_type.value == "factual"
    assert relabelled.meta["annotation"]["repairs"][0]["from"] == "comparative"
    ids = sorted(s.id.rsplit("/", 1)[1] for s in samples.values())
    assert ids == ["factual", "factual-2"]  # two of one type, both kept
    assert summary.type_mix == {"factual": 2}
    (line,) = [json.loads(x) for x in progress_path(out).read_text().splitlines()]
    assert {r["check"] for r in line["rejected"]} == {"question", "own_keywords"}
    assert summary.rejected_by_check == {"question": 1, "own_keywords": 1}
    checks = summary.to_dict()["checks"]
    assert checks["type"]["repaired"] == 1 and checks["question"]["rejected"] == 1
    assert "question 4/0/1" in summary.render()  # counted in the printed summary


def test_a_documents_tiny_tail_joins_the_segment_before_it() -> None:
    sentence = "The river floods the valley every spring and the farmers plant rice after it. "
    tail = "The farmers then rest until the next flood."  # 9 tokens, over min_chars
    text = sentence * 12 + tail  # segments of about 80 tokens leave the tail alone
    doc = ParsedDocument(doc_id="d", source="river.txt", text=text)
    other = ParsedDocument(doc_id="e", source="short.txt", text="A single short document, kept.")
    segments = segment_documents([doc, other], max_tokens=80)
    river = [s for s in segments if s.doc_id == "d"]
    assert len(river) > 1 and river[-1].text.endswith(tail)
    assert all(estimate_tokens(s.text) >= 80 / 4 for s in river)  # no tail of its own
    assert estimate_tokens(river[-1].text) <= 80 * 1.25
    assert text[river[-1].start : river[-1].end] == river[-1].text  # the span is the text
    assert [s.doc_id for s in segments].count("e") == 1  # a short document is not a tail
