"""The alert loop: evaluate the rules, hand what fired to the sinks, remember how far it got.

``cofe monitor alerts`` is this loop with its options read: one round for cron (the exit
code says whether an alert fired), or a round every interval until stopped. A long-running
loop tests each window once, in order (the next round starts where the last one ended), and
outlives a round that failed (a database restarting for longer than the store's
reconnection waits): the failure is said in one line and the next round runs on time. One
sink failing (a full disk) never silences the others; the alert is stored either way.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TextIO

from cofe.monitor.analysis._alerts import Alert, Evaluation, evaluate
from cofe.monitor.analysis._rules import AlertRule
from cofe.monitor.analysis._sinks import Sink
from cofe.monitor.analysis._window_rows import refresh_windows
from cofe.monitor.store import MonitorStore, shown_location

# what goes wrong as the loop runs (the CLI shows it on stderr: "cofe monitor alerts: ...")
log = logging.getLogger("cofe.monitor.alerts")


@dataclass
class AlertLoop:
    """Rounds of ``rules`` over ``store``, each alert sent to every sink.

    ``out`` takes the line saying what a quiet round evaluated (a cron log tells a quiet
    pipeline from a check that read nothing); what goes wrong is logged to
    ``cofe.monitor.alerts``. ``since_ns`` is where the next round's traffic windows begin
    (None: the evaluation's catch-up windows)."""

    store: MonitorStore
    rules: Sequence[AlertRule]
    sinks: Sequence[Sink]
    out: TextIO | None = None
    since_ns: int | None = None
    fired_last: list[Alert] = field(default_factory=list)  # the last finished round's

    def round(self) -> Evaluation:
        """One evaluation: the store's windows brought up to date, the rules tested, each
        alert delivered. An error of the evaluation is raised (nothing was delivered)."""
        refresh_windows(self.store)
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
                    log.error(
                        "%s could not take an alert (%s); it is stored in the alerts table",
                        type(sink).__name__,
                        error,
                        extra={
                            "event": "sink_failed",
                            "sink": type(sink).__name__,
                            "alert_id": alert.alert_id,
                            "error": str(error),
                        },
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
                    said = f"{type(error).__name__}: {shown_location(str(error))[:300]}"
                    log.error(
                        "this round failed (%s); next round in %g s",
                        said,
                        every,
                        extra={"event": "round_failed", "error": said},
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
