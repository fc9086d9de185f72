"""No HTML or SVG built by string formatting in ``cofe/monitor`` nor in ``cofe/charts``
(the dashboard's charts): pages and charts are Jinja2 templates (``cofe/monitor/templates``,
``cofe/charts/templates``, autoescaped), Python computes what they show. A markup tag
inside an f-string, a ``.format`` or ``%`` template, or a literal concatenated with a
computed value fails this test; markup in a plain literal (a docstring naming
``<details>``) does not."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

MONITOR = Path(__file__).resolve().parents[2] / "cofe" / "monitor"
CHARTS = MONITOR.parent / "charts"
ELEMENTS = (
    "a abbr b body br caption circle code col details div em figcaption figure footer form g "
    "h1 h2 h3 h4 h5 h6 head header hr html i img input label li line link main mark meta nav "
    "ol option p path polygon polyline pre rect script section select small span strong style "
    "summary svg table tbody td text textarea tfoot th thead title tr tspan u ul"
).split()
TAG = re.compile(r"<!doctype|</?(?:" + "|".join(ELEMENTS) + r")(?:[\s/>]|$)", re.IGNORECASE)


def _literal_parts(node: ast.AST) -> list[str]:
    """The literal text of a string expression (an f-string's constant pieces too)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [
            v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
        ]
    return []


def _has_tag(node: ast.AST) -> bool:
    return any(TAG.search(text) for text in _literal_parts(node))


def _formats_markup(node: ast.AST) -> bool:
    if isinstance(node, ast.JoinedStr):
        return _has_tag(node)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in ("format", "format_map", "join") and _has_tag(node.func.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _has_tag(node.left)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _has_tag(node.left) or _has_tag(node.right)
    return False


def markup_built_by_formatting(source: str) -> list[int]:
    """Lines where markup is built by string formatting: an f-string holding a tag, a
    ``"<tag>...".format(...)`` or ``"<tag>..." % ...``, a tag literal ``+`` anything, and
    ``"<tag>".join(...)``."""
    return sorted({node.lineno for node in ast.walk(ast.parse(source)) if _formats_markup(node)})  # type: ignore[attr-defined]


@pytest.mark.parametrize("folder", [MONITOR, CHARTS], ids=["monitor", "charts"])
def test_no_markup_is_built_by_string_formatting_in_the_monitor_or_its_charts(folder):
    found = []
    for path in sorted(folder.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for number in markup_built_by_formatting(source):
            found.append(f"{path.relative_to(folder)}:{number}: {lines[number - 1].strip()}")
    assert found == [], "markup built by string formatting (use a template):\n" + "\n".join(found)


@pytest.mark.parametrize(
    "code",
    [
        'f"<td>{x}</td>"',
        '"<li>{}</li>".format(x)',
        '"<b>%s</b>" % x',
        '"<tr>" + x',
        'x + "</svg>"',
        '"<br>".join(xs)',
        "f'<circle cx=\"{x:.1f}\"/>'",
        'f"<!DOCTYPE html>{x}"',
    ],
)
def test_the_check_finds_each_way_of_formatting_markup(code):
    assert markup_built_by_formatting(f"y = {code}\n") == [1]


@pytest.mark.parametrize(
    "code",
    [
        '"""a docstring naming <details> and <a href>"""',
        'f"open /?token=<the token> at {url}"',
        '"plain <b>bold</b> literal"',
        'f"{n} < {m}"',
        'f"a <= b {x}"',
    ],
)
def test_plain_literals_and_comparisons_are_not_flagged(code):
    assert markup_built_by_formatting(f"y = {code}\n") == []


def test_the_templates_ship_with_the_package_and_autoescape():
    from cofe.monitor.web._templates import environment, render

    names = set(os.listdir(MONITOR / "web" / "templates"))
    assert {
        "base.html",
        "macros.html",
        "overview.html",
        "window.html",
        "round.html",
        "trace.html",
    } <= names
    assert {"line_chart.svg", "bars.svg", "histogram.svg", "intervals.svg"} <= set(
        os.listdir(CHARTS / "templates")
    )
    assert environment().autoescape is True
    page = render(
        "trace.html",
        title="<script>x</script>",
        subtitle="s",
        nav=[],
        cases=[],
        card={
            "slug": "t",
            "title": "<img src=x>",
            "value": None,
            "flags": [],
            "body": {
                "with_query": False,
                "query": None,
                "line": "l",
                "error": None,
                "problems": [],
                "context": None,
                "pool": None,
                "answer": [("<b>", True)],
            },
        },
    )
    assert "<script>x" not in page and "&lt;script&gt;x" in page
    assert "<img" not in page and "<mark>&lt;b&gt;</mark>" in page
