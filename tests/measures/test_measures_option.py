"""`cofe score --measures`: measures chosen by name, the plan derived from the run's shape."""

import shutil
import subprocess
import sys

import pytest

from cofe import ScoreConfig, score_run
from cofe.measures import NDCG, KeywordRecall, PointRecall, Step, parse_measures, spell_measures
from tests.conftest import EXAMPLE_RUN


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    run = tmp_path_factory.mktemp("run") / "ex"
    shutil.copytree(EXAMPLE_RUN, run, ignore=shutil.ignore_patterns("scores*"))
    return run


def test_spellings_are_read_like_ir_measures():
    chosen = parse_measures(" keywordrecall@4 , answer/PointRecall,NDCG@10")
    assert chosen == (
        (None, KeywordRecall(4)),
        (Step.ANSWER, PointRecall()),
        (None, NDCG(10)),
    )
    assert spell_measures(chosen) == "KeywordRecall@4,answer/PointRecall,nDCG@10"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("KeywordRecal@4", "did you mean KeywordRecall"),
        ("answer/nDCG@3", "not measured at answer"),
        ("retriever/KeywordRecall", "unknown step 'retriever'"),
        ("KeywordRecall@0", "cutoff must be at least 1"),
        (" , ", "no measure given"),
    ],
)
def test_bad_spellings_say_what_is_wrong(text, says):
    with pytest.raises(ValueError, match=says):
        parse_measures(text)


def test_only_the_chosen_measures_and_the_same_verdicts(example):
    full = score_run(example)
    chosen = score_run(example, config=ScoreConfig(measures="KeywordRecall@4,PointRecall"))
    columns = set(zip(chosen.scores.step, chosen.scores.measure, strict=True))
    # a cutoff only where there is a ranking; no cutoff: every step of the kind
    assert columns == {
        ("pool", "KeywordRecall@4"),
        ("context", "KeywordRecall@4"),
        ("answer", "PointRecall"),
    }
    assert chosen.verdicts.verdict.tolist() == full.verdicts.verdict.tolist()
    same = full.scores[(full.scores.step == "context") & (full.scores.measure == "KeywordRecall@4")]
    mine = chosen.scores[chosen.scores.measure == "KeywordRecall@4"]
    assert mine[mine.step == "context"].value.tolist() == same.value.tolist()


def test_two_spellings_of_one_choice_name_one_folder():
    a = ScoreConfig(measures="ndcg@3, keywordrecall@4")
    assert a.measures == "nDCG@3,KeywordRecall@4"
    assert a == ScoreConfig(measures="nDCG@3,KeywordRecall@4")


def test_a_measure_the_run_cannot_have_is_refused_before_scoring(example):
    done = subprocess.run(
        [sys.executable, "-m", "cofe", "score", str(example), "--measures", "Faithfulness"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "cannot measure Faithfulness at answer" in done.stderr
    assert "Traceback" not in done.stderr
    assert not any(example.glob("scores-measures*"))
