"""Each oracle's answers as a scored run beside the run: compare and sweep read them as runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cofe.compare import compare_results
from cofe.replay import Oracle, replay_run
from cofe.results import read_scores
from cofe.sweep import rank_cells

SPEC = "tests.replay._tiny:build"


def _verdicts(folder: Path) -> dict[str, str]:
    lines = (folder / "verdicts.jsonl").read_text().splitlines()
    return {row["sample_id"]: row["verdict"] for row in map(json.loads, lines)}


def test_each_oracle_is_written_as_a_scored_run_of_the_same_samples(scored: Path) -> None:
    replayed = replay_run(scored, pipeline=SPEC)
    # chunking is not replayed for a pipeline of callables: no folder for it
    assert set(replayed.runs) == {Oracle.CONTEXT, Oracle.POOL, Oracle.NO_NOISE}
    assert replayed.runs[Oracle.CONTEXT] == scored / "replay" / "context"
    before = _verdicts(scored / "scores")
    after = _verdicts(replayed.runs[Oracle.POOL])
    assert set(after) == set(before)  # the same samples, the passing one included
    assert after["pass"] == "pass"  # not replayed: the run's own row
    # the pool oracle and the run's own reranker: retrieval's loss recovered, reranking's not
    assert (before["retrieval"], after["retrieval"]) == ("not_retrieved", "pass")
    assert after["reranking"] == "cut_by_rerank"
    summary = json.loads((replayed.runs[Oracle.POOL] / "summary.json").read_text())
    assert summary["shape"]["replay"]["oracle"] == "pool"
    assert summary["shape"]["replay"]["replayed"] == [
        "chunking",
        "generation",
        "reranking",
        "retrieval",
    ]


def test_compare_pairs_the_run_with_its_replay_and_shows_the_gain(scored: Path) -> None:
    replayed = replay_run(scored, pipeline=SPEC)
    recovered = sum(ok for (_, o), ok in replayed.answer_ok.items() if o is Oracle.CONTEXT)
    comparison = compare_results(
        {
            "run": read_scores(scored / "scores"),
            "context": read_scores(replayed.runs[Oracle.CONTEXT]),
        },
        resamples=200,
    )
    d = comparison.differences
    row = d[(d.step == "answer") & (d.measure == "KeywordRecall") & (d.query_type == "all")]
    assert len(row) == 1
    # every recovered sample is a paired gain, none a loss: the same figure the replay gives
    assert int(row.b_better.iloc[0]) == recovered == 3
    assert int(row.a_better.iloc[0]) == 0
    assert row.difference.iloc[0] == pytest.approx(-recovered / 5)
    assert row.n.iloc[0] == 5  # every sample paired, none left out
    moves = {
        (str(t["from"]), str(t["to"])): int(t["count"])
        for t in comparison.transitions.to_dict("records")
    }
    assert moves[("not_retrieved", "pass")] == 1 and moves[("cut_by_rerank", "pass")] == 1
    # sweep's ranking reads it like a cell: the replay is best on the answer
    _, best = rank_cells(
        {
            "run": read_scores(scored / "scores"),
            "context": read_scores(replayed.runs[Oracle.CONTEXT]),
        },
        resamples=200,
    )
    answer = best[(best.step == "answer") & (best.measure == "KeywordRecall")]
    assert answer.best.iloc[0] == "context"


def test_cli_compare_reads_the_replay_folder_and_refuses_html_for_it(
    scored: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cofe.cli import main

    assert main(["replay", str(scored), "--pipeline", SPEC, "--cache", "none"]) == 0
    out = capsys.readouterr().out
    assert f"cofe compare {scored / 'scores'} {scored / 'replay' / 'pool'}" in out
    assert main(["compare", str(scored), str(scored / "replay" / "context")]) == 0
    out = capsys.readouterr().out
    assert "run vs context" in out and "not_retrieved -> pass: 1" in out
    code = main(
        [
            "compare",
            str(scored),
            str(scored / "replay" / "context"),
            "--html",
            str(tmp_path / "page.html"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "has no texts of its own for --html" in err
    assert not (tmp_path / "page.html").exists()


def test_cli_sweep_ranks_the_run_and_its_replay_folders_as_cells(
    scored: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cofe.cli import main

    assert main(["replay", str(scored), "--pipeline", SPEC, "--cache", "none"]) == 0
    capsys.readouterr()
    out_dir = tmp_path / "ranked"
    cells = [scored, scored / "replay" / "pool", scored / "replay" / "context"]
    code = main(["sweep", "--cells", *map(str, cells), "--out", str(out_dir)])
    out = capsys.readouterr().out
    assert code == 0
    assert "Best cell per measure (3 cells" in out
    means = (out_dir / "means.csv").read_text()
    # named run, run@oracle: each replay folder is a cell of its own, the run's samples paired
    assert {"run", "run@pool", "run@context"} <= {
        line.split(",")[0] for line in means.splitlines()[1:]
    }
    summary = json.loads((out_dir / "sweep.json").read_text())
    answer = next(
        b for b in summary["best"] if b["step"] == "answer" and b["measure"] == "KeywordRecall"
    )
    # the context oracle recovers 3 answers, the pool oracle 1 (its reranker cuts the rest)
    assert answer["best"] == "run@context" and answer["runner_up"] == "run@pool"


def test_cli_sweep_cells_refuses_a_grid_and_a_single_cell(
    scored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cofe.cli import main

    assert main(["sweep", "--cells", str(scored), "--chunk-size", "128"]) == 2
    assert "without a grid (chunk_size)" in capsys.readouterr().err
    assert main(["sweep", "--cells", str(scored)]) == 2
    assert "at least two cells" in capsys.readouterr().err
    assert main(["sweep", "--chunk-size", "128"]) == 2
    assert "--evalset" in capsys.readouterr().err
