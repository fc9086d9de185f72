"""``cofe monitor``: watch each stage of a live pipeline.

  collect   an OTLP/HTTP receiver (protobuf or JSON) writing spans to the store
  import    spans exported to a file (OTLP/JSON lines, SDK span JSON, OTLP protobuf)
  canary    send a labelled eval set through the pipeline, score the round (--every 1h)
  judge     the judges' label-free measures on a sampled share of traffic, within a budget
  series    per-stage signals per window (label-free), or canary measures per round
  alerts    evaluate alert rules: a line per alert, a webhook, exit code 3 when one fired
  serve     the dashboard: per-stage series, alert history, drill-down to cases (read-only)
  status    what the store holds
  prune     delete traces older than the retention

The store is a SQLite file (default ``monitor.db``) or a ``postgresql://`` URL
(``--store`` or ``$COFE_MONITOR_STORE``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from cofe._errors import InputError
from cofe.cli._args import existing_path
from cofe.cli._commands import HELP

if TYPE_CHECKING:
    from cofe.monitor import MonitorStore

TOKEN_ENV = "COFE_MONITOR_TOKEN"


def _duration(text: str) -> int:
    """Seconds from ``90``, ``90s``, ``15m``, ``1h``, ``7d`` (as the rules files write them)."""
    from cofe.monitor import duration_seconds

    try:
        return duration_seconds(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _positive_duration(text: str) -> int:
    seconds = _duration(text)
    if seconds < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least one second")
    return seconds


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is not in 0..65535")
    return port


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be more than 0 seconds")
    return value


def _store_location(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--store",
        default=os.environ.get("COFE_MONITOR_STORE", "monitor.db"),
        help="SQLite file or postgresql:// URL (default $COFE_MONITOR_STORE or monitor.db)",
    )


def _store_option(p: argparse.ArgumentParser) -> None:
    _store_location(p)
    p.add_argument(
        "--window",
        type=_duration,
        default=None,
        help="window of the series, fixed when the store is created (default 5m)",
    )
    p.add_argument(
        "--retain",
        type=_duration,
        default=None,
        help="keep traces this long (default 7d; 0 keeps them forever)",
    )


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "monitor",
        help=HELP["monitor"],
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = p.add_subparsers(dest="verb", required=True)

    c = verbs.add_parser("collect", help="receive OTLP/HTTP traces into the store")
    _store_option(c)
    c.add_argument("--host", default="127.0.0.1", help="address to listen on (default loopback)")
    c.add_argument("--port", type=_port, default=4318, help="port (default 4318, OTLP/HTTP's)")
    c.add_argument(
        "--token-file",
        type=Path,
        help=f"file holding the bearer token senders must give (or ${TOKEN_ENV}); "
        "required off loopback",
    )
    c.add_argument(
        "--refresh",
        type=_seconds,
        default=10.0,
        help="seconds between recomputing the windows that received traces",
    )
    c.add_argument(
        "--open-window-refresh",
        type=_seconds,
        default=60.0,
        help="seconds between recomputing the window traffic is still landing in (its "
        "cost grows with its traces; closed windows are recomputed every --refresh)",
    )
    c.set_defaults(run=_collect)

    i = verbs.add_parser("import", help="import exported spans from files")
    _store_option(i)
    i.add_argument("files", type=Path, nargs="+")
    i.set_defaults(run=_import)

    k = verbs.add_parser(
        "canary", help="send a labelled eval set through the pipeline and score it"
    )
    _store_option(k)
    from cofe.cli._run import add_pipeline_options

    k.add_argument(
        "--evalset", type=existing_path, required=True, help="the golden eval set (JSONL)"
    )
    k.add_argument(
        "--runs",
        type=Path,
        default=Path("canary-runs"),
        help="folder of the rounds' run logs and scores (default canary-runs)",
    )
    how = k.add_mutually_exclusive_group(required=True)
    how.add_argument("--pipeline", help="'default' or module:factory (called in this process)")
    how.add_argument(
        "--send", metavar="URL", help="POST each query as JSON to the service and match its traces"
    )
    k.add_argument("--send-field", default="query", help="JSON field of the query (default query)")
    k.add_argument(
        "--wait",
        type=_seconds,
        default=120.0,
        help="seconds to wait for the service's traces (default 120)",
    )
    k.add_argument("--docs", type=Path, help="documents for the pipeline (as for cofe run)")
    k.add_argument(
        "--every", type=_positive_duration, help="run a round every interval until stopped"
    )
    k.add_argument("--rounds", type=int, help="stop after this many rounds")
    add_pipeline_options(k)
    k.set_defaults(run=_canary)

    j = verbs.add_parser("judge", help="label-free judged measures on a sampled share of traffic")
    _store_option(j)
    j.add_argument(
        "--share", type=float, default=0.05, help="share of traces judged (default 0.05)"
    )
    j.add_argument("--budget", type=int, default=200, help="most LLM calls this run (default 200)")
    j.add_argument("--since", type=_duration, help="only traces of this last interval")
    from cofe.cli._judge import add_llm_options, add_steps_option

    add_llm_options(j, limit="judge at most N traces of the share, within the budget")
    add_steps_option(j)
    j.add_argument("--no-embeddings", action="store_true", help="skip AnswerRelevancy")
    j.add_argument(
        "--controls",
        type=int,
        default=10,
        metavar="N",
        help="before a judge's first traffic, judge known-answer controls from N traces "
        "(sentences copied from a trace's context, right; another trace's answer, wrong), "
        "out of the budget; a measure the judge cannot tell them apart on is shown unscored "
        "(default 10; 0: none; else at least 8)",
    )
    j.set_defaults(run=_judge)

    a = verbs.add_parser("alerts", help="evaluate alert rules (exit code 3 when one fires)")
    _store_option(a)
    a.add_argument(
        "--rules",
        type=Path,
        help="TOML file of [[rule]] tables (docs/rules.md; default: the "
        "built-in rules, see --print-default-rules)",
    )
    a.add_argument("--webhook", help="POST each alert as JSON to this URL (retried)")
    a.add_argument("--log", type=Path, help="append each alert as a JSON line to this file")
    a.add_argument(
        "--sink",
        action="append",
        default=[],
        metavar="NAME=SETTING",
        help="also send each alert to a registered sink (log=FILE, webhook=URL, or one "
        "a plugin registered); repeatable",
    )
    a.add_argument("--every", type=_positive_duration, help="evaluate every interval until stopped")
    a.add_argument(
        "--print-default-rules",
        action="store_true",
        help="print the built-in rules as TOML and exit",
    )
    a.add_argument(
        "--print-rules-schema",
        action="store_true",
        help="print the JSON Schema of a rules file's [[rule]] table and exit",
    )
    a.set_defaults(run=_alerts)

    s = verbs.add_parser("series", help="print per-stage series")
    _store_option(s)
    s.add_argument("--stage", help="one stage (all, retrieval, reranking, generation, ...)")
    s.add_argument("--signal", help="one signal or canary measure (e.g. RankMovement)")
    s.add_argument("--since", type=_duration, help="only this last interval (e.g. 1d)")
    s.add_argument("--canary", action="store_true", help="canary measures per round instead")
    s.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    s.set_defaults(run=_series)

    d = verbs.add_parser("serve", help="the dashboard over the store (read-only)")
    _store_location(d)  # read-only: no window or retention to set
    d.add_argument("--host", default="127.0.0.1", help="address to listen on (default loopback)")
    d.add_argument("--port", type=_port, default=8765, help="port (default 8765)")
    d.add_argument(
        "--token-file",
        type=Path,
        help=f"file holding the token a browser must give once as ?token=... (or "
        f"${TOKEN_ENV}); required off loopback",
    )
    d.set_defaults(run=_serve)

    t = verbs.add_parser("status", help="what the store holds")
    _store_option(t)
    t.set_defaults(run=_status)

    r = verbs.add_parser("prune", help="delete traces older than the retention")
    _store_option(r)
    r.set_defaults(run=_prune)


def _open(args: argparse.Namespace) -> MonitorStore:
    from cofe.monitor import MonitorStore

    return MonitorStore(args.store, window_seconds=args.window, retain_seconds=args.retain)


def _token(args: argparse.Namespace) -> str | None:
    if getattr(args, "token_file", None) is not None:
        token: str = args.token_file.read_text(encoding="utf-8").strip()
        if not token:
            raise InputError(f"{args.token_file}: the token file is empty")
        return token
    return os.environ.get(TOKEN_ENV) or None


@contextlib.contextmanager
def _saying(verb: str) -> Iterator[None]:
    """What the monitor logs while ``verb`` runs (the servers' counters, a batch the store
    could not write, a page that failed), shown on stderr as ``cofe monitor VERB: ...``
    lines; the handler goes when the command ends (main() may run again in one process)."""
    import logging

    logger = logging.getLogger("cofe.monitor")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"cofe monitor {verb}: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _collect(args: argparse.Namespace) -> int:
    from cofe.monitor import Collector, bound_heap, check_binding

    bound_heap()  # before any handler thread allocates

    token = _token(args)
    check_binding(args.host, token)  # before the store is created
    store = _open(args)
    collector = Collector(
        store,
        host=args.host,
        port=args.port,
        token=token,
        refresh_seconds=args.refresh,
        open_window_seconds=args.open_window_refresh,
    )

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    print(
        f"cofe monitor collect: listening on {collector.url} (store {store.location}, window "
        f"{store.window_seconds} s{', token required' if token else ''})",
        file=sys.stderr,
        flush=True,
    )
    try:
        with _saying("collect"):
            collector.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        store.close()
    print(f"cofe monitor collect: stopped; {collector.stats.line()}", file=sys.stderr)
    return 0


def _import(args: argparse.Namespace) -> int:
    from cofe.monitor import import_spans, refresh_windows

    store = _open(args)
    problems = 0
    try:
        for path in args.files:
            report = import_spans(store, path)
            for problem in report.problems:
                print(f"cofe: error: {problem}", file=sys.stderr)
            problems += len(report.problems)
            for refusal in report.refusals:
                print(f"cofe: warning: {path}: {refusal}", file=sys.stderr)
            print(
                json.dumps(
                    {
                        "file": str(path),
                        "spans": report.spans,
                        "new_spans": report.new_spans,
                        "traces": report.traces,
                        "traces_with_problems": report.problem_traces,
                        "refused_spans": report.refused_spans,
                        "problems": len(report.problems),
                    }
                )
            )
        refresh_windows(store)
    finally:
        store.close()
    return 2 if problems else 0


def _canary(args: argparse.Namespace) -> int:
    from cofe.cli._run import make_cache, pipeline_options
    from cofe.monitor import run_canary

    pipeline = None
    if args.pipeline:
        from cofe.runner import load_pipeline

        if args.pipeline == "default":
            if args.docs is None:
                raise InputError("the default pipeline needs --docs")
            pipeline = load_pipeline("default", **pipeline_options(args))
        else:
            pipeline = load_pipeline(args.pipeline)
    headers = {}
    token = os.environ.get("COFE_CANARY_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    store = _open(args)
    done = 0
    incomplete = False  # a round some of whose queries never reached the service
    try:
        while True:
            started = time.monotonic()
            result = run_canary(
                store,
                args.evalset,
                args.runs,
                pipeline=pipeline,
                docs=args.docs,
                send=args.send,
                send_field=args.send_field,
                headers=headers,
                wait_seconds=args.wait,
                concurrency=args.concurrency,
                cache=make_cache(args.cache),
            )
            print(result.line(), flush=True)
            not_sent = result.not_sent_line()
            if not_sent:  # stored and scored all the same; said, and the exit code is 1
                print(f"cofe monitor canary: {not_sent}", file=sys.stderr, flush=True)
                incomplete = True
            done += 1
            if args.every is None or (args.rounds is not None and done >= args.rounds):
                return 1 if incomplete else 0
            time.sleep(max(0.0, args.every - (time.monotonic() - started)))
    finally:
        store.close()


def _judge(args: argparse.Namespace) -> int:
    from cofe.cli._judge import llm_defaults, steps_default

    llm_defaults(args)
    steps_default(args)
    from cofe.cli._judge import _embedder
    from cofe.judges import CONTROL_MIN_PAIRS
    from cofe.llm import Endpoint, LLMClient
    from cofe.monitor import judge_traffic, refresh_windows

    if args.controls < 0 or 0 < args.controls < CONTROL_MIN_PAIRS:
        raise InputError(
            f"--controls must be 0 (none) or at least {CONTROL_MIN_PAIRS} (fewer cannot decide "
            f"anything), not {args.controls}"
        )

    endpoint = Endpoint.from_env(base_url=args.base_url, model=args.model, timeout=args.timeout)
    endpoint.probe()
    client = LLMClient(endpoint, json_mode=args.json_mode)
    store = _open(args)
    try:
        since = time.time_ns() - args.since * 1_000_000_000 if args.since else 0
        try:
            report = judge_traffic(
                store,
                client,
                share=args.share,
                budget=args.budget,
                since_ns=since,
                embedder=_embedder(args),
                concurrency=args.concurrency,
                limit=args.limit,
                controls=args.controls,
                steps=args.steps,
            )
        finally:  # the windows of what was judged, even when the endpoint died midway
            refresh_windows(store)
    finally:
        store.close()
    print(json.dumps({**report.__dict__, "usage": client.usage.to_dict()}, indent=2))
    failed = [name for name, line in report.controls.items() if "unscored" in line]
    if failed:  # the line a person must not miss under the JSON
        print(
            "cofe monitor judge: this judge failed its known-answer controls on "
            f'{", ".join(failed)}: the monitor shows them unscored (see "controls" above)',
            file=sys.stderr,
        )
    return 0


def _alerts(args: argparse.Namespace) -> int:
    from cofe.monitor import (
        DEFAULT_RULES,
        AlertLoop,
        StdoutSink,
        load_rules,
        open_sinks,
        rules_toml,
    )

    if args.print_default_rules:
        print(rules_toml(DEFAULT_RULES), end="")
        return 0
    if args.print_rules_schema:
        from cofe.monitor import rules_schema

        print(rules_schema())
        return 0
    from cofe.rules import old_spellings_said

    with old_spellings_said():  # an old spelling: one line on stderr naming the new one
        rules = load_rules(args.rules) if args.rules else list(DEFAULT_RULES)
    named = [("log", str(args.log))] if args.log else []
    named += [("webhook", args.webhook)] if args.webhook else []
    named += [_sink_setting(text) for text in args.sink]
    store = _open(args)
    try:
        with _saying("alerts"):
            loop = AlertLoop(store, rules, [StdoutSink(), *open_sinks(named, store)])
            fired = loop.run(args.every)
    finally:
        store.close()
    return 3 if fired else 0


def _sink_setting(text: str) -> tuple[str, str]:
    name, equals, setting = text.partition("=")
    if not equals or not name:
        raise InputError(f"--sink takes NAME=SETTING (e.g. log=alerts.jsonl), not {text!r}")
    return name, setting


def _when(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _series(args: argparse.Namespace) -> int:
    from cofe.monitor import refresh_windows

    store = _open(args)
    try:
        since = time.time_ns() - args.since * 1_000_000_000 if args.since else 0
        if args.canary:
            rows = store.canaries.series(since_ns=since, stage=args.stage, measure=args.signal)
        else:
            refresh_windows(store)
            rows = store.windows.series(since_ns=since, stage=args.stage, signal=args.signal)
    finally:
        store.close()
    if args.json:
        for row in rows:
            print(json.dumps({**row, "start": _when(row["start_ns"])}))
        return 0
    if not rows:
        print("no series yet (nothing stored in that range)")
        return 0
    name = "measure" if args.canary else "signal"
    print(f"{'window start (UTC)':<20} {'stage':<11} {name:<24} {'value':>10} {'n':>6}  note")
    for row in rows:
        value = "-" if row["value"] is None else f"{row['value']:.4g}"
        print(
            f"{_when(row['start_ns']):<20} {row['stage']:<11} {row[name]:<24} {value:>10} "
            f"{row['n']:>6}  {row.get('note') or ''}"
        )
    return 0


def _serve(args: argparse.Namespace) -> int:
    from cofe.monitor import Dashboard
    from cofe.monitor.store import shown_location

    token = _token(args)
    dashboard = Dashboard(args.store, host=args.host, port=args.port, token=token)

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    # the URL only: the token is the user's to append (?token=...), never printed
    print(
        f"cofe monitor serve: {dashboard.url} (store {shown_location(args.store)}, read-only"
        f"{'; open it once with ?token=...' if token else ''})",
        file=sys.stderr,
        flush=True,
    )
    with contextlib.suppress(KeyboardInterrupt), _saying("serve"):
        dashboard.serve_forever()
    return 0


def _status(args: argparse.Namespace) -> int:
    from cofe.monitor import MonitorStore

    # it only reads: a store on a read-only mount, or another user's, is read as it is
    store = MonitorStore(args.store, read_only=True)
    try:
        counts = store.counts()
        out = {
            "store": store.location,
            "engine": store.engine,
            "schema_version": store.schema_version,
            "window_seconds": store.window_seconds,
            "retain_seconds": store.retain_seconds,
            "size_bytes": store.size_bytes(),
            **counts,
            "problems": store.traces.problem_counts(),
        }
    finally:
        store.close()
    print(json.dumps(out, indent=2))
    return 0


def _prune(args: argparse.Namespace) -> int:
    store = _open(args)
    try:
        print(json.dumps(store.prune()))
    finally:
        store.close()
    return 0
