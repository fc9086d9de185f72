"""The command line, run in-process and as a real subprocess."""

import json
import shutil
import subprocess
import sys

from cofe.cli import main
from tests.conftest import EXAMPLE_RUN, REPO


def _copy_example(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(EXAMPLE_RUN, run, ignore=shutil.ignore_patterns("scores"))
    return run


def test_score_the_shipped_example(tmp_path, capsys):
    run = _copy_example(tmp_path)
    assert main(["score", str(run)]) == 0
    out = capsys.readouterr().out
    assert "Loss waterfall" in out and "Verdicts" in out and "KeywordRecall@4" in out
    summary = json.loads((run / "scores" / "summary.json").read_text())
    counts = summary["verdicts"]["overall"]
    assert sum(counts.values()) == summary["samples"]["in_evalset"] == 262
    assert set(counts) <= {
        "pass",
        "parse_lost",
        "chunk_split",
        "not_retrieved",
        "cut_by_rerank",
        "not_in_answer",
    }
    # the waterfall can only go down from the corpus to the context
    fall = summary["waterfall"]["overall"]
    assert fall["corpus"] >= fall["pool"] >= fall["context"]


def test_score_json_and_modes(tmp_path, capsys):
    run = _copy_example(tmp_path)
    assert (
        main(
            [
                "score",
                str(run),
                "--json",
                "--mode",
                "cofe-rag",
                "--top-k",
                "2",
                "--out",
                str(tmp_path / "s"),
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["config"]["mode"] == "cofe-rag" and summary["config"]["top_k"] == 2
    assert any(m["measure"] == "KeywordRecall@2" for m in summary["measures"])


def test_bad_input_exits_2_naming_the_file(tmp_path, capsys):
    assert main(["score", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "manifest.json" in err and "not a run directory" in err


def test_import_squad_and_export_documents(tmp_path, capsys):
    out = tmp_path / "evalset.jsonl"
    docs = tmp_path / "docs"
    squad = REPO / "cofe/_data/squad/squad-v1.1-dev-part-b.json"
    assert (
        main(
            [
                "import",
                "squad",
                str(squad),
                "-o",
                str(out),
                "--docs-out",
                str(docs),
                "--limit",
                "200",
            ]
        )
        == 0
    )
    assert len(out.read_text().splitlines()) == 200
    # the first 200 questions: 180 on Southern California, 20 on Doctor Who
    assert sorted(p.name for p in docs.iterdir()) == ["Doctor_Who.txt", "Southern_California.txt"]
    captured = capsys.readouterr()
    assert '"imported": 5609' in captured.out
    # flagged labels are kept: the problem lines must not all say "skipped"
    problems = [line for line in captured.err.splitlines() if line.startswith("problem: ")]
    assert problems and any("the sample is kept" in line for line in problems)


def test_console_script_runs_as_a_subprocess(tmp_path):
    run = _copy_example(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "cofe", "score", str(run), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["run_id"] == "example-squad-bm25"
