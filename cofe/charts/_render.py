"""The chart templates' environment (``cofe/charts/templates``, autoescaped) and the
shared stylesheet (``cofe/charts/style.css``)."""

from __future__ import annotations

import functools
from importlib.resources import files
from typing import Any

from markupsafe import Markup


def _fixed(value: float, digits: int = 1) -> str:
    return f"{value:.{digits}f}"


def _general(value: float) -> str:
    return f"{value:g}"


@functools.cache
def _environment() -> Any:
    """Made once, on the first chart drawn: jinja2 is imported then, not with cofe.charts."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader("cofe.charts", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(fixed=_fixed, general=_general)
    return env


def render(name: str, **context: Any) -> Markup:
    """The chart template ``name`` written with ``context`` (escaped markup)."""
    return Markup(_environment().get_template(name).render(**context))


STYLESHEET = (files("cofe.charts") / "style.css").read_text(encoding="utf-8")
