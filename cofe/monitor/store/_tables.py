"""The store's tables, written once for SQLite and PostgreSQL (SQLAlchemy Core).

Types both databases read the same way: text, 64-bit integers, double precision; JSON is
kept as text (the rows are read whole, never queried inside). The tables are those of
store schema version 3, which stores made before SQLAlchemy hold too: their rows are read
as they are (``_migrations`` says how a store reaches the current version).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

metadata = sa.MetaData()


def _text(name: str, **kw: object) -> sa.Column[Any]:
    return sa.Column(name, sa.Text, **kw)  # type: ignore[arg-type]


def _ns(name: str, **kw: object) -> sa.Column[Any]:
    return sa.Column(name, sa.BigInteger, **kw)  # type: ignore[arg-type]


def _real(name: str, **kw: object) -> sa.Column[Any]:
    return sa.Column(name, sa.Double, **kw)  # type: ignore[arg-type]


meta = sa.Table(
    "cofe_meta", metadata, _text("key", primary_key=True), _text("value", nullable=False)
)

spans = sa.Table(
    "spans",
    metadata,
    _text("trace_id", primary_key=True),
    _text("span_id", primary_key=True),
    _text("parent_id"),
    _text("name", nullable=False),
    _text("kind"),
    _ns("start_ns", nullable=False),
    _ns("end_ns", nullable=False),
    _text("status", nullable=False),
    _text("status_message", nullable=False),
    _text("attributes", nullable=False),
    _text("events", nullable=False),
    _ns("received_ns", nullable=False),
    sa.Index("spans_start", "start_ns"),
)

chunks = sa.Table(
    "chunks",
    metadata,
    _text("chunk_id", primary_key=True),
    _text("text", nullable=False),
    _ns("first_seen_ns", nullable=False),
)

traces = sa.Table(
    "traces",
    metadata,
    _text("trace_id", primary_key=True),
    _text("origin", nullable=False),
    _ns("started_ns", nullable=False),
    _ns("ended_ns", nullable=False),
    _text("query"),
    _text("answer"),
    _text("pool"),
    _text("context"),
    _text("latency", nullable=False),
    _text("stages", nullable=False),
    _text("error_stage"),
    _text("error"),
    _text("problems", nullable=False),
    _text("ignored", nullable=False),
    sa.Column("spans", sa.Integer, nullable=False),
    sa.Column("is_query", sa.Integer, nullable=False),
    _ns("updated_ns", nullable=False),
    sa.Index("traces_window", "origin", "started_ns"),
    sa.Index("traces_query", "query", "started_ns"),
)

dirty_windows = sa.Table(
    "dirty_windows", metadata, _text("origin", primary_key=True), _ns("start_ns", primary_key=True)
)

series = sa.Table(
    "series",
    metadata,
    _text("origin", primary_key=True),
    _ns("window_ns", primary_key=True),
    _ns("start_ns", primary_key=True),
    _text("stage", primary_key=True),
    _text("signal", primary_key=True),
    _real("value"),
    sa.Column("n", sa.Integer, nullable=False),
    _text("note"),
)

judgements = sa.Table(
    "judgements",
    metadata,
    _text("trace_id", primary_key=True),
    _text("measure", primary_key=True),
    _real("value"),
    _text("reason"),
    _text("model", nullable=False),
    _ns("judged_ns", nullable=False),
)

canary_rounds = sa.Table(
    "canary_rounds",
    metadata,
    _text("round_id", primary_key=True),
    _ns("started_ns", nullable=False),
    _ns("finished_ns", nullable=False),
    _text("evalset_sha256"),
    _text("pipeline", nullable=False),
    sa.Column("samples", sa.Integer, nullable=False),
    sa.Column("answered", sa.Integer, nullable=False),
    _text("run_dir"),
    _text("summary", nullable=False),
)

canary_measures = sa.Table(
    "canary_measures",
    metadata,
    _text("round_id", primary_key=True),
    _text("stage", nullable=False),
    _text("step", primary_key=True),
    _text("measure", primary_key=True),
    _real("value"),
    sa.Column("n", sa.Integer, nullable=False),
    sa.Column("unscored", sa.Integer, nullable=False),
)

canary_cases = sa.Table(
    "canary_cases",
    metadata,
    _text("round_id", primary_key=True),
    _text("sample_id", primary_key=True),
    _text("trace_id"),
    _text("query", nullable=False),
    _text("verdict", nullable=False),
    _text("stage"),
    _text("evidence", nullable=False),
)

# version 2: alerts fired by ``cofe monitor alerts`` (rule, stage, measure, the change with
# its CI, example cases as JSON, where each sink delivered it)
alerts = sa.Table(
    "alerts",
    metadata,
    _text("alert_id", primary_key=True),
    _text("rule", nullable=False),
    _ns("fired_ns", nullable=False),
    _text("origin", nullable=False),
    _text("stage", nullable=False),
    _text("measure", nullable=False),
    _text("severity", nullable=False),
    _ns("window_start_ns", nullable=False),
    _ns("window_end_ns", nullable=False),
    _real("baseline"),
    _real("current"),
    _real("ci_low"),
    _real("ci_high"),
    _real("p_value"),
    _text("message", nullable=False),
    _text("examples", nullable=False),
    _text("delivered", nullable=False),
    sa.Index("alerts_fired", "rule", "fired_ns"),
)

# version 3: every canary sample's measure values, so alerts test a change per sample
canary_scores = sa.Table(
    "canary_scores",
    metadata,
    _text("round_id"),
    _text("sample_id"),
    _text("step"),
    _text("measure"),
    _real("value", nullable=False),
    sa.PrimaryKeyConstraint("round_id", "step", "measure", "sample_id"),
)

# version 4: per judge (model, prompt version) and judged measure, what its known-answer
# controls said (``cofe monitor judge``): a measure the judge failed is shown unscored
judge_gates = sa.Table(
    "judge_gates",
    metadata,
    _text("model", primary_key=True),
    _text("prompt_version", primary_key=True),
    _text("measure", primary_key=True),
    _real("auc"),
    sa.Column("pairs", sa.Integer, nullable=False),
    _text("failed"),  # why the measure is unscored, or NULL: it passed
    _ns("judged_ns", nullable=False),
)

VERSION_1 = (
    meta,
    spans,
    chunks,
    traces,
    dirty_windows,
    series,
    judgements,
    canary_rounds,
    canary_measures,
    canary_cases,
)
