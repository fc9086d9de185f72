"""Scorings that people keep: never a mix of two, never one silently replaced, no fake misses."""

from __future__ import annotations

import json
import shutil

import pytest

from cofe import ScoreConfig, Verdict, read_scores, score_run
from cofe._errors import InputError
from cofe.cli import main
from cofe.results import scores_folder
from tests.conftest import EXAMPLE_RUN


@pytest.fixture
def run_dir(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(EXAMPLE_RUN, run, ignore=shutil.ignore_patterns("scores*"))
    return run


def test_scorings_with_other_settings_sit_side_by_side(run_dir, capsys):
    assert main(["score", str(run_dir), "--json"]) == 0
    assert main(["score", str(run_dir), "--json", "--top-k", "2"]) == 0
    default, other = read_scores(run_dir / "scores"), read_scores(run_dir / "scores-top_k=2")
    assert default.config == ScoreConfig() and other.config == ScoreConfig(top_k=2)
    assert scores_folder(run_dir, ScoreConfig(top_k=2)) == run_dir / "scores-top_k=2"
    assert default.mean("context", "KeywordRecall@4") != other.mean("context", "KeywordRecall@2")


def test_writing_over_a_scoring_with_other_settings_is_refused_without_force(run_dir, capsys):
    out = run_dir / "mine"
    assert main(["score", str(run_dir), "--json", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["score", str(run_dir), "--json", "--out", str(out), "--top-k", "2"]) == 2
    err = capsys.readouterr().err
    assert "summary.json" in err and "other settings" in err and "--force" in err
    assert read_scores(out).config == ScoreConfig()  # the first scoring is intact
    assert (
        main(["score", str(run_dir), "--json", "--out", str(out), "--top-k", "2", "--force"]) == 0
    )
    assert read_scores(out).config == ScoreConfig(top_k=2)
    # the same settings again simply refresh the folder
    assert main(["score", str(run_dir), "--json", "--out", str(out), "--top-k", "2"]) == 0


def test_a_scoring_by_an_older_cofe_with_the_same_settings_is_refreshed(run_dir, capsys):
    # an older cofe wrote its settings before a setting existed (here: --measures); the same
    # defaults must not be refused as "other settings (the defaults; this one: the defaults)"
    out = run_dir / "older"
    assert main(["score", str(run_dir), "--json", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    del summary["config"]["measures"]
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    capsys.readouterr()
    assert main(["score", str(run_dir), "--json", "--out", str(out)]) == 0
    # other settings are still refused
    assert main(["score", str(run_dir), "--json", "--out", str(out), "--top-k", "2"]) == 2
    assert "other settings" in capsys.readouterr().err


def test_a_rescore_killed_mid_way_never_leaves_a_readable_mix(run_dir, monkeypatch):
    result = score_run(run_dir)
    out = result.write(run_dir / "scores")
    before = (out / "scores.csv").read_bytes()
    calls = {"n": 0}
    real_replace = __import__("os").replace

    def crash_on_third(src, dst):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt  # killed while writing the third table
        return real_replace(src, dst)

    monkeypatch.setattr("cofe.results._files.os.replace", crash_on_third)
    with pytest.raises(KeyboardInterrupt):
        score_run(run_dir, config=ScoreConfig()).write(out)
    assert not (out / "summary.json").exists()  # no summary: no complete scoring to read
    with pytest.raises(InputError, match="did not finish"):
        read_scores(out)
    assert not list(out.glob(".*.tmp"))  # no temporary files left behind
    # the tables renamed before the crash are the new scoring's; the summary decides: none
    assert (out / "scores.csv").read_bytes() == before  # same settings, same run: same table


def test_a_run_without_chunks_is_unscored_with_one_reason_not_a_retrieval_miss(run_dir):
    (run_dir / "chunks.jsonl").unlink()
    result = score_run(run_dir)
    verdicts = result.verdicts.verdict
    assert not (verdicts == Verdict.NOT_RETRIEVED).any()
    assert not (verdicts == Verdict.CUT_BY_RERANK).any()
    # an answer holding every point is a pass; every other sample is unscorable, with the
    # reason -- or, when the answer step could not settle a point (an answer copying a chunk
    # whose text the run lost cannot be told from a paraphrase), passes to the parse, saying so
    assert {Verdict.PASS, Verdict.UNSCORABLE} <= set(verdicts)
    open_ = result.verdicts[verdicts == Verdict.PASS_TO_PARSE]
    assert set(verdicts) <= {Verdict.PASS, Verdict.UNSCORABLE, Verdict.PASS_TO_PARSE}
    assert open_.explanation.str.contains("the answer step is undecided").all()
    pool = result.summary().query("step == 'pool'")
    assert (pool.scored == 0).all() and (pool.unscored == 262).all()
    about_chunks = [p for p in result.problems if p.file.endswith("chunks.jsonl")]
    assert len(about_chunks) == 1 and "records no chunks" in about_chunks[0].message
    assert not any("named in no chunk" in p.message for p in result.problems)


def test_summary_names_the_settings(run_dir):
    out = score_run(run_dir, config=ScoreConfig(top_k=3)).write(run_dir / "x")
    assert json.loads((out / "summary.json").read_text())["config"]["top_k"] == 3
