"""Shapes real generators' answers take that reference-style answers did not."""

from __future__ import annotations

from cofe import score_run
from tests.stages.test_answer_step import make_run


def test_a_short_answer_found_in_the_context_is_read_not_taken_for_a_copied_sentence(tmp_path):
    # "Nation" is in the context; a one-word answer is no extractive copy of it
    run = make_run(tmp_path / "run", {"short": "Nation"}, points=[["Terry Nation"]])
    result = score_run(run)
    row = result.points[result.points.sample_id == "short"].iloc[0]
    assert row.answer_decision != "absent"
    why = result.verdicts.set_index("sample_id").loc["short", "explanation"]
    assert "copies its context" not in why
