"""The dashboard's drill-down pages: one traffic window (``/window``), one trace
(``/trace``), one canary round (``/round``)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from html import escape
from typing import Any

from cofe.monitor._assemble import TraceRecord
from cofe.monitor._dashboard_kit import (
    MAX_TRACES,
    PAGE_SIZE,
    STAGE_TITLES,
    STEP_ORDER,
    VERDICTS,
    BadRequest,
    NotFound,
    _a,
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
    utc,
)
from cofe.monitor._overview import OverviewPages
from cofe.monitor._signals import find_signal
from cofe.monitor.store import (
    CANARY,
    TRAFFIC,
    CanaryCase,
)
from cofe.report._html import _GOOD, CHUNK_CHARS, _highlight


class Pages(OverviewPages):
    """The HTML of every page, from one open store."""

    # --- one traffic window ------------------------------------------------------------------

    FLAGS = ("error", "problems", "empty-pool", "empty-context", "top1-dropped", "refusal",
             "empty-answer", "not-a-query")  # fmt: skip

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
        for flag, stage, name in (("empty-pool", "retrieval", "EmptyPoolRate"),
                                  ("empty-context", "reranking", "EmptyContextRate"),
                                  ("top1-dropped", "reranking", "Top1Dropped"),
                                  ("empty-answer", "generation", "EmptyAnswerRate"),
                                  ("refusal", "generation", "RefusalRate")):  # fmt: skip
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

        records = store.traces(start, end, origin=origin, limit=MAX_TRACES + 1)
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
            chosen.sort(key=lambda tf: (value_of[tf[0].trace_id] is None,
                                        -(value_of[tf[0].trace_id] or 0) if worst_high
                                        else (value_of[tf[0].trace_id] or 0)))  # fmt: skip
            sort_note = (
                f"sorted by each trace's {signal_name} value, "
                f"{'highest' if worst_high else 'lowest'} first"
            )
        pages = max(1, math.ceil(len(chosen) / PAGE_SIZE))
        page = min(page, pages)
        shown = chosen[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        texts = {t.trace_id: t for t in store.traces_by_id([t.trace_id for t, _ in shown],
                                                           with_text=True)}  # fmt: skip

        label = f"{utc(start)}–{_hm(end) if end - start < 86400e9 else utc(end)}"
        what = "Traffic" if origin == TRAFFIC else "Canary traffic"
        parts = [self._window_nav(origin, start, end, signal_name)]
        parts.append(self._window_signals(origin, start, end, signal_name))
        base = {"origin": origin, "start": start, "end": end if end != start + self.window_ns
                else None, "signal": signal_name}  # fmt: skip
        filters = [
            _a(
                _href("window", **base),
                f"{'the first ' if cut else 'all '}{len(records)}",
                "" if only else "on",
            )
        ]
        for f in self.FLAGS:
            if counts.get(f):
                filters.append(_a(_href("window", **base, only=f), f"{f} {counts[f]}",
                                  "on" if only == f else ""))  # fmt: skip
        parts.append(f"<section id='traces'><h2>Traces</h2><div class='filters'>"
                     f"{' '.join(filters)}</div>")  # fmt: skip
        if sort_note:
            parts.append(f"<p class='muted'>{escape(sort_note)}</p>")
        if not chosen:
            parts.append("<p class='empty'>No trace here.</p>")
        for t, fl in shown:
            full = texts.get(t.trace_id, t)
            value = None
            if signal is not None and value_of.get(t.trace_id) is not None:
                kind = _kind(signal.stage, signal.name)
                value = f"{signal.name} {fmt_value(kind if kind != 'share' else 'number', value_of[t.trace_id])}"
            parts.append(self._trace_card(full, fl, value))
        parts.append(self._pager("window", {**base, "only": only}, page, pages, len(chosen)))
        parts.append("</section>")
        return _page(f"{what} window {label} UTC", self._subtitle(), "".join(parts))

    def _signal(self, name: str | None) -> Any:
        if not name:
            return None
        stage, _, signal = name.partition("/")
        found = _signals().get((stage, signal))
        return found if found is not None and callable(getattr(found, "of", None)) else None

    def _window_nav(self, origin: str, start: int, end: int, signal: str | None) -> str:
        span = end - start
        prev = _a(_href("window", origin=origin, start=start - span,
                        end=start if span != self.window_ns else None, signal=signal), "← previous")  # fmt: skip
        nxt = _a(_href("window", origin=origin, start=end,
                       end=end + span if span != self.window_ns else None, signal=signal), "next →")  # fmt: skip
        around = _a(_href("", range="24h", until=self.store.window_of(end) + 12 * 3600 * 10**9),
                    "overview around this time")  # fmt: skip
        return f"<nav>{_a(_href(''), 'overview')} · {around} · {prev} {nxt}</nav>"

    def _window_signals(self, origin: str, start: int, end: int, highlight: str | None) -> str:
        rows = self.store.series(origin=origin, since_ns=start, until_ns=end)
        stage_rank = {name: i for i, name in enumerate(STAGE_TITLES)}
        rows.sort(key=lambda r: (r["start_ns"], stage_rank.get(r["stage"], 99), r["stage"]))
        if not rows:
            return ("<section><h2>Signals</h2><p class='empty'>No series for this window (not "
                    "computed yet, or no trace).</p></section>")  # fmt: skip
        several = len({r["start_ns"] for r in rows}) > 1
        body = []
        for r in rows:
            key = f"{r['stage']}/{r['signal']}"
            cls = " class='hl'" if key == highlight else ""
            kind = _kind(r["stage"], r["signal"])
            when = f"<td class='nowrap'>{escape(utc(r['start_ns']))}</td>" if several else ""
            body.append(f"<tr{cls}>{when}<td>{escape(r['stage'])}</td><td>{escape(r['signal'])}</td>"
                        f"<td class='num'>{escape(fmt_value(kind, r['value']))}</td>"
                        f"<td class='num'>{r['n']}</td><td>{escape(r['note'] or '')}</td></tr>")  # fmt: skip
        head = ("<th>window</th>" if several else "") + (
            "<th>stage</th><th>signal</th><th>value</th><th>n</th><th>note</th>"
        )
        picked = [r for r in rows if f"{r['stage']}/{r['signal']}" == highlight]
        lead = "".join(
            f"<p><b>{escape(r['stage'])} · {escape(r['signal'])}</b>"
            f"{' (' + escape(utc(r['start_ns'])) + ')' if several else ''}: "
            f"{escape(fmt_value(_kind(r['stage'], r['signal']), r['value']))} over {r['n']} "
            f"trace(s){' -- ' + escape(r['note']) if r['note'] else ''}"
            f"<br><span class='muted'>{escape(_description(r['stage'], r['signal']))}</span></p>"
            for r in picked)  # fmt: skip
        return (
            f"<section id='signals'><h2>Signals</h2>{lead}<details>"
            f"<summary>every signal of the window ({len(rows)} values)</summary>"
            f"<table class='rows'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}"
            "</tbody></table></details></section>"
        )

    def _pager(self, path: str, params: dict, page: int, pages: int, total: int) -> str:
        if pages <= 1:
            return ""
        links = []
        for p in range(1, pages + 1):
            if p == page:
                links.append(f"<b>{p}</b>")
            elif p in (1, pages) or abs(p - page) <= 3:
                links.append(_a(_href(path, **params, page=p), str(p)))
            elif links[-1] != "…":
                links.append("…")
        return f"<nav class='pager'>{total} in all, {PAGE_SIZE} a page: {' '.join(links)}</nav>"

    # --- one trace ----------------------------------------------------------------------------

    def _docs(self, docs: Sequence[Any], other: Sequence[Any] | None, other_name: str,
              keywords: Sequence[str] = ()) -> str:  # fmt: skip
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
            if d.text is None:
                text = "<span class='empty'>(the trace gave no content for this chunk)</span>"
            else:
                cut = d.text[:CHUNK_CHARS] + ("…" if len(d.text) > CHUNK_CHARS else "")
                text = _highlight(cut, keywords)  # escaped, the keywords in <mark>
            out.append(f"<div class='chunk'><span class='muted'>{escape(' · '.join(bits))}"
                       f"</span>\n{text}</div>")  # fmt: skip
        return "".join(out)

    def _trace_body(self, t: TraceRecord, *, with_query: bool = True,
                    keywords: Sequence[str] = ()) -> str:  # fmt: skip
        parts = []
        if with_query:
            query = (escape(t.query) if t.query is not None
                     else "<span class='empty'>(no query recorded)</span>")  # fmt: skip
            parts.append(f"<div><b>Query:</b> {query}</div>")
        latency = " · ".join(f"{s.value} {t.latency[s]:.3f} s" for s in t.latency)
        total = (t.ended_ns - t.started_ns) / 1e9
        stages = " → ".join(s.value for s in t.stages) or "none"
        parts.append(f"<div class='muted'>trace {escape(t.trace_id)} · {escape(utc(t.started_ns, True))} "
                     f"· stages: {escape(stages)} · {escape(latency + ' · ' if latency else '')}"
                     f"total {total:.3f} s</div>")  # fmt: skip
        if t.error_stage is not None:
            parts.append(f"<div class='err'><b>Error at {escape(t.error_stage.value)}:</b> "
                         f"{escape(t.error or '')}</div>")  # fmt: skip
        if t.problems:
            items = "".join(f"<li>{escape(p)}</li>" for p in t.problems)
            parts.append(f"<div><b>Problems:</b><ul>{items}</ul></div>")
        if t.context is not None:
            parts.append(f"<details open><summary>Context: {len(t.context)} chunk(s), what the "
                         f"generator saw</summary>{self._docs(t.context, t.pool, 'pool', keywords)}"
                         "</details>")  # fmt: skip
        if t.pool is not None:
            parts.append(f"<details><summary>Pool: {len(t.pool)} chunk(s) retrieved</summary>"
                         f"{self._docs(t.pool, t.context, 'context', keywords)}</details>")  # fmt: skip
        if t.answer is not None:
            answer = _highlight(t.answer, keywords) or "<span class='empty'>(empty)</span>"
            parts.append(f"<div><b>Answer:</b> {answer}</div>")
        else:
            parts.append("<div class='empty'>(no answer)</div>")
        return "".join(parts)

    def _trace_card(self, t: TraceRecord, flags: Sequence[str], value: str | None = None) -> str:
        badges = "".join(f"<span class='badge bad'>{escape(f)}</span>" for f in flags)
        if value is not None:
            badges = f"<span class='badge value'>{escape(value)}</span>" + badges
        title = escape((t.query or "(no query)")[:160])
        return (
            f"<div class='case trace' id='trace-{escape(_slug(t.trace_id))}'><h3>{title} "
            f"{badges}</h3>{self._trace_body(t, with_query=len(t.query or '') > 160)}</div>"
        )

    def trace(self, params: _Params) -> str:
        trace_id = params.text("id")
        if trace_id is None:
            raise BadRequest("the parameter id (a trace id) is required")
        t = self.store.trace(trace_id)
        if t is None:
            raise NotFound("no such trace in the store (pruned, or never stored)")
        parts = [f"<nav>{_a(_href(''), 'overview')} · "
                 f"{_a(_href('window', origin=TRAFFIC, start=self.store.window_of(t.started_ns)), 'its window')}</nav>"]  # fmt: skip
        cases = self.store.cases_of_trace(trace_id)
        if cases:
            links = ", ".join(_a(_href("round", id=r) + f"#case-{_slug(s)}", f"round {r}, case {s}")
                              for r, s in cases)  # fmt: skip
            parts.append(f"<p>A canary case: {links}</p>")
        parts.append(self._trace_card(t, self.flags(t)))
        return _page(f"Trace {trace_id}", self._subtitle(), "".join(parts))

    # --- one canary round ---------------------------------------------------------------------

    def round(self, params: _Params) -> str:
        store = self.store
        round_id = params.text("id")
        if round_id is None:
            raise BadRequest("the parameter id (a canary round) is required")
        found = store.canary_round(round_id)
        if found is None:
            raise NotFound("no such canary round in the store")
        started, finished, sha = found.started_ns, found.finished_ns, found.evalset_sha256
        pipeline, samples, answered, run_dir = (found.pipeline, found.samples, found.answered,
                                                found.run_dir)  # fmt: skip
        verdict, stage = params.text("verdict"), params.text("stage")
        page = params.integer("page", 1, minimum=1) or 1
        before, after = store.neighbour_rounds(started)
        nav = [_a(_href(""), "overview"),
               _a(_href("", range="24h", until=store.window_of(started) + 12 * 3600 * 10**9),
                  "overview around this time")]  # fmt: skip
        if before:
            nav.append(_a(_href("round", id=before, verdict=verdict, stage=stage),
                          "← previous round"))  # fmt: skip
        if after:
            nav.append(_a(_href("round", id=after, verdict=verdict, stage=stage),
                          "next round →"))  # fmt: skip
        meta = [["started", utc(started, True)], ["took", f"{(finished - started) / 1e9:.1f} s"],
                ["answered", f"{answered} of {samples} samples"], ["pipeline", str(pipeline)],
                ["eval set sha256", str(sha or "–")], ["run folder", str(run_dir or "–")]]  # fmt: skip
        meta_html = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in meta)
        parts = [f"<nav>{' · '.join(nav)}</nav>",
                 f"<section id='round'><h2>Round</h2><table class='rows'>{meta_html}</table>"]  # fmt: skip
        measures = store.canary_measures(round_id, except_step=VERDICTS)
        rank = {s: i for i, s in enumerate(STEP_ORDER)}
        measures.sort(key=lambda m: (rank.get(m.step, 99), m.measure))
        body = "".join(
            f"<tr><td>{escape(str(m.step))}</td><td>{escape(str(m.stage))}</td>"
            f"<td>{escape(str(m.measure))}</td><td class='num'>{escape(fmt_value('unit', m.value))}"
            f"</td><td class='num'>{m.n}</td><td class='num'>{m.unscored}</td></tr>"
            for m in measures)  # fmt: skip
        table = ("<table class='rows'><thead><tr><th>step</th><th>stage</th><th>measure</th>"
                 "<th>mean</th><th>samples</th><th>unscored</th></tr></thead>"
                 f"<tbody>{body}</tbody></table>")  # fmt: skip
        parts.append(f"<details><summary>{len(measures)} measures</summary>{table}</details>"
                     "</section>")  # fmt: skip

        cases = store.canary_cases(round_id)
        tally: dict[tuple[str, str], int] = {}
        for c in cases:
            key = (c.verdict, c.stage or "none")
            tally[key] = tally.get(key, 0) + 1
        filters = [_a(_href("round", id=round_id), f"all {len(cases)}",
                      "" if verdict or stage else "on")]  # fmt: skip
        for (v, s), n in sorted(tally.items(), key=lambda kv: (kv[0][0] in _GOOD, -kv[1], kv[0])):
            on = "on" if (v, s) == (verdict, stage) else ""
            filters.append(_a(_href("round", id=round_id, verdict=v, stage=s), f"{v}@{s} {n}", on))
        chosen = [c for c in cases if (verdict is None or c.verdict == verdict)
                  and (stage is None or (c.stage or "none") == stage)]  # fmt: skip
        chosen.sort(key=lambda c: (c.verdict in _GOOD, c.verdict, c.sample_id))
        pages = max(1, math.ceil(len(chosen) / PAGE_SIZE))
        page = min(page, pages)
        shown = chosen[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        traces = {t.trace_id: t for t in store.traces_by_id([c.trace_id for c in shown if c.trace_id],
                                                            with_text=True)}  # fmt: skip
        parts.append(f"<section id='cases'><h2>Cases</h2><div class='filters'>"
                     f"{' '.join(filters)}</div>")  # fmt: skip
        if not chosen:
            parts.append("<p class='empty'>No case here.</p>")
        for c in shown:
            parts.append(self._case_card(c, traces.get(c.trace_id) if c.trace_id else None))
        parts.append(self._pager("round", {"id": round_id, "verdict": verdict, "stage": stage},
                                 page, pages, len(chosen)))  # fmt: skip
        parts.append("</section>")
        return _page(f"Canary round {round_id}", self._subtitle(), "".join(parts))

    def _case_card(self, case: CanaryCase, trace: TraceRecord | None) -> str:
        sample_id, query, verdict, stage = case.sample_id, case.query, case.verdict, case.stage
        evidence = case.evidence
        try:
            ev = json.loads(evidence)
        except (TypeError, json.JSONDecodeError):
            ev = {"explanation": str(evidence)}
        ev = ev if isinstance(ev, dict) else {"explanation": str(ev)}
        at = f" at {stage}" if stage else ""
        good = " good" if verdict in _GOOD else ""
        points = ev.get("points")
        extra = f" · {points} information point(s)" if points is not None else ""
        parts = [f"<div class='case' id='case-{escape(_slug(str(sample_id)))}'><h3>"
                 f"{escape(str(sample_id))} <span class='verdict{good}'>{escape(str(verdict))}"
                 f"{escape(at)}</span></h3>",
                 f"<div><b>Query:</b> {escape(str(query))}</div>",
                 f"<div><b>Evidence:</b> {escape(str(ev.get('explanation') or ''))}"
                 f"<span class='muted'>{escape(extra)}</span></div>"]  # fmt: skip
        if trace is not None:
            keywords = evidence_keywords(str(ev.get("explanation") or ""))
            parts.append(self._trace_body(trace, with_query=False, keywords=keywords))
        else:
            parts.append("<div class='empty'>(no trace of this case in the store: the sample was "
                         "not answered, or its trace was pruned)</div>")  # fmt: skip
        parts.append("</div>")
        return "".join(parts)
