"""A pipeline that can say its documents match none of the eval set's sources is asked first."""

from __future__ import annotations

import pytest

from cofe import EvalSample, write_evalset
from cofe.adapters import PythonPipeline
from cofe.runner import run_pipeline


class Mismatched(PythonPipeline):
    def check_sources(self, sources):
        self.asked = list(sources)
        raise ValueError(f"no document of the pipeline is named like {sources[0]!r}")


def test_sources_are_checked_before_the_first_query(tmp_path):
    evalset = tmp_path / "e.jsonl"
    write_evalset(
        evalset,
        [EvalSample(id="q", query="q?", fine_keywords=[["x"]], source={"doc": "report.pdf"})],
    )
    answered = []
    pipeline = Mismatched(chunks=[], retrieve=lambda q: answered.append(q) or [])
    with pytest.raises(ValueError, match=r"report\.pdf"):
        run_pipeline(pipeline, evalset, tmp_path / "run", progress=False)
    assert pipeline.asked == ["report.pdf"] and answered == []
    assert not (tmp_path / "run" / "samples.jsonl").exists()
