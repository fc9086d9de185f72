"""Alert rules: a change tested like cofe compare, named by stage, with examples; sinks."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cofe._errors import InputError
from cofe.cli import main
from cofe.monitor import MonitorStore, refresh_windows
from cofe.monitor.analysis._alerts import DEFAULT_RULES, AlertRule, evaluate_alerts, load_rules
from cofe.monitor.analysis._sinks import WebhookSink
from cofe.monitor.analysis._unpaired import unpaired_change
from tests.monitor.conftest import T0, rag_trace

H = 3600 * 10**9
ALIGN = (-T0) % H  # from T0 to the next hour: windows start on the hour
W0 = T0 + ALIGN  # the first whole window


def add_round(
    store: MonitorStore,
    n: int,
    started: int,
    verdicts: dict[str, tuple[str, str]],
    anchored: dict[str, float] | None = None,
    evalset: str = "golden-v1",
):
    """A canary round: ``verdicts`` maps sample id -> (verdict, stage); ``anchored`` sample id
    -> its corpus/EntityAnchoring."""
    round_id = f"r{n}"
    store.db.execute(
        "INSERT INTO canary_rounds (round_id, started_ns, finished_ns, pipeline, "
        "samples, answered, summary, evalset_sha256) VALUES (?, ?, ?, 'p', ?, ?, "
        "'{}', ?)",
        [round_id, started, started + 10**9, len(verdicts), len(verdicts), evalset],
    )
    store.db.executemany(
        "INSERT INTO canary_cases (round_id, sample_id, trace_id, query, verdict, stage, "
        "evidence) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (
                round_id,
                s,
                f"t-{round_id}-{s}",
                f"question {s}?",
                v,
                st,
                json.dumps({"explanation": f"why {s}", "points": 1}),
            )
            for s, (v, st) in verdicts.items()
        ],
    )
    store.db.executemany(
        "INSERT INTO canary_scores (round_id, sample_id, step, measure, value) VALUES "
        "(?, ?, 'corpus', 'EntityAnchoring', ?)",
        [(round_id, s, v) for s, v in (anchored or {}).items()],
    )
    return round_id


RULE = AlertRule(
    name="reranker loses evidence",
    source="canary",
    stage="reranking",
    measure="lost@reranking",
    min_samples=10,
    alpha=0.01,
    cooldown=0,
)


def test_a_canary_jump_in_one_stages_losses_fires_once_naming_it(tmp_path: Path):
    healthy = {f"s{i}": ("pass", None) for i in range(30)}
    with MonitorStore(tmp_path / "m.db") as store:
        for n in range(3):
            add_round(store, n, T0 + n * 6 * H, healthy)
        assert evaluate_alerts(store, [RULE], now_ns=T0 + 13 * H) == []  # nothing changed
        broken = dict(healthy) | {f"s{i}": ("cut_by_rerank", "reranking") for i in range(12)}
        current = add_round(store, 3, T0 + 18 * H, broken)
        [alert] = evaluate_alerts(store, [RULE], now_ns=T0 + 19 * H)
        assert (alert.stage, alert.measure, alert.origin) == (
            "reranking",
            "lost@reranking",
            "canary",
        )
        assert (alert.baseline, alert.current) == (0.0, 0.4)
        assert alert.ci_low > 0 and alert.p_value < 0.01
        assert "0 -> 0.4" in alert.message and current in alert.message
        assert [e["verdict"] for e in alert.examples] == ["cut_by_rerank"] * 5
        assert alert.examples[0]["evidence"].startswith("why ")
        # the same round is never alerted twice, and the alert is stored
        assert evaluate_alerts(store, [RULE], now_ns=T0 + 20 * H) == []
        assert store.db.execute("SELECT rule, stage FROM alerts") == [(RULE.name, "reranking")]
        # the change persists: while its first round is in the baseline it is the same change
        # (no cooldown in this rule: the baseline alone keeps it quiet)
        add_round(store, 4, T0 + 24 * H, broken)
        assert evaluate_alerts(store, [RULE], now_ns=T0 + 25 * H) == []


def test_a_canary_change_below_the_minimum_effect_or_samples_stays_quiet(tmp_path: Path):
    healthy = {f"s{i}": ("pass", None) for i in range(30)}
    with MonitorStore(tmp_path / "m.db") as store:
        for n in range(3):
            add_round(store, n, T0 + n * H, healthy)
        small = dict(healthy) | {"s0": ("cut_by_rerank", "reranking")}
        add_round(store, 3, T0 + 3 * H, small)
        assert evaluate_alerts(store, [RULE], now_ns=T0 + 4 * H) == []
    with MonitorStore(tmp_path / "few.db") as store:
        few = {f"s{i}": ("pass", None) for i in range(5)}
        for n in range(3):
            add_round(store, n, T0 + n * H, few)
        add_round(store, 3, T0 + 3 * H, {s: ("cut_by_rerank", "reranking") for s in few})
        assert evaluate_alerts(store, [RULE], now_ns=T0 + 4 * H) == []  # 5 < min_samples


def test_a_chunking_measure_falling_per_sample_fires_for_the_chunker(tmp_path: Path):
    rule = next(r for r in DEFAULT_RULES if r.measure == "corpus/EntityAnchoring")
    cases = {f"s{i}": ("pass", None) for i in range(40)}
    with MonitorStore(tmp_path / "m.db") as store:
        for n in range(3):
            add_round(store, n, T0 + n * 24 * H, cases, {s: 1.0 for s in cases})
        smaller_chunks = {s: 0.0 if i < 15 else 1.0 for i, s in enumerate(cases)}
        add_round(store, 3, T0 + 72 * H, cases, smaller_chunks)
        [alert] = evaluate_alerts(store, [rule], now_ns=T0 + 73 * H)
    assert (alert.stage, alert.baseline, alert.current) == ("chunking", 1.0, 0.625)
    assert alert.ci_high < 0 and alert.p_value < 0.01
    assert [e["sample_id"] for e in alert.examples] == ["s0", "s1", "s10", "s11", "s12"]


def _traffic(store: MonitorStore, windows: int, per_window: int, broken_from: int) -> None:
    pool = [
        "The tower was finished in 1889.",
        "Paris is a city.",
        "The Louvre is a museum.",
        "x y z",
        "a b c",
    ]
    for w in range(windows):
        for i in range(per_window):
            # one trace in five drops the pool's first chunk when healthy; all of them when broken
            drop = w >= broken_from or i % 5 == 0
            store.traces.ingest(
                rag_trace(
                    trace=f"{w * 1000 + i + 1:032x}",
                    pool=pool,
                    context=pool[1:3] if drop else pool[:2],
                    start=ALIGN / 1e9 + w * 3600 + i * 10,
                )
            )


def test_traffic_top1_dropped_fires_for_the_reranker_with_example_traces(tmp_path: Path):
    rule = AlertRule(
        name="top1",
        source="traffic",
        stage="reranking",
        measure="Top1Dropped",
        min_samples=20,
        alpha=0.001,
        min_effect=0.2,
        baseline=3,
    )
    with MonitorStore(tmp_path / "m.db", window_seconds=3600) as store:
        _traffic(store, 5, 30, broken_from=4)
        quiet = [evaluate_alerts(store, [rule], now_ns=W0 + (w + 1) * H + 1) for w in range(4)]
        assert quiet == [[], [], [], []]  # 20 % dropped all along: no change
        [alert] = evaluate_alerts(store, [rule], now_ns=W0 + 5 * H + 1)
    assert alert.stage == "reranking" and alert.origin == "traffic"
    assert alert.baseline == pytest.approx(0.2) and alert.current == 1.0
    assert alert.window_start_ns == W0 + 4 * H
    assert len(alert.examples) == 5 and all(e["Top1Dropped"] == 1.0 for e in alert.examples)


def test_a_traffic_change_fires_only_when_its_whole_interval_clears_the_minimum_effect(
    tmp_path: Path,
):
    """A window's value depends on which queries came: a change estimated just past
    ``min_effect`` from 30 traces may be a smaller one. 20 % -> 60 % dropped is significant
    and its estimate (+0.4) is past 0.3, but its 95 % interval reaches below 0.3: quiet; the
    same traffic against a 0.2 minimum fires, and so does 20 % -> 100 % against 0.3."""
    rule = AlertRule(
        name="top1",
        source="traffic",
        stage="reranking",
        measure="Top1Dropped",
        min_samples=20,
        alpha=0.001,
        min_effect=0.3,
        baseline=3,
    )
    pool = ["The tower was finished in 1889.", "Paris is a city.", "The Louvre.", "x y z"]
    with MonitorStore(tmp_path / "m.db", window_seconds=3600) as store:
        for w in range(5):
            for i in range(30):
                # healthy: one in five drops the first chunk; window 3: three in five; 4: all
                drop = i % 5 == 0 or (w == 3 and i % 5 in (1, 2)) or w == 4
                store.traces.ingest(
                    rag_trace(
                        trace=f"{w * 1000 + i + 1:032x}",
                        pool=pool,
                        context=pool[1:3] if drop else pool[:2],
                        start=ALIGN / 1e9 + w * 3600 + i * 10,
                    )
                )
        at = W0 + 4 * H + 1  # after window 3
        assert evaluate_alerts(store, [rule], now_ns=at) == []
        smaller = AlertRule(**{**rule.__dict__, "name": "top1 by a fifth", "min_effect": 0.2})
        [alert] = evaluate_alerts(store, [smaller], now_ns=at)
        assert alert.current == pytest.approx(0.6) and alert.ci_low is not None
        assert 0.2 <= alert.ci_low < 0.3 < 0.4 == pytest.approx(alert.current - alert.baseline)
        [alert] = evaluate_alerts(store, [rule], now_ns=W0 + 5 * H + 1)  # window 4: all dropped
    assert alert.window_start_ns == W0 + 4 * H and alert.current == 1.0


def test_a_threshold_rule_fires_when_crossed(tmp_path: Path):
    rule = AlertRule(
        name="slow",
        source="traffic",
        stage="generation",
        measure="LatencyP95",
        kind="threshold",
        above=0.4,
        min_samples=10,
    )
    with MonitorStore(tmp_path / "m.db", window_seconds=3600) as store:
        _traffic(store, 1, 12, broken_from=99)
        [alert] = evaluate_alerts(store, [rule], now_ns=W0 + H + 1)
        assert alert.current == pytest.approx(0.5) and "above 0.4" in alert.message
        higher = AlertRule(**{**rule.__dict__, "name": "slower", "above": 0.6})
        assert evaluate_alerts(store, [higher], now_ns=W0 + H + 1) == []


def test_the_unpaired_test_holds_its_level_on_noise():
    import numpy as np

    rng = np.random.default_rng(7)
    fired = 0
    for trial in range(200):
        a, b = rng.random(40) < 0.3, rng.random(120) < 0.3
        *_, p = unpaired_change(a.astype(float), b.astype(float), seed=trial)
        fired += p < 0.05
    assert fired <= 20  # about 5 % of 200 (10), never far above
    diff, low, high, p = unpaired_change([1.0] * 40, [0.0] * 120)
    assert (diff, p < 0.001) == (1.0, True) and low <= diff <= high


def test_rules_files_are_checked_and_named(tmp_path: Path):
    path = tmp_path / "rules.toml"
    path.write_text(
        '[[rule]]\nname = "x"\nsource = "traffic"\nstage = "reranking"\nmeasure = "Top1Droped"\n'
    )
    with pytest.raises(
        InputError, match=r"rule 1 \('x'\).*no label-free signal reranking/Top1Droped"
    ):
        load_rules(path)
    path.write_text(
        '[[rule]]\nname = "x"\nsource = "canary"\nstage = "reranking"\n'
        'measure = "lost@reranking"\ncooldwn = "1h"\n'
    )
    with pytest.raises(InputError, match=r"rules.toml:6: rule 1 \('x'\).cooldwn: unknown field"):
        load_rules(path)
    path.write_text(
        '[[rule]]\nname = "x"\ntarget = "lost@reranking"\nmax_rise = 0.1\ncooldown = "2h"\n'
    )
    assert load_rules(path)[0].cooldown == 7200
    path.write_text("[[rule]\n")
    with pytest.raises(InputError, match="not valid TOML"):
        load_rules(path)


class _Receiver:
    """A webhook receiver on loopback: fails the first ``failures`` POSTs with 503, is slow."""

    def __init__(self, failures: int, delay: float = 0.0) -> None:
        self.bodies: list[dict] = []
        self.attempts = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.attempts += 1
                time.sleep(delay)
                if outer.attempts <= failures:
                    self.send_response(503)
                    self.end_headers()
                    return
                outer.bodies.append(json.loads(body))
                self.send_response(204)
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook?secret=s3"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


def test_the_webhook_is_retried_never_blocks_and_records_delivery(tmp_path: Path):
    healthy = {f"s{i}": ("pass", None) for i in range(30)}
    receiver = _Receiver(failures=2, delay=0.3)
    try:
        with MonitorStore(tmp_path / "m.db") as store:
            for n in range(3):
                add_round(store, n, T0 + n * H, healthy)
            add_round(store, 3, T0 + 3 * H, {s: ("cut_by_rerank", "reranking") for s in healthy})
            [alert] = evaluate_alerts(store, [RULE], now_ns=T0 + 4 * H)
            sink = WebhookSink(receiver.url, store, backoff=0.05)
            started = time.perf_counter()
            sink.send(alert)
            assert time.perf_counter() - started < 0.1  # queued: the caller never waits
            sink.close(timeout=10)
            assert receiver.attempts == 3 and receiver.bodies[0]["stage"] == "reranking"
            assert receiver.bodies[0]["examples"][0]["verdict"] == "cut_by_rerank"
            [(delivered,)] = store.db.execute("SELECT delivered FROM alerts")
        record = json.loads(delivered)
        assert record == {f"{receiver.url.split('/hook')[0]}": "delivered after 3 attempt(s)"}
        assert "s3" not in delivered and "hook" not in delivered  # path and query may be secrets
    finally:
        receiver.close()


def test_the_cli_prints_alerts_and_exits_3_for_cron(tmp_path: Path, capsys):
    db = tmp_path / "m.db"
    healthy = {f"s{i}": ("pass", None) for i in range(30)}
    with MonitorStore(db) as store:
        for n in range(3):
            add_round(store, n, time.time_ns() - (10 - n) * H, healthy)
    log = tmp_path / "alerts.jsonl"
    assert main(["monitor", "alerts", "--store", str(db), "--log", str(log)]) == 0
    with MonitorStore(db) as store:
        add_round(
            store, 3, time.time_ns() - 2 * H, {s: ("not_in_answer", "generation") for s in healthy}
        )
    assert main(["monitor", "alerts", "--store", str(db), "--log", str(log)]) == 3
    out = capsys.readouterr().out
    assert "cofe alert [critical] generation: lost@generation 0 -> 1" in out
    assert json.loads(log.read_text().splitlines()[0])["stage"] == "generation"
    assert main(["monitor", "alerts", "--store", str(db)]) == 0  # the same round: once only
    assert {r.name for r in DEFAULT_RULES} >= {"canary lost@reranking", "canary lost@generation"}


def test_the_cli_says_what_it_evaluated_when_nothing_fires(tmp_path: Path, capsys):
    db = tmp_path / "m.db"
    healthy = {f"s{i}": ("pass", None) for i in range(30)}
    with MonitorStore(db, window_seconds=3600) as store:
        for n in range(3):
            add_round(store, n, time.time_ns() - (10 - n) * H, healthy)
        middle = store.window_of(time.time_ns()) - H // 2  # of the last whole window
        for i in range(4):
            store.traces.ingest(rag_trace(trace=f"{i + 1:032x}", start=(middle - T0) / 1e9 + i))
    assert main(["monitor", "alerts", "--store", str(db)]) == 0
    [line] = capsys.readouterr().out.splitlines()
    rules = len(DEFAULT_RULES)
    assert line.startswith(f"cofe alerts: {rules} rules evaluated over ")
    assert "(4 query traces)" in line and "3 canary rounds" in line
    assert line.endswith("none fired")


def test_re_chunking_shows_in_traffic_as_a_relative_change_in_chunk_length(tmp_path: Path):
    rule = next(r for r in DEFAULT_RULES if r.measure == "ChunkChars")
    assert (rule.stage, rule.relative, rule.direction) == ("chunking", True, "either")
    long = [f"chunk {i} " + "word " * 60 for i in range(5)]
    with MonitorStore(tmp_path / "m.db", window_seconds=3600) as store:
        for w in range(5):
            for i in range(25):
                texts = long if w < 4 else [t[: len(t) // 2] for t in long]  # halved in window 4
                # lengths vary a little from trace to trace, as real chunks do
                pool = [t + "x" * ((i * 7 + j) % 13) for j, t in enumerate(texts)]
                store.traces.ingest(
                    rag_trace(
                        trace=f"{w * 1000 + i + 1:032x}",
                        pool=pool,
                        start=ALIGN / 1e9 + w * 3600 + i * 10,
                    )
                )
        assert [evaluate_alerts(store, [rule], now_ns=W0 + (w + 1) * H + 1) for w in range(4)] == [
            [],
            [],
            [],
            [],
        ]
        [alert] = evaluate_alerts(store, [rule], now_ns=W0 + 5 * H + 1)
        refresh_windows(store)
        series = store.windows.series(stage="chunking", signal="ChunkChars")
    assert alert.stage == "chunking" and alert.current < 0.6 * alert.baseline
    # the label-free series
    assert len(series) == 5 and series[4]["value"] < 0.6 * series[3]["value"]


def test_traffic_that_stopped_is_a_count_threshold_and_fires_on_an_empty_window(tmp_path: Path):
    stopped = AlertRule(
        name="no traffic",
        source="traffic",
        stage="all",
        measure="Traces",
        kind="threshold",
        below=1,
    )
    with pytest.raises(ValueError, match="count per window"):
        AlertRule(name="x", source="traffic", stage="all", measure="Traces")
    with MonitorStore(tmp_path / "m.db", window_seconds=3600) as store:
        _traffic(store, 1, 5, broken_from=99)
        assert evaluate_alerts(store, [stopped], now_ns=W0 + H + 1) == []  # 5 traces
        [alert] = evaluate_alerts(store, [stopped], now_ns=W0 + 2 * H + 1)  # none in window 1
    assert alert.current == 0.0 and "below 1" in alert.message


def test_a_canary_threshold_on_a_verdict_share_fires(tmp_path: Path):
    rule = AlertRule(
        name="lost",
        source="canary",
        stage="reranking",
        measure="lost@reranking",
        kind="threshold",
        above=0.3,
        min_samples=10,
    )
    cases = {
        f"s{i}": ("cut_by_rerank", "reranking") if i < 15 else ("pass", None) for i in range(30)
    }
    with MonitorStore(tmp_path / "m.db") as store:
        add_round(store, 0, T0, cases)
        [alert] = evaluate_alerts(store, [rule], now_ns=T0 + H)
    assert alert.current == 0.5 and len(alert.examples) == 5


def test_rule_values_of_the_wrong_type_are_refused_naming_the_rule(tmp_path: Path):
    path = tmp_path / "rules.toml"
    path.write_text(
        '[[rule]]\nname = "x"\nsource = "canary"\nstage = "reranking"\n'
        'measure = "lost@reranking"\nkind = "threshold"\nabove = "0.1"\n'
    )
    with pytest.raises(InputError, match=r"rule 1 \('x'\).*above must be a number"):
        load_rules(path)
    path.write_text("rule = [1, 2]\n")
    with pytest.raises(InputError, match="rule 1"):
        load_rules(path)
    path.write_text(
        '[[rule]]\nname = "x"\nsource = "canary"\nstage = "reranking"\n'
        'measure = "lost@reranking"\ncooldown = "soon"\n'
    )
    with pytest.raises(InputError, match=r"rule 1 \('x'\).*not a duration"):
        load_rules(path)


def test_an_edited_golden_set_starts_a_new_baseline(tmp_path: Path):
    healthy = {f"s{i}": ("pass", None) for i in range(30)}
    other = {f"s{i}": ("cut_by_rerank", "reranking") for i in range(30)}  # new questions, same ids
    with MonitorStore(tmp_path / "m.db") as store:
        for n in range(3):
            add_round(store, n, T0 + n * H, healthy)
        add_round(store, 3, T0 + 3 * H, other, evalset="golden-v2")
        assert evaluate_alerts(store, [RULE], now_ns=T0 + 4 * H) == []  # nothing to pair with
        add_round(store, 4, T0 + 4 * H, other, evalset="golden-v2")
        assert evaluate_alerts(store, [RULE], now_ns=T0 + 5 * H) == []  # v2 against v2: steady


def test_a_pool_that_shrinks_for_two_windows_alerts_though_the_check_came_later(tmp_path: Path):
    """Issue 44, defect 7: PoolSize falling 4 -> 1 for two windows never alerted: no default
    rule watched PoolSize (nor TopScore), and only the last complete window was evaluated, so
    a check after the pool recovered saw nothing."""
    rule = next(r for r in DEFAULT_RULES if r.measure == "PoolSize")
    assert rule.stage == "retrieval" and any(r.measure == "TopScore" for r in DEFAULT_RULES)
    pool = ["The tower was finished in 1889.", "Paris is a city.", "The Louvre.", "x y z"]
    with MonitorStore(tmp_path / "m.db", window_seconds=3600) as store:
        for w in range(7):  # windows 4 and 5 retrieve one chunk; 6 is healthy again
            for i in range(25):
                store.traces.ingest(
                    rag_trace(
                        trace=f"{w * 1000 + i + 1:032x}",
                        pool=pool[:1] if w in (4, 5) else pool,
                        context=pool[:1],
                        start=ALIGN / 1e9 + w * 3600 + i * 10,
                    )
                )
        [alert] = evaluate_alerts(store, [rule], now_ns=W0 + 7 * H + 1)  # after window 6
        assert alert.window_start_ns == W0 + 4 * H  # the first bad window, once
        assert (alert.baseline, alert.current) == (4.0, 1.0)
        assert evaluate_alerts(store, [rule], now_ns=W0 + 7 * H + 2) == []  # not twice
