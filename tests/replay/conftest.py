"""The replay tests' shared fixture: the tiny pipeline run and scored once per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from cofe.runner import run_pipeline
from cofe.stages import score_to_folder
from tests.replay import _tiny


@pytest.fixture
def scored(tmp_path: Path) -> Path:
    evalset = _tiny.write(tmp_path)
    run = tmp_path / "run"
    run_pipeline(_tiny.build(), evalset, run, documents=_tiny.documents(), progress=False)
    score_to_folder(run)
    return run
