"""cofe's charts and stylesheet: one home for what the HTML report and the monitoring
dashboard draw, so that the two look alike and cannot drift apart.

- :func:`grouped_bars`, :func:`histogram`, :func:`intervals` (the report: a scoring's
  waterfall and verdicts, per-sample distributions, paired differences) and
  :func:`line_chart` with :class:`Line`, :class:`Point`, :class:`Marker` (the dashboard:
  values over time, each marker a link) return inline SVG as ``markupsafe.Markup``;
- :data:`PALETTE` (series), :data:`LINE_PALETTE` (its longer form for lines),
  :data:`VERDICT_COLOURS` and :func:`verdict_colour` (passes green, losses warm);
- :data:`STYLESHEET`: the one stylesheet (``style.css``); the report inlines it in its
  ``<style>`` (the report stays one self-contained file), the dashboard serves it.

Every chart is a Jinja2 template (``templates/``, autoescape on): Python computes the
geometry -- where each bar, dot and tick goes, and its label -- and a template writes
the markup, every label and tooltip escaped when written. One way of drawing for both
users: the dashboard builds no markup by string formatting (a test reads its syntax
trees, and this package's), and the report's charts get the same escaping. Jinja2 (with
MarkupSafe) is therefore a core dependency: small, pure Python, well kept (Pallets), and
imported only when the first chart is drawn -- ``import cofe`` and ``cofe --help`` do not
load it (``tests/cli/test_fast_start.py``).
"""

from cofe.charts._bars import grouped_bars, histogram, intervals
from cofe.charts._lines import Line, Marker, Point, line_chart, nice_step, time_ticks
from cofe.charts._palette import LINE_PALETTE, PALETTE, VERDICT_COLOURS, verdict_colour
from cofe.charts._render import STYLESHEET, templates

__all__ = [
    "LINE_PALETTE",
    "PALETTE",
    "STYLESHEET",
    "VERDICT_COLOURS",
    "Line",
    "Marker",
    "Point",
    "grouped_bars",
    "histogram",
    "intervals",
    "line_chart",
    "nice_step",
    "templates",
    "time_ticks",
    "verdict_colour",
]
