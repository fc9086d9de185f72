"""docs/monitoring.md names every label-free signal and the extra the application installs."""

from __future__ import annotations

import re
import tomllib

from cofe.monitor.analysis._signals import SIGNALS
from tests.conftest import REPO

DOC = REPO / "docs" / "monitoring.md"


def test_the_signal_table_lists_every_signal_of_every_stage() -> None:
    rows = re.findall(r"^\| (\w+) \| (.+) \|$", DOC.read_text(encoding="utf-8"), re.M)
    table = {stage: text for stage, text in rows if stage != "stage"}
    for signal in SIGNALS:
        assert signal.stage in table, f"docs/monitoring.md has no row for {signal.stage}"
        names = re.sub(r"P50/P95", "P50, LatencyP95", table[signal.stage])
        assert signal.name in names, f"{signal.stage}/{signal.name} is missing from the table"


def test_the_application_side_of_monitoring_is_an_extra_the_docs_name() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    app = " ".join(extras["monitor-app"])
    for package in (
        "openinference-instrumentation-llama-index",
        "opentelemetry-sdk",
        "opentelemetry-exporter-otlp-proto-http",
    ):
        assert package in app
    assert 'pip install "cofe[monitor-app]"' in DOC.read_text(encoding="utf-8")
