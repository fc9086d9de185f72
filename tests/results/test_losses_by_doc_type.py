"""Where samples were lost, per kind of source document (issue 27: a PDF report loses
table rows where Markdown does not -- the report says so per type)."""

from cofe import EvalSample, SampleRecord, ScoreConfig, score_run
from cofe.evalset import SourceRef
from cofe.report import render_result
from cofe.results._summary import doc_type
from tests.conftest import ranked


def sample(sid: str, doc: str, keyword: str) -> EvalSample:
    return EvalSample(
        id=sid,
        query=f"What about {keyword}?",
        coarse_keywords=[],
        fine_keywords=[[keyword]],
        source=SourceRef(doc=doc),
    )


def test_each_document_type_says_where_its_samples_were_lost(make_run):
    chunks = {
        "p1": ("report.pdf", "revenue rose to 1,712.8 million"),
        "m1": ("notes.md", "the board met in May"),
    }
    samples = [
        sample("a", "report.pdf", "1,712.8 million"),  # retrieved and answered: pass
        sample("b", "report.pdf", "revenue rose"),  # not retrieved: retrieval
        sample("c", "notes.md", "board met"),  # in the context, not in the answer
    ]
    records = [
        SampleRecord(sample_id="a", pool=ranked("p1"), answer="It rose to 1,712.8 million."),
        SampleRecord(sample_id="b", pool=ranked("m1"), answer="No idea."),
        SampleRecord(sample_id="c", pool=ranked("m1"), answer="Nothing happened."),
    ]
    run = make_run(samples, chunks, records)
    summary = score_run(run, config=ScoreConfig(top_k=1)).view()
    by_type = summary.to_dict()["losses_by_document_type"]
    assert by_type["pdf"]["samples"] == 2 and by_type["pdf"]["pass"] == 1
    assert by_type["pdf"]["retrieval"] == 1
    assert by_type["md"]["generation"] == 1 and by_type["md"]["pass"] == 0
    text = render_result(summary)
    assert "by document type" in text
    assert any(line.split()[:2] == ["pdf", "2"] for line in text.splitlines())


def test_sources_without_a_type_add_no_table(make_run):
    run = make_run(
        [sample("a", "Normans", "met")],
        {"c": ("Normans", "they met")},
        [SampleRecord(sample_id="a", pool=ranked("c"), answer="They met.")],
    )
    summary = score_run(run, config=ScoreConfig(top_k=1)).view()
    assert "by document type" not in render_result(summary)


def test_document_types_are_file_extensions():
    assert doc_type("reports/10-K.PDF") == "pdf"
    assert doc_type("C:\\docs\\q.xlsx") == "xlsx"
    assert doc_type("Normans") == doc_type(None) == doc_type("v1.2 notes") == "(no type)"


def test_the_html_report_has_the_table(make_run, tmp_path):
    from cofe.report import RunForReport, render_report

    chunks = {"p1": ("report.pdf", "revenue rose to 1,712.8 million")}
    run = make_run(
        [sample("a", "report.pdf", "revenue rose")],
        chunks,
        [SampleRecord(sample_id="a", pool=ranked("p1"), answer="No.")],
    )
    result = score_run(run, config=ScoreConfig(top_k=1))
    html = render_report([RunForReport.load("r", run, result)])
    assert "by document type" in html and "<td>pdf</td>" in html
