"""The gate on two runs that differ in top-K over two documents (issue 43): one pipeline
recorded with k=4 and with k=1 over the 120 questions of two documents. A gate that
compared only same-named columns and clustered by document passed it."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from cofe.check import Status, check, github_annotations, render_text
from cofe.cli import main
from cofe.compare import keyword_recall_at
from cofe.results import read_scores


def test_the_gate_fails_naming_retrieval_and_the_measure(topk_runs):
    report = check(topk_runs[1], topk_runs[4])
    failing = {(o.stage, o.rule.step, o.rule.measure) for o in report.failures}
    assert ("retrieval", "context", "KeywordRecall") in failing  # no reranker: the retriever's
    context = next(o for o in report.outcomes if o.rule.target == "context/KeywordRecall")
    assert context.compared_at == (
        "each run's whole context as the generator received it (top-K: run @1, baseline @4)"
    )
    assert context.delta is not None and context.delta < -0.1 and context.test == "mcnemar"
    # the pool is compared at the common cutoff: the same retriever ranks the same first hit
    pool = next(o for o in report.outcomes if o.rule.step == "pool")
    assert pool.rule.target == "pool/KeywordRecall@1" and pool.status == Status.PASS
    assert pool.compared_at == "at the common cutoff @1 (run scored to @1, baseline to @4)"
    assert pool.delta == 0
    # two documents: the test runs over the 120 questions, and says what that means
    assert report.clustering.startswith("over questions: 120 questions on 2 source document")
    assert "holds for these 2 document(s), not for new ones" in report.caveat
    assert all(o.status != Status.SKIP for o in report.outcomes)  # no stage left out
    annotations = github_annotations(report)
    assert any(
        a.startswith("::warning title=cofe check%3A generation (answer/PointRecall)::")
        and "cannot detect a drop of 0.02 here" in a
        for a in annotations
    )
    assert any(a.startswith("::notice title=cofe check::the result holds") for a in annotations)
    text = render_text(report)
    assert "FAIL retrieval: context/KeywordRecall [each run's whole context" in text
    assert "caveat: the result holds for these 2 document(s)" in text


def test_power_is_printed_per_rule_and_required_on_request(topk_runs):
    report = check(topk_runs[1], topk_runs[4])
    drops = [o for o in report.outcomes if o.rule.kind == "max_drop"]
    assert drops and all(o.detectable is not None for o in drops)
    # 120 questions cannot see a drop of 0.02 at any stage: every rule says so, with what
    # it would need (more questions than there are, and the documents to cluster by)
    for o in drops:
        assert o.detectable is not None and 0.02 < o.detectable < 0.5
        assert o.power_note.startswith("cannot detect a drop of 0.02 here (needs >= ")
        needed = [int(w) for w in o.power_note.replace("(", " ").split() if w.isdigit()]
        assert needed[0] > 120 and needed[1] >= 20
    assert report.failures  # fails on the context alone, not for want of power
    assert all(o.rule.step == "context" for o in report.failures)
    strict = check(topk_runs[1], topk_runs[4], require_power=True)
    assert {o.rule.target for o in strict.failures} == {o.rule.target for o in drops}
    assert all("(--require-power)" in o.reason for o in strict.failures if o.rule.step != "context")
    # a drop the eval set can see passes the power requirement
    generous = check(
        topk_runs[1],
        topk_runs[4],
        {"rule": [{"target": "answer/PointRecall", "max_drop": 0.5}]},
        require_power=True,
    )
    assert generous.passed and generous.outcomes[0].power_note == ""


def test_the_command_line_says_it(topk_runs, capsys):
    code = main(["check", str(topk_runs[1]), "--baseline", str(topk_runs[4])])
    out = capsys.readouterr().out
    assert code == 1
    assert "cofe check: FAILED: 1 of 5 rule(s): retrieval (context/KeywordRecall)" in out
    assert "power generation: answer/PointRecall: cannot detect a drop of 0.02 here" in out
    code = main(["check", str(topk_runs[4]), "--baseline", str(topk_runs[4]), "--require-power"])
    assert code == 1  # nothing moved, but no rule could have failed on 0.02
    capsys.readouterr()
    code = main(["check", str(topk_runs[1]), "--baseline", str(topk_runs[4]), "--json"])
    saved = json.loads(capsys.readouterr().out)
    assert saved["caveat"] and all("detectable_drop" in o for o in saved["outcomes"])


def test_keyword_recall_at_a_cutoff_is_computed_from_the_ranks_as_scored(topk_runs):
    k4 = read_scores(topk_runs[4])
    for step in ("pool", "context"):
        scored = k4.scores[(k4.scores.step == step) & (k4.scores.measure == "KeywordRecall@4")]
        computed = keyword_recall_at(k4, step, 4)
        pd.testing.assert_series_equal(
            computed.sort_index(),
            scored.set_index("sample_id")["value"].astype(float).sort_index(),
            check_names=False,
        )
    k1 = read_scores(topk_runs[1])
    one = k1.scores[(k1.scores.step == "pool") & (k1.scores.measure == "KeywordRecall@1")]
    assert keyword_recall_at(k4, "pool", 1).sort_index().tolist() == pytest.approx(
        one.set_index("sample_id")["value"].sort_index().tolist()
    )


def test_cofe_plan_from_the_two_runs_and_from_one(topk_runs, capsys):
    assert main(["plan", str(topk_runs[4]), str(topk_runs[1])]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Sample size to detect a drop of 0.02 with 80% power")
    assert "Tests: over questions: 120 questions on 2 source document(s)" in out
    assert "Caveat: the result holds for these 2 document(s)" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if "/" in line[:30]}
    assert set(rows) >= {"parse/KeywordRecall", "context/KeywordRecall", "answer/PointRecall"}
    assert rows["answer/PointRecall"][2] == "120" and rows["answer/PointRecall"][4] == "question"
    assert main(["plan", str(topk_runs[4]), "--json", "--drop", "0.1"]) == 0
    saved = json.loads(capsys.readouterr().out)
    assert saved["drop"] == 0.1 and saved["basis"].startswith("one run")
    assert all(r["questions_needed"] >= 6 for r in saved["rows"])
    assert main(["plan", str(topk_runs[4]), "--measures", "pool/nDCG@9"]) == 2
    assert "not scored in the pilot: pool/nDCG@9" in capsys.readouterr().err


def test_the_html_report_of_a_comparison_has_the_plan(topk_runs, tmp_path, capsys):
    page = tmp_path / "report.html"
    code = main(["compare", str(topk_runs[4]), str(topk_runs[1]), "--html", str(page)])
    assert code == 0
    html = page.read_text(encoding="utf-8")
    assert "<section id='plan'><h2>How many questions</h2>" in html
    assert "Caveat: the result holds for these 2 document(s)" in html
    assert "context: the runs are scored to different cutoffs" in html
