"""What `cofe compare` prints first and in what order (issue 44, frictions 5 and 6)."""

from __future__ import annotations

import pandas as pd

from cofe.compare import compare_results
from cofe.report import render_comparison
from cofe.results import ScoreResult


def scoring(values: dict[tuple[str, str], list[float]], docs: int) -> ScoreResult:
    """A scoring of len(values) samples spread over ``docs`` source documents, each measure's
    per-sample values given."""
    n = len(next(iter(values.values())))
    ids = [f"q{i}" for i in range(n)]
    verdicts = pd.DataFrame(
        {
            "sample_id": ids,
            "query_type": "factual",
            "source": [f"doc{i % docs}" for i in range(n)],
            "verdict": "pass",
        }
    )
    scores = pd.DataFrame(
        [
            {"sample_id": sid, "step": step, "measure": measure, "value": v}
            for (step, measure), column in values.items()
            for sid, v in zip(ids, column, strict=True)
        ]
    )
    empty = pd.DataFrame()
    return ScoreResult(
        config=None,
        run="r",
        run_id="r",
        shape={},
        scores=scores,
        points=empty,
        verdicts=verdicts,
        skipped=empty,
        recalls=empty,
        latency=empty,
    )


def test_rows_follow_the_pipeline_not_the_alphabet():
    ones = [1.0] * 8
    cols = {
        ("answer", "RougeL"): [0.5] * 8,
        ("context", "KeywordRecall@4"): ones,
        ("corpus", "ChunkIntegrity"): ones,
        ("parse", "KeywordRecall"): ones,
        ("pool", "KeywordRecall@30"): ones,
    }
    printed = render_comparison(compare_results({"A": scoring(cols, 4), "B": scoring(cols, 4)}))
    rows = [line.split()[0] for line in printed.splitlines() if "/" in line.split(" ")[0]]
    assert rows == [
        "parse/KeywordRecall",
        "corpus/ChunkIntegrity",
        "pool/KeywordRecall@30",
        "context/KeywordRecall@4",
        "answer/RougeL",
    ]


def test_measures_no_sample_changed_in_are_said_unchanged_not_the_same_test():
    ones = [1.0] * 8
    cols = {("parse", "KeywordRecall"): ones, ("corpus", "KeywordRecall"): ones}
    printed = render_comparison(compare_results({"A": scoring(cols, 4), "B": scoring(cols, 4)}))
    assert "same test as" not in printed
    assert printed.count("(no sample differs)") == 2


def test_the_first_line_answers_which_run_is_better_where():
    n = 120  # 60 documents: enough to tell
    same = [0.5] * n
    a = scoring({("pool", "KeywordRecall@30"): [0.0] * n, ("answer", "RougeL"): same}, 60)
    b = scoring({("pool", "KeywordRecall@30"): [1.0] * n, ("answer", "RougeL"): same}, 60)
    first = render_comparison(compare_results({"A": a, "B": b}, resamples=199)).splitlines()[0]
    assert first.startswith("B is better at retrieval: pool/KeywordRecall@30 +1.000 over A")
    assert "[95 % CI +1.000, +1.000]" in first
    assert first.endswith("; nothing else changed significantly")
    first = render_comparison(compare_results({"A": a, "B": a}, resamples=199)).splitlines()[0]
    assert first == "A vs B: no significant difference at any stage"


def test_a_small_eval_set_is_told_why_nothing_can_be_significant():
    """4 questions on 2 documents: every p is 1 while the CI excludes zero; say why."""
    a = scoring({("pool", "KeywordRecall@30"): [0.0] * 4, ("answer", "RougeL"): [0.2] * 4}, 2)
    b = scoring({("pool", "KeywordRecall@30"): [1.0] * 4, ("answer", "RougeL"): [0.3] * 4}, 2)
    comparison = compare_results({"A": a, "B": b}, resamples=199)
    d = comparison.differences.set_index(["query_type", "step"])
    assert (d.p_holm > 0.05).all() and d.loc[("all", "pool"), "high"] < 0  # CI excludes zero
    printed = render_comparison(comparison)
    assert printed.splitlines()[0] == "A vs B: no significant difference at any stage"
    note = printed.splitlines()[1]
    assert "the paired tests had 4 questions" in note
    assert "no difference can be called significant here" in note
    assert "smallest p a test can give is 0.125" in note
    assert comparison.to_dict()["small_sample"] == note
    # with enough documents nothing is said
    many = compare_results({"A": scoring(a_cols(60), 60), "B": scoring(b_cols(60), 60)})
    assert many.small_sample == ""


def test_few_documents_are_tested_over_questions_with_the_caveat_said():
    """8 questions on 4 documents: clustered, no test could reach significance (2 / 2^4
    at best); over questions it can, for these documents -- and the output says so."""
    a = scoring({("pool", "KeywordRecall@30"): [0.0] * 8, ("answer", "RougeL"): [0.2] * 8}, 4)
    b = scoring({("pool", "KeywordRecall@30"): [1.0] * 8, ("answer", "RougeL"): [0.3] * 8}, 4)
    comparison = compare_results({"A": a, "B": b}, resamples=199)
    assert comparison.inference is not None and not comparison.inference.clustered
    assert comparison.clustering.startswith("over questions: 8 questions on 4 source document")
    d = comparison.differences.set_index(["query_type", "step"])
    assert d.loc[("all", "pool"), "significant"] and d.loc[("all", "pool"), "clusters"] == 8
    printed = render_comparison(comparison)
    assert printed.splitlines()[0].startswith("B is better at retrieval")
    assert "Caveat: the result holds for these 4 document(s), not for new ones" in printed
    assert comparison.to_dict()["caveat"] == comparison.caveat != ""
    # from 20 documents on, the questions of one document are one unit, and nothing is said
    many = compare_results({"A": scoring(a_cols(20), 20), "B": scoring(b_cols(20), 20)})
    assert many.inference is not None and many.inference.clustered and many.caveat == ""
    assert int(many.differences["clusters"].max()) == 20


def a_cols(docs: int) -> dict[tuple[str, str], list[float]]:
    return {("pool", "KeywordRecall@30"): [0.0] * (2 * docs)}


def b_cols(docs: int) -> dict[tuple[str, str], list[float]]:
    return {("pool", "KeywordRecall@30"): [1.0] * (2 * docs)}
