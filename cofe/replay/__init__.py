"""What a fix is worth: a scored run's samples replayed with one stage replaced by an oracle.

``replay_run(RUN)`` re-runs the run's own pipeline on its failed samples with the chunks
holding each lost point placed in the context (``context``), in the pool before the run's own
reranker (``pool``), alone in the context (``no-noise``), or with the source re-chunked so no
point is cut (``chunking``), and scores the new answers with the run's scoring settings;
``stage_fixes`` / ``verdict_checks`` / ``render`` / ``to_dict`` say what each fix is worth and
which verdicts the interventions confirm (docs/replay.md).
"""

from cofe.replay._oracle import SPAN_KIND, SampleOracle, find_oracles
from cofe.replay._replay import (
    REPLAY_FILE,
    Oracle,
    Plan,
    Replayable,
    ReplayRecord,
    ReplayRun,
    ReplayStopped,
    plan_replay,
    rebuild,
    replay_run,
    score_replays,
)
from cofe.replay._seams import FixedDocuments
from cofe.replay._summary import (
    SUMMARY_FILE,
    StageFix,
    VerdictCheck,
    cost,
    headline,
    render,
    render_html,
    report_section,
    stage_fixes,
    to_dict,
    verdict_checks,
    write_summary,
)

__all__ = [
    "REPLAY_FILE",
    "SPAN_KIND",
    "SUMMARY_FILE",
    "FixedDocuments",
    "Oracle",
    "Plan",
    "ReplayRecord",
    "ReplayRun",
    "ReplayStopped",
    "Replayable",
    "SampleOracle",
    "StageFix",
    "VerdictCheck",
    "cost",
    "find_oracles",
    "headline",
    "plan_replay",
    "rebuild",
    "render",
    "render_html",
    "replay_run",
    "report_section",
    "score_replays",
    "stage_fixes",
    "to_dict",
    "verdict_checks",
    "write_summary",
]
