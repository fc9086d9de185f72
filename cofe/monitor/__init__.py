"""Production monitoring: traces in, per-stage time series out.

- spans arrive as OpenInference traces (``cofe monitor collect``: an OTLP/HTTP receiver;
  ``cofe monitor import``: exported span files) or straight from an adapter
  (:func:`watch`), and are assembled into one stage record per trace;
- label-free signals of each stage (latency, errors, empty pools, rank movement,
  refusals, ...) are computed per time window, with the judges' label-free measures
  on a sampled share (:func:`judge_traffic`);
- canaries (:func:`run_canary`) send a keyword-labelled eval set through the live
  pipeline and score each round with the full stage measures and verdicts;
- alert rules name the stage that changed (:func:`evaluate_alerts`; :class:`AlertLoop`
  sends each alert to every :class:`Sink`), and :class:`Dashboard` (``cofe monitor
  serve``) shows series, alerts and cases;
- everything lives in one store (:class:`MonitorStore`): a SQLite file, or PostgreSQL,
  with one repository per entity (``store.traces``, ``store.windows``, ``store.judgements``,
  ``store.canaries``, ``store.alerts``); :func:`refresh_windows` computes its series.

The subpackages are the jobs: ``ingest`` (spans in), ``store``, ``analysis`` (signals,
canaries, alerts) and ``web`` (the servers' web layer, the dashboard); this module
re-exports their public names.
"""

from cofe.adapters import SpanDoc as Doc
from cofe.adapters import TraceRecord
from cofe.adapters import assemble_spans as assemble
from cofe.monitor.analysis._alerting import AlertLoop
from cofe.monitor.analysis._alerts import (
    DEFAULT_RULES,
    Alert,
    AlertRule,
    evaluate,
    evaluate_alerts,
    load_rules,
)
from cofe.monitor.analysis._canary import CanaryRound, run_canary
from cofe.monitor.analysis._judged import judge_traffic
from cofe.monitor.analysis._rules import duration_seconds, rules_schema, rules_toml
from cofe.monitor.analysis._signals import SIGNALS, Signal
from cofe.monitor.analysis._sinks import (
    SINKS,
    LogSink,
    NamedSink,
    Sink,
    StdoutSink,
    WebhookSink,
    open_sinks,
    register_sink,
)
from cofe.monitor.analysis._window_rows import refresh_windows, window_rows
from cofe.monitor.ingest._collector import Collector
from cofe.monitor.ingest._import import import_spans
from cofe.monitor.ingest._record import watch
from cofe.monitor.ingest._spans import Span, SpanFormatError, spans_from_json, spans_from_protobuf
from cofe.monitor.store import STORE_SCHEMA_VERSION, MonitorStore, StoreError
from cofe.monitor.web._dashboard import Dashboard
from cofe.monitor.web._http import bound_heap, check_binding

__all__ = [
    "DEFAULT_RULES",
    "SIGNALS",
    "SINKS",
    "STORE_SCHEMA_VERSION",
    "Alert",
    "AlertLoop",
    "AlertRule",
    "CanaryRound",
    "Collector",
    "Dashboard",
    "Doc",
    "LogSink",
    "MonitorStore",
    "NamedSink",
    "Signal",
    "Sink",
    "Span",
    "SpanFormatError",
    "StdoutSink",
    "StoreError",
    "TraceRecord",
    "WebhookSink",
    "assemble",
    "bound_heap",
    "check_binding",
    "duration_seconds",
    "evaluate",
    "evaluate_alerts",
    "import_spans",
    "judge_traffic",
    "load_rules",
    "open_sinks",
    "refresh_windows",
    "register_sink",
    "rules_schema",
    "rules_toml",
    "run_canary",
    "spans_from_json",
    "spans_from_protobuf",
    "watch",
    "window_rows",
]


def __getattr__(name: str) -> object:
    """``cofe.monitor.Rule``, the alert rule before ``Rule`` meant one thing, still resolves."""
    if name == "Rule":
        import warnings

        warnings.warn(
            "cofe.monitor.Rule is now cofe.monitor.AlertRule (cofe.rules.Rule is a rule as a "
            "rules file writes it)",
            DeprecationWarning,
            stacklevel=2,
        )
        return AlertRule
    raise AttributeError(f"module 'cofe.monitor' has no attribute {name!r}")
