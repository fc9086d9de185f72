from cofe.report import format_table


def test_format_table_aligns_text_left_and_numbers_right():
    table = format_table(
        ["stage", "mean", "n"], [["parse", 1.0, 3], ["generation", 0.12345, 10], ["none", None, 0]]
    )
    lines = table.splitlines()
    assert lines[0] == "stage        mean   n"
    assert lines[2] == "parse       1.000   3"
    assert lines[3] == "generation  0.123  10"
    assert lines[4].split() == ["none", "-", "0"]


def test_tables_get_a_column_per_query_type(make_run):
    from cofe import EvalSample, SampleRecord, ScoreConfig, score_run
    from cofe.report import render_result
    from tests.conftest import ranked

    samples = [
        EvalSample(id="f", query="q?", query_type="factual", fine_keywords=[["Denver Broncos"]]),
        EvalSample(id="t", query="q?", query_type="tutorial", fine_keywords=[["press reset"]]),
    ]
    records = [SampleRecord(sample_id=s.id, pool=ranked("c1"), answer="x") for s in samples]
    result = score_run(
        make_run(samples, {"c1": "The Denver Broncos won."}, records), config=ScoreConfig(top_k=1)
    )
    text = render_result(result)
    waterfall = text.split("Loss waterfall")[1].split("\n\n")[0]
    assert "factual  tutorial" in waterfall.splitlines()[1]
    rows = {line.split()[0]: line.split() for line in waterfall.splitlines()[3:] if line.strip()}
    assert rows["pool"] == ["pool", "0.500", "2", "1.000", "0.000"]
    verdicts = {
        line.split()[0]: line.split()
        for line in text.split("Verdicts")[1].splitlines()[3:]
        if line.strip()
    }
    # "press reset" is in no chunk (and no parsed text says whether parsing lost it);
    # the answer "x" lacks "Denver Broncos"
    assert verdicts["not_in_corpus"] == ["not_in_corpus", "1", "50.0%", "0", "1"]
    assert verdicts["not_in_answer"] == ["not_in_answer", "1", "50.0%", "1", "0"]
