"""The dashboard's drill-down pages: one traffic window (``/window``), one trace
(``/trace``), one canary round (``/round``)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from cofe.adapters import TraceRecord
from cofe.chain import PASSES
from cofe.monitor.analysis._signals import find_signal
from cofe.monitor.store import (
    CANARY,
    TRAFFIC,
    CanaryCase,
)
from cofe.monitor.web._dashboard_kit import (
    MAX_TRACES,
    PAGE_SIZE,
    STAGE_TITLES,
    STEP_ORDER,
    VERDICTS,
    BadRequest,
    NotFound,
    _description,
    _hm,
    _href,
    _kind,
    _page,
    _Params,
    _signals,
    _slug,
    evidence_keywords,
    fmt_value,
    shortened,
    utc,
)
from cofe.monitor.web._overview import OverviewPages
from cofe.monitor.web._templates import Link, marked
from cofe.report import CHUNK_CHARS


class Pages(OverviewPages):
    """Every page (``templates/*.html``), from one open store."""

    # --- one traffic window ------------------------------------------------------------------

    FLAGS = (
        "error",
        "problems",
        "empty-pool",
        "empty-context",
        "top1-dropped",
        "refusal",
        "empty-answer",
        "not-a-query",
    )

    @staticmethod
    def flags(t: TraceRecord) -> list[str]:
        """What is wrong with a trace, each by the rule of its signal (``_signals``: defined
        once, so a flagged trace is one the signal counts)."""
        if not t.is_query:
            return ["not-a-query"]
        out = []
        if t.error_stage is not None:
            out.append("error")
        if t.problems:
            out.append("problems")
        for flag, stage, name in (
            ("empty-pool", "retrieval", "EmptyPoolRate"),
            ("empty-context", "reranking", "EmptyContextRate"),
            ("top1-dropped", "reranking", "Top1Dropped"),
            ("empty-answer", "generation", "EmptyAnswerRate"),
            ("refusal", "generation", "RefusalRate"),
        ):
            if find_signal(stage, name).of(t) == 1.0:
                out.append(flag)
        return out

    def window(self, params: _Params) -> str:
        store = self.store
        origin = params.text("origin", TRAFFIC)
        if origin not in (TRAFFIC, CANARY):
            raise BadRequest("origin must be traffic or canary")
        start = params.time("start")
        if start is None:
            raise BadRequest("the parameter start (a window's start, in ns) is required")
        end = params.time("end") or start + self.window_ns
        if end <= start:
            raise BadRequest("end must be after start")
        only = params.text("only")
        if only is not None and only not in self.FLAGS:
            raise BadRequest(f"only must be one of {', '.join(self.FLAGS)}")
        page = params.integer("page", 1, minimum=1) or 1
        signal_name = params.text("signal")
        signal = self._signal(signal_name)

        records = store.traces.started_in(start, end, origin=origin, limit=MAX_TRACES + 1)
        cut = len(records) > MAX_TRACES  # a busy service's window: its first MAX_TRACES
        records = records[:MAX_TRACES]
        flagged = [(t, self.flags(t)) for t in records]
        counts: dict[str, int] = {}
        for _, fl in flagged:
            for f in fl:
                counts[f] = counts.get(f, 0) + 1
        chosen = [(t, fl) for t, fl in flagged if only is None or only in fl]
        value_of: dict[str, float | None] = {}
        sort_note = ""
        if signal is not None:
            for t, _ in chosen:
                try:
                    value_of[t.trace_id] = signal.of(t) if t.is_query else None
                except Exception:  # a signal that cannot read this trace: no value
                    value_of[t.trace_id] = None
            worst_high = getattr(signal, "higher_is_better", None) is not True
            chosen.sort(
                key=lambda tf: (
                    value_of[tf[0].trace_id] is None,
                    -(value_of[tf[0].trace_id] or 0)
                    if worst_high
                    else (value_of[tf[0].trace_id] or 0),
                )
            )
            sort_note = (
                f"sorted by each trace's {signal_name} value, "
                f"{'highest' if worst_high else 'lowest'} first"
            )
        pages = max(1, math.ceil(len(chosen) / PAGE_SIZE))
        page = min(page, pages)
        shown = chosen[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        texts = {
            t.trace_id: t
            for t in store.traces.by_id([t.trace_id for t, _ in shown], with_text=True)
        }

        label = f"{utc(start)}–{_hm(end) if end - start < 86400e9 else utc(end)}"
        what = "Traffic" if origin == TRAFFIC else "Canary traffic"
        base = {
            "origin": origin,
            "start": start,
            "end": end if end != start + self.window_ns else None,
            "signal": signal_name,
        }
        filters = [
            Link(
                _href("window", **base),
                f"{'the first ' if cut else 'all '}{len(records)}",
                "" if only else "on",
            )
        ]
        for f in self.FLAGS:
            if counts.get(f):
                filters.append(
                    Link(
                        _href("window", **base, only=f),
                        f"{f} {counts[f]}",
                        "on" if only == f else "",
                    )
                )
        cards = []
        for t, fl in shown:
            full = texts.get(t.trace_id, t)
            value = None
            if signal is not None and value_of.get(t.trace_id) is not None:
                kind = _kind(signal.stage, signal.name)
                value = f"{signal.name} {fmt_value(kind if kind != 'share' else 'number', value_of[t.trace_id])}"
            cards.append(self._trace_card(full, fl, value))
        return _page(
            "window.html",
            f"{what} window {label} UTC",
            self._subtitle(),
            nav=self._window_nav(origin, start, end, signal_name),
            signals=self._window_signals(origin, start, end, signal_name),
            filters=filters,
            sort_note=sort_note,
            cards=cards,
            pages=self._pager("window", {**base, "only": only}, page, pages, len(chosen)),
        )

    def _signal(self, name: str | None) -> Any:
        if not name:
            return None
        stage, _, signal = name.partition("/")
        found = _signals().get((stage, signal))
        return found if found is not None and callable(getattr(found, "of", None)) else None

    def _window_nav(self, origin: str, start: int, end: int, signal: str | None) -> dict[str, Any]:
        span = end - start
        prev = Link(
            _href(
                "window",
                origin=origin,
                start=start - span,
                end=start if span != self.window_ns else None,
                signal=signal,
            ),
            "← previous",
        )
        nxt = Link(
            _href(
                "window",
                origin=origin,
                start=end,
                end=end + span if span != self.window_ns else None,
                signal=signal,
            ),
            "next →",
        )
        around = Link(
            _href("", range="24h", until=self.store.window_of(end) + 12 * 3600 * 10**9),
            "overview around this time",
        )
        return {"overview": Link(_href(""), "overview"), "around": around, "moves": [prev, nxt]}

    def _window_signals(
        self, origin: str, start: int, end: int, highlight: str | None
    ) -> dict[str, Any]:
        rows = self.store.windows.series(origin=origin, since_ns=start, until_ns=end)
        stage_rank = {name: i for i, name in enumerate(STAGE_TITLES)}
        rows.sort(key=lambda r: (r["start_ns"], stage_rank.get(r["stage"], 99), r["stage"]))
        shown = [
            {
                "stage": r["stage"],
                "signal": r["signal"],
                "when": utc(r["start_ns"]),
                "value": fmt_value(_kind(r["stage"], r["signal"]), r["value"]),
                "n": r["n"],
                "note": r["note"] or "",
                "description": _description(r["stage"], r["signal"]),
                "highlight": f"{r['stage']}/{r['signal']}" == highlight,
            }
            for r in rows
        ]
        return {
            "rows": shown,
            "several": len({r["start_ns"] for r in rows}) > 1,
            "picked": [r for r in shown if r["highlight"]],
        }

    def _pager(
        self, path: str, params: dict[str, Any], page: int, pages: int, total: int
    ) -> dict[str, Any] | None:
        if pages <= 1:
            return None
        items: list[dict[str, Any]] = []
        for p in range(1, pages + 1):
            if p == page:
                items.append({"current": p})
            elif p in (1, pages) or abs(p - page) <= 3:
                items.append({"current": None, "link": Link(_href(path, **params, page=p), str(p))})
            elif items[-1].get("link") is not None or items[-1].get("current"):
                items.append({"current": None, "link": None})  # an ellipsis
        return {"total": total, "size": PAGE_SIZE, "entries": items}

    # --- one trace ----------------------------------------------------------------------------

    def _docs(
        self,
        docs: Sequence[Any],
        other: Sequence[Any] | None,
        other_name: str,
        keywords: Sequence[str] = (),
    ) -> list[dict[str, Any]]:
        rank_in_other = {d.chunk_id: i for i, d in enumerate(other or (), start=1)}
        out = []
        for i, d in enumerate(docs, start=1):
            bits = [f"#{i}"]
            if d.ref:
                bits.append(str(d.ref))
            if d.score is not None:
                bits.append(f"score {d.score:.4g}")
            if other is not None:
                where = rank_in_other.get(d.chunk_id)
                bits.append(f"{other_name} #{where}" if where else f"not in the {other_name}")
            pieces = None
            if d.text is not None:
                cut = d.text[:CHUNK_CHARS] + ("…" if len(d.text) > CHUNK_CHARS else "")
                pieces = marked(cut, keywords)  # the keywords in <mark>
            out.append({"bits": " · ".join(bits), "pieces": pieces})
        return out

    def _trace_body(
        self,
        t: TraceRecord,
        *,
        with_query: bool = True,
        keywords: Sequence[str] = (),
        whole: bool = False,
    ) -> dict[str, Any]:
        """What a trace shows: query, stages and latency, error, problems, its chunks and
        answer (``macros.html``'s ``trace_body`` writes it). Big values are cut -- on a
        window's or a round's page at ``TEXT_CHARS`` and ``LISTED_DOCS``, on the trace's own
        page (``whole``) at ten times that -- with a link to the trace's page: a 20 MB query
        or a 100,000-document pool made a 42 MB page that took 16 s."""
        query, answer, error, context, pool, cut = shortened(t, whole)
        latency = " · ".join(f"{s.value} {t.latency[s]:.3f} s" for s in t.latency)
        total = (t.ended_ns - t.started_ns) / 1e9
        stages = " → ".join(s.value for s in t.stages) or "none"
        line = (
            f"trace {t.trace_id} · {utc(t.started_ns, True)} · stages: {stages} · "
            f"{latency + ' · ' if latency else ''}total {total:.3f} s"
        )
        return {
            "with_query": with_query,
            "query": query,
            "line": line,
            "error": None
            if t.error_stage is None
            else {"stage": t.error_stage.value, "text": error or ""},
            "problems": list(t.problems),
            "context": None if context is None else self._docs(context, t.pool, "pool", keywords),
            "context_total": len(t.context or ()),
            "pool": None if pool is None else self._docs(pool, t.context, "context", keywords),
            "pool_total": len(t.pool or ()),
            "answer": None if answer is None else marked(answer, keywords),
            "cut": cut,
            "whole_href": None if whole else _href("trace", id=t.trace_id),
        }

    def _trace_card(
        self, t: TraceRecord, flags: Sequence[str], value: str | None = None, whole: bool = False
    ) -> dict[str, Any]:
        return {
            "slug": _slug(t.trace_id),
            "title": (t.query or "(no query)")[:160],
            "value": value,
            "flags": list(flags),
            "body": self._trace_body(t, with_query=len(t.query or "") > 160, whole=whole),
        }

    def trace(self, params: _Params) -> str:
        trace_id = params.text("id")
        if trace_id is None:
            raise BadRequest("the parameter id (a trace id) is required")
        t = self.store.traces.get(trace_id)
        if t is None:
            raise NotFound("no such trace in the store (pruned, or never stored)")
        nav = [
            Link(_href(""), "overview"),
            Link(
                _href("window", origin=TRAFFIC, start=self.store.window_of(t.started_ns)),
                "its window",
            ),
        ]
        cases = [
            Link(_href("round", id=r) + f"#case-{_slug(s)}", f"round {r}, case {s}")
            for r, s in self.store.canaries.cases_of_trace(trace_id)
        ]
        return _page(
            "trace.html",
            f"Trace {trace_id}",
            self._subtitle(),
            nav=nav,
            cases=cases,
            card=self._trace_card(t, self.flags(t), whole=True),
        )

    # --- one canary round ---------------------------------------------------------------------

    def round(self, params: _Params) -> str:
        store = self.store
        round_id = params.text("id")
        if round_id is None:
            raise BadRequest("the parameter id (a canary round) is required")
        found = store.canaries.round(round_id)
        if found is None:
            raise NotFound("no such canary round in the store")
        started, finished, sha = found.started_ns, found.finished_ns, found.evalset_sha256
        pipeline, samples, answered, run_dir = (
            found.pipeline,
            found.samples,
            found.answered,
            found.run_dir,
        )
        verdict, stage = params.text("verdict"), params.text("stage")
        page = params.integer("page", 1, minimum=1) or 1
        before, after = store.canaries.neighbours(started)
        nav = [
            Link(_href(""), "overview"),
            Link(
                _href("", range="24h", until=store.window_of(started) + 12 * 3600 * 10**9),
                "overview around this time",
            ),
        ]
        if before:
            nav.append(
                Link(_href("round", id=before, verdict=verdict, stage=stage), "← previous round")
            )
        if after:
            nav.append(Link(_href("round", id=after, verdict=verdict, stage=stage), "next round →"))
        meta = [
            ("started", utc(started, True)),
            ("took", f"{(finished - started) / 1e9:.1f} s"),
            ("answered", f"{answered} of {samples} samples"),
            ("pipeline", str(pipeline)),
            ("eval set sha256", str(sha or "–")),
            ("run folder", str(run_dir or "–")),
        ]
        measures = store.canaries.measures(round_id, except_step=VERDICTS)
        rank = {s: i for i, s in enumerate(STEP_ORDER)}
        measures.sort(key=lambda m: (rank.get(m.step, 99), m.measure))
        measure_rows = [
            {
                "step": str(m.step),
                "stage": str(m.stage),
                "measure": str(m.measure),
                "value": fmt_value("unit", m.value),
                "n": m.n,
                "unscored": m.unscored,
            }
            for m in measures
        ]

        cases = store.canaries.cases(round_id)
        tally: dict[tuple[str, str], int] = {}
        for c in cases:
            key = (c.verdict, c.stage or "none")
            tally[key] = tally.get(key, 0) + 1
        filters = [
            Link(_href("round", id=round_id), f"all {len(cases)}", "" if verdict or stage else "on")
        ]
        for (v, s), n in sorted(tally.items(), key=lambda kv: (kv[0][0] in PASSES, -kv[1], kv[0])):
            on = "on" if (v, s) == (verdict, stage) else ""
            filters.append(
                Link(_href("round", id=round_id, verdict=v, stage=s), f"{v}@{s} {n}", on)
            )
        chosen = [
            c
            for c in cases
            if (verdict is None or c.verdict == verdict)
            and (stage is None or (c.stage or "none") == stage)
        ]
        chosen.sort(key=lambda c: (c.verdict in PASSES, c.verdict, c.sample_id))
        pages = max(1, math.ceil(len(chosen) / PAGE_SIZE))
        page = min(page, pages)
        shown = chosen[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        traces = {
            t.trace_id: t
            for t in store.traces.by_id([c.trace_id for c in shown if c.trace_id], with_text=True)
        }
        cards = [self._case_card(c, traces.get(c.trace_id) if c.trace_id else None) for c in shown]
        return _page(
            "round.html",
            f"Canary round {round_id}",
            self._subtitle(),
            nav=nav,
            meta=meta,
            measures=measure_rows,
            filters=filters,
            cases=cards,
            pages=self._pager(
                "round",
                {"id": round_id, "verdict": verdict, "stage": stage},
                page,
                pages,
                len(chosen),
            ),
        )

    def _case_card(self, case: CanaryCase, trace: TraceRecord | None) -> dict[str, Any]:
        try:
            ev = json.loads(case.evidence)
        except (TypeError, json.JSONDecodeError):
            ev = {"explanation": str(case.evidence)}
        ev = ev if isinstance(ev, dict) else {"explanation": str(ev)}
        points = ev.get("points")
        explanation = str(ev.get("explanation") or "")
        return {
            "slug": _slug(str(case.sample_id)),
            "sample_id": str(case.sample_id),
            "verdict": str(case.verdict),
            "good": case.verdict in PASSES,
            "at": f" at {case.stage}" if case.stage else "",
            "query": str(case.query),
            "explanation": explanation,
            "extra": f" · {points} information point(s)" if points is not None else "",
            "trace": None
            if trace is None
            else self._trace_body(trace, with_query=False, keywords=evidence_keywords(explanation)),
        }
