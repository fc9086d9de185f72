"""A pipeline factory that takes a while to build (``cofe run --pipeline tests.cli._slow_build:build``)."""

from __future__ import annotations

import os
import time

from tests.runner._slow_pipeline import build as build_fast


def build():
    time.sleep(float(os.environ.get("COFE_TEST_BUILD_SECONDS", "1.0")))  # an index, a model...
    return build_fast()
