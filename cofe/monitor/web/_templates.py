"""The dashboard's markup: Jinja2 templates (``cofe/monitor/templates``), autoescaped.

Python computes what a page shows -- numbers, links, texts -- and a template writes the
markup; no HTML or SVG is built by string formatting in ``cofe.monitor``
(``tests/monitor/test_templates_only.py``). Every value is escaped when written, so a
query, a chunk or an alert's message that holds markup shows as text. The charts are
``cofe.charts``' (its templates, shared with the HTML report), as is the stylesheet."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

from markupsafe import Markup

from cofe.charts import templates


@dataclass(frozen=True)
class Link:
    """A link a template writes (``href`` relative to the dashboard's root)."""

    href: str
    text: str
    cls: str = ""


def _thousands(value: int) -> str:
    return f"{value:,}"


def environment() -> Any:
    """The pages' environment (``cofe.charts.templates``: one way of making it)."""
    return templates("cofe.monitor.web", (("thousands", _thousands),))


def render(name: str, **context: Any) -> Markup:
    """The template ``name`` written with ``context`` (already escaped markup)."""
    return Markup(environment().get_template(name).render(**context))


def static(name: str) -> bytes:
    """A file served as it is (the icon)."""
    return (files("cofe.monitor.web") / "templates" / "static" / name).read_bytes()


def marked(text: str, keywords: Sequence[str]) -> list[tuple[str, bool]]:
    """``text`` in pieces, each ``(piece, is a keyword)``: every occurrence cofe's strict
    matching finds of a keyword (whole tokens) is a piece of its own, for ``<mark>``."""
    from cofe.report import strict_marks

    spans = sorted(strict_marks(text, keywords))
    out: list[tuple[str, bool]] = []
    at = 0
    for start, end in spans:
        if start < at:  # overlapping a mark already made: only what reaches past it
            if end > at:
                out.append((text[at:end], True))
                at = end
            continue
        out.append((text[at:start], False))
        out.append((text[start:end], True))
        at = end
    out.append((text[at:], False))
    return [piece for piece in out if piece[0]]
