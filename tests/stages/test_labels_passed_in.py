"""The scorer sits below the judge (docs/DESIGN.md, "Layers"): a judged run's labels are
handed in (``labels=``), never imported, and a judged run scored without them says so."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cofe.runlog import JUDGEMENTS
from cofe.stages import score_run
from tests.conftest import EXAMPLE_RUN as EXAMPLE


def _judged_copy(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(EXAMPLE, run, ignore=shutil.ignore_patterns("scores*"))
    (run / JUDGEMENTS).write_text("", encoding="utf-8")  # judged: the file is there
    return run


def test_a_judged_run_without_a_label_reader_warns_and_scores_unjudged(tmp_path: Path) -> None:
    run = _judged_copy(tmp_path)
    with pytest.warns(UserWarning, match=r"was judged .* labels=cofe\.judges\.labels_for_scoring"):
        result = score_run(run)
    assert not {"Faithfulness", "ClaimRecall"} & set(result.scores.measure)


def test_the_reader_given_is_what_the_scorer_asks(tmp_path: Path) -> None:
    run = _judged_copy(tmp_path)
    asked: list[int] = []

    def reader(run_dir, log, records, samples):  # type: ignore[no-untyped-def]
        asked.append(len(samples))
        assert run_dir == run and set(records) <= {s.id for s in samples}
        return {}  # nothing judged after all: every judged measure is unscored

    result = score_run(run, labels=reader)
    assert asked == [len(result.verdicts)]  # one batch, every sample
