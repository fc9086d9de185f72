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


def templates(package: str, filters: tuple[tuple[str, Any], ...] = ()) -> Any:
    """A Jinja2 environment over ``package``'s ``templates`` folder, made once per package:
    autoescaped, undefined names an error, blocks trimmed (the charts' and the monitor's
    pages alike). jinja2 is imported here, on the first template written, not with cofe."""
    return _templates(package, filters)


@functools.cache
def _templates(package: str, filters: tuple[tuple[str, Any], ...]) -> Any:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader(package, "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(dict(filters))
    return env


def render(name: str, **context: Any) -> Markup:
    """The chart template ``name`` written with ``context`` (escaped markup)."""
    environment = templates("cofe.charts", (("fixed", _fixed), ("general", _general)))
    return Markup(environment.get_template(name).render(**context))


STYLESHEET = (files("cofe.charts") / "style.css").read_text(encoding="utf-8")
