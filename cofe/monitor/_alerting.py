"""The alert loop: evaluate the rules, hand what fired to the sinks, remember how far it got.

``cofe monitor alerts`` is this loop with its options read: one round for cron (the exit
code says whether an alert fired), or a round every interval until stopped. A long-running
loop tests each window once, in order (the next round starts where the last one ended), and
outlives a round that failed (a database restarting for longer than the store's
reconnection waits): the failure is said in one line and the next round runs on time. One
sink failing (a full disk) never silences the others; the alert is stored either way.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TextIO

from cofe.monitor._alerts import Alert, Evaluation, evaluate
from cofe.monitor._rules import Rule
from cofe.monitor._sinks import Sink
from cofe.monitor.store import MonitorStore, shown_location


@dataclass
class AlertLoop:
    """Rounds of ``rules`` over ``store``, each alert sent to every sink.

    ``out`` takes the line saying what a quiet round evaluated (a cron log tells a quiet
    pipeline from a check that read nothing); ``err`` what went wrong. ``since_ns`` is where
    the next round's traffic windows begin (None: the evaluation's catch-up windows)."""

    store: MonitorStore
    rules: Sequence[Rule]
    sinks: Sequence[Sink]
    out: TextIO | None = None
    err: TextIO | None = None
    since_ns: int | None = None
    fired_last: list[Alert] = field(default_factory=list)  # the last finished round's

    def round(self) -> Evaluation:
        """One evaluation: the store's windows brought up to date, the rules tested, each
        alert delivered. An error of the evaluation is raised (nothing was delivered)."""
        self.store.refresh()
        evaluation = evaluate(self.store, self.rules, since_ns=self.since_ns)
        self.since_ns = evaluation.through_ns
        self.deliver(evaluation.fired)
        if not evaluation.fired:
            print(evaluation.line(), file=self.out or sys.stdout, flush=True)
        self.fired_last = evaluation.fired
        return evaluation

    def deliver(self, alerts: Sequence[Alert]) -> None:
        for alert in alerts:
            for sink in self.sinks:  # one failing sink must not silence the others
                try:
                    sink.send(alert)
                except OSError as error:
                    print(
                        f"cofe: error: {type(sink).__name__} could not take an alert "
                        f"({error}); it is stored in the alerts table",
                        file=self.err or sys.stderr,
                    )

    def run(self, every: float | None = None) -> list[Alert]:
        """One round (``every`` None: its error raised), or a round every ``every`` seconds
        until interrupted (Ctrl-C, or SIGTERM where a sink turned it into one). The sinks
        are closed at the end either way; returns what the last finished round fired."""
        try:
            while True:
                started = time.monotonic()
                try:
                    self.round()
                except Exception as error:
                    if every is None:
                        raise
                    print(
                        f"cofe monitor alerts: this round failed ({type(error).__name__}: "
                        f"{shown_location(str(error))[:300]}); next round in {every:g} s",
                        file=self.err or sys.stderr,
                        flush=True,
                    )
                if every is None:
                    break
                time.sleep(max(0.0, every - (time.monotonic() - started)))
        except KeyboardInterrupt:
            pass
        finally:
            self.close()
        return self.fired_last

    def close(self) -> None:
        for sink in self.sinks:
            sink.close()
