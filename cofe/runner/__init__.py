"""``run_pipeline``: drive a pipeline over an eval set into a resumable run directory."""

from cofe.runner._load import as_pipeline, load_factory, load_pipeline
from cofe.runner._run import RunReport, package_versions, run_pipeline

__all__ = [
    "RunReport",
    "as_pipeline",
    "load_factory",
    "load_pipeline",
    "package_versions",
    "run_pipeline",
]
