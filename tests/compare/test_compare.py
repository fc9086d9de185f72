"""compare_results and `cofe compare` on real scorings of the shipped example run."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from cofe import ScoreConfig, score_run
from cofe._errors import InputError
from cofe.cli import main
from cofe.compare import ALL, compare_results
from cofe.compare._compare import _holm_distinct
from cofe.compare._stats import holm
from tests.conftest import EXAMPLE_RUN


@pytest.fixture(scope="module")
def k4_k1():
    return score_run(EXAMPLE_RUN), score_run(EXAMPLE_RUN, config=ScoreConfig(top_k=1))


def test_pairs_samples_and_tests_every_shared_measure(k4_k1):
    k4, k1 = k4_k1
    comparison = compare_results({"k4": k4, "k1": k1}, resamples=499)
    d = comparison.differences.set_index(["query_type", "step", "measure"])
    answer = d.loc[(ALL, "answer", "KeywordRecall")]
    assert answer.difference == 0 and answer.p_value == 1.0  # same answers in both scorings
    pool = d.loc[(ALL, "pool", "KeywordRecall@30")]
    assert pool.n == 262 and pool.difference == 0
    assert "by source document" in comparison.clustering
    assert (comparison.differences.p_holm >= comparison.differences.p_value).all()
    means = comparison.means.set_index(["run", "query_type", "step", "measure"])
    k4_mean = means.loc[("k4", ALL, "context", "KeywordRecall@4")]
    assert k4_mean["low"] <= k4_mean["mean"] <= k4_mean["high"]
    assert k4_mean["mean"] == pytest.approx(k4.mean("context", "KeywordRecall@4"))


def test_a_measure_repeating_an_earlier_ones_values_is_the_same_test_counted_once(k4_k1):
    k4, k1 = k4_k1  # nothing refused: answered/* repeats answer/* sample for sample
    d = compare_results({"k4": k4, "k1": k1}, resamples=99).differences
    rows = d.set_index(["query_type", "step", "measure"])
    answered = rows.loc[(ALL, "answered", "KeywordRecall")]
    answer = rows.loc[(ALL, "answer", "KeywordRecall")]
    assert answered.same_test_as == "answer/KeywordRecall" and answer.same_test_as == ""
    assert (answered.p_value, answered.p_holm) == (answer.p_value, answer.p_holm)
    distinct = d[d.same_test_as == ""]
    assert len(distinct) < len(d)  # Holm's family: each distinct test once
    assert distinct.p_holm.tolist() == holm(distinct.p_value.tolist())


def test_holm_counts_each_distinct_test_once():
    frame = pd.DataFrame(
        {
            "a": "x",
            "b": "y",
            "query_type": ALL,
            "step": ["answer", "answered", "pool"],
            "measure": ["R", "R", "K"],
            "p_value": [0.01, 0.01, 0.02],
            "same_test_as": ["", "answer/R", ""],
        }
    )
    assert _holm_distinct(frame) == pytest.approx([0.02, 0.02, 0.02])  # m = 2, not 3


def test_verdict_transitions_count_every_sample_once(k4_k1):
    k4, k1 = k4_k1
    transitions = compare_results({"k4": k4, "k1": k1}, resamples=99).transitions
    assert transitions["count"].sum() == 262
    moved = transitions[transitions["from"] != transitions["to"]]
    assert not moved.empty  # a context of one loses facts the context of four had
    # every example id really made that move
    v4 = k4.verdicts.set_index("sample_id").verdict
    v1 = k1.verdicts.set_index("sample_id").verdict
    for _, row in moved.iterrows():
        for sid in row["examples"].split():
            assert (v4[sid], v1[sid]) == (row["from"], row["to"])


def test_runs_of_different_eval_sets_are_refused_naming_the_difference(k4_k1):
    k4, _ = k4_k1
    other = score_run(EXAMPLE_RUN)
    other.evalset_sha256 = "f" * 64
    with pytest.raises(InputError, match="different eval sets"):
        compare_results({"a": k4, "b": other})


def test_missing_samples_are_reported(k4_k1):
    k4, _ = k4_k1
    fewer = score_run(EXAMPLE_RUN)
    fewer.verdicts = fewer.verdicts.iloc[10:]
    fewer.scores = fewer.scores[fewer.scores.sample_id.isin(fewer.verdicts.sample_id)]
    comparison = compare_results({"all": k4, "fewer": fewer}, resamples=99)
    assert len(comparison.missing["fewer"]) == 10
    d = comparison.differences.set_index(["query_type", "step", "measure"])
    assert d.loc[(ALL, "answer", "KeywordRecall")].n == 252


def test_cli_compares_run_directories_and_writes_tables(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(EXAMPLE_RUN, a, ignore=shutil.ignore_patterns("scores*"))
    shutil.copytree(EXAMPLE_RUN, b, ignore=shutil.ignore_patterns("scores*"))
    assert main(["score", str(b), "--top-k", "2", "--out", str(b / "k2"), "--json"]) == 0
    capsys.readouterr()
    out = tmp_path / "cmp"
    code = main(
        [
            "compare",
            str(a),
            str(b / "k2"),
            "--names",
            "k4,k2",
            "-o",
            str(out),
            "--resamples",
            "199",
            "--html",
            str(tmp_path / "r.html"),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "Verdict transitions k4 -> k2" in printed and "p_holm" in printed
    saved = json.loads((out / "comparison.json").read_text())
    assert saved["runs"] == ["k4", "k2"] and saved["differences"]
    assert (out / "transitions.csv").exists() and (a / "scores" / "summary.json").exists()
    assert "Verdict transitions k4" in (tmp_path / "r.html").read_text()
    assert main(["compare", str(a)]) == 2  # one run is not a comparison
