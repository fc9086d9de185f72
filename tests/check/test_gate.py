"""The gate's decisions on scorings built to sit on each side of each condition."""

from __future__ import annotations

import numpy as np
import pytest

from cofe._errors import InputError
from cofe.check import (
    CheckFailed,
    GateRule,
    Kind,
    Status,
    assert_check,
    check,
    check_results,
    github_annotations,
    junit_xml,
)
from tests.check.conftest import synthetic

N = 400


def ones(share: float, n: int = N, *, offset: int = 0) -> np.ndarray:
    """0/1 values, the first ``share`` of them (rotated by ``offset``) 1."""
    return np.roll((np.arange(n) < round(share * n)).astype(float), offset)


def test_a_significant_drop_within_its_limit_passes():
    old = synthetic({"answer/PointRecall": ones(0.80)})
    new = synthetic({"answer/PointRecall": ones(0.78)})  # 8 of 400 lost, none gained
    rule = GateRule(Kind.MAX_DROP, "answer/PointRecall", 0.02)  # a drop equal to the limit is in
    (outcome,) = check_results(new, [rule], old).outcomes
    assert outcome.test == "mcnemar" and outcome.p_holm == pytest.approx(2 / 2**8)
    assert outcome.status == Status.PASS and outcome.delta == pytest.approx(-0.02)
    assert outcome.reason == "dropped 0.020, within 0.02"
    stricter = GateRule(Kind.MAX_DROP, "answer/PointRecall", 0.01)
    (outcome,) = check_results(new, [stricter], old).outcomes
    assert outcome.status == Status.FAIL and outcome.reason.startswith(
        "dropped 0.020 > 0.01 allowed, and significant (p_holm 0.008 < 0.05)"
    )


def test_a_drop_beyond_its_limit_that_is_not_significant_passes():
    before = ones(0.5, 60)
    after = before.copy()
    after[:5], after[30] = 0.0, 1.0  # 5 lost, 1 gained: a drop of 0.067, McNemar p = 0.22
    old, new = synthetic({"answer/PointRecall": before}), synthetic({"answer/PointRecall": after})
    rule = GateRule(Kind.MAX_DROP, "answer/PointRecall", 0.02)
    (outcome,) = check_results(new, [rule], old).outcomes
    assert -outcome.delta > 0.02 and outcome.p_holm >= 0.05  # type: ignore[operator]
    assert outcome.status == Status.PASS and "but not significant" in outcome.reason


def test_for_a_measure_where_lower_is_better_a_rise_is_the_drop():
    old = synthetic({"context/RerankLoss@4": ones(0.1)})
    worse = synthetic({"context/RerankLoss@4": ones(0.3)})
    better = synthetic({"context/RerankLoss@4": ones(0.0)})
    rule = GateRule(Kind.MAX_DROP, "context/RerankLoss@4", 0.02)
    assert check_results(worse, [rule], old).outcomes[0].status == Status.FAIL
    improved = check_results(better, [rule], old).outcomes[0]
    assert improved.status == Status.PASS and improved.reason == "improved by 0.100"


def test_holm_counts_a_test_repeated_under_two_names_once():
    old = synthetic({"answer/PointRecall": ones(0.8), "answer/BLEU": ones(0.8)})
    new = synthetic({"answer/PointRecall": ones(0.7), "answer/BLEU": ones(0.7, offset=7)})
    rules = [
        GateRule(Kind.MAX_DROP, c, 0.02)
        for c in ("answer/PointRecall", "answered/PointRecall", "answer/BLEU")
    ]
    report = check_results(new, rules, old, resamples=499)
    point, answered, bleu = report.outcomes
    assert report.drop_tests == 2  # answered/ repeats answer/: nothing was refused
    assert answered.p_holm == point.p_holm
    ranked = sorted([point.p_value, bleu.p_value])  # type: ignore[type-var]
    assert max(point.p_holm, bleu.p_holm) == pytest.approx(max(2 * ranked[0], ranked[1]))  # type: ignore[type-var]


def test_answered_measures_leave_out_the_answers_that_decline():
    result = synthetic({"answer/PointRecall": ones(0.5, 4)})
    result.verdicts["refusal"] = ["", None, None, None]  # the first sample declined
    result.verdicts["refusal"] = result.verdicts["refusal"].replace("", "no answer")
    report = check_results(
        result,
        [
            GateRule(Kind.MIN, "answered/PointRecall", 0.3),
            GateRule(Kind.MIN, "answer/PointRecall", 0.5),
        ],
    )
    answered, every = report.outcomes
    assert (answered.value, answered.n) == (pytest.approx(1 / 3), 3)
    assert (every.value, every.n) == (0.5, 4)


def test_the_context_is_the_retrievers_output_when_the_run_does_not_rerank():
    values = {"context/KeywordRecall@4": ones(0.5)}
    rule = GateRule(Kind.MIN, "context/KeywordRecall@4", 0.9)
    assert check_results(synthetic(values), [rule]).outcomes[0].stage == "reranking"
    plain = synthetic(values, stages=("parse", "chunking", "retrieval", "generation"))
    assert check_results(plain, [rule]).outcomes[0].stage == "retrieval"


def test_a_share_counts_a_verdict_or_every_verdict_blaming_a_stage():
    verdicts = ["not_retrieved"] * 10 + ["cut_by_rerank"] * 30 + ["pass"] * 60
    result = synthetic({"answer/PointRecall": ones(0.6, 100)}, verdicts=verdicts)
    rules = [
        GateRule(Kind.MAX_SHARE, "not_retrieved", 0.15),
        GateRule(Kind.MAX_SHARE, "reranking", 0.2),
        GateRule(Kind.MAX_SHARE, "cut_by_rerank", 0.3),
    ]
    nr, rr, cut = check_results(result, rules).outcomes
    assert (nr.status, nr.value, nr.stage) == (Status.PASS, 0.1, "retrieval")
    assert (rr.status, rr.value, rr.stage) == (Status.FAIL, 0.3, "reranking")
    assert (cut.status, cut.value) == (Status.PASS, 0.3)  # at the limit passes


def test_assert_check_raises_an_assertion_naming_stage_and_measure():
    old = synthetic({"pool/KeywordRecall@30": ones(0.9), "answer/PointRecall": ones(0.6)})
    new = synthetic({"pool/KeywordRecall@30": ones(0.6), "answer/PointRecall": ones(0.6)})
    with pytest.raises(CheckFailed) as caught:
        assert_check(new, old, {"rule": [{"target": "pool/KeywordRecall@30", "max_drop": 0.02}]})
    assert isinstance(caught.value, AssertionError)
    assert "retrieval: pool/KeywordRecall@30 dropped 0.300" in str(caught.value)
    assert assert_check(old, old).passed  # the headline defaults: nothing moved
    report = check(new, old)
    assert [o.rule.target for o in report.outcomes] == [
        "pool/KeywordRecall@30",
        "answer/PointRecall",
    ]
    assert report.defaults_used and not report.passed


def test_missing_columns_are_input_errors_and_a_stage_not_compared_is_a_line():
    """Scorings without a points table: the context's cutoffs cannot be aligned, and the
    stage is a line of its own (skip), a failure under strict."""
    old = synthetic({"context/KeywordRecall@4": ones(0.8), "answer/PointRecall": ones(0.6)})
    new = synthetic({"context/KeywordRecall@2": ones(0.8), "answer/PointRecall": ones(0.6)})
    report = check_results(new, [], old)
    assert [(o.rule.target, o.status) for o in report.outcomes] == [
        ("context/KeywordRecall@2", Status.SKIP),
        ("answer/PointRecall", Status.PASS),
    ]
    skipped = report.outcomes[0]
    assert skipped.stage == "reranking" and skipped.reason == (
        "not compared: the baseline has no context column to compare it with "
        "(it has context/KeywordRecall@4)"
    )
    assert report.passed
    assert any(
        line.startswith("::warning") and "not compared" in line
        for line in github_annotations(report)
    )
    strict = check_results(new, [], old, strict=True)
    assert not strict.passed and [(o.stage, o.rule.target) for o in strict.failures] == [
        ("reranking", "context/KeywordRecall@2")
    ]
    assert "(--strict)" in strict.failures[0].reason
    with pytest.raises(InputError, match="not scored in the baseline"):
        check_results(new, [GateRule(Kind.MAX_DROP, "context/KeywordRecall@2", 0.02)], old)


def test_junit_of_a_passing_check_has_no_failure():
    result = synthetic({"answer/PointRecall": ones(0.6)})
    text = junit_xml(check_results(result, [GateRule(Kind.MIN, "answer/PointRecall", 0.5)]))
    assert 'failures="0"' in text and "<failure" not in text and 'tests="1"' in text


def test_github_annotation_text_is_escaped():
    result = synthetic({"answer/PointRecall": ones(0.6)})
    report = check_results(result, [GateRule(Kind.MIN, "answer/PointRecall", 0.9)])
    report.notes.append("100% sure\nreally")
    lines = github_annotations(report)
    assert lines[0].startswith("::error title=cofe check%3A generation (answer/PointRecall)::")
    assert "::warning title=cofe check::100%25 sure%0Areally" in lines


def test_a_rule_of_severity_warning_is_said_and_the_gate_passes():
    result = synthetic({"context/KeywordRecall@4": ones(0.5)})
    rules = {
        "rule": [
            {"target": "context/KeywordRecall@4", "min": 0.9, "severity": "warning"},
            {"target": "context/KeywordRecall@4", "max": 0.95},
        ]
    }
    report = check(result, rules=rules)
    assert report.passed and report.exit_code == 0 and not report.failures
    [warned] = report.warnings
    assert warned.status == Status.FAIL and warned.to_dict()["severity"] == "warning"
    from cofe.check import render_text

    text = render_text(report)
    assert "WARN reranking: context/KeywordRecall@4 >= 0.9" in text
    assert "cofe check: passed: 2 rule(s) (1 warning(s))" in text
    assert any(
        a.startswith("::warning title=cofe check%3A reranking") for a in github_annotations(report)
    )
    assert 'failures="0"' in junit_xml(report) and "warning (the gate passes)" in junit_xml(report)
    # the same rule as an error fails the gate
    rules["rule"][0]["severity"] = "error"
    assert not check(result, rules=rules).passed
