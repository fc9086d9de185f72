"""Run a grid of configurations on one eval set, compare the cells, name the best per measure."""

from cofe.sweep._sweep import (
    Cell,
    SweepResult,
    grid_cells,
    rank_cells,
    rank_results,
    run_sweep,
)

__all__ = ["Cell", "SweepResult", "grid_cells", "rank_cells", "rank_results", "run_sweep"]
