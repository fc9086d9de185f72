"""Scoring on a real (one-machine) Dask cluster gives exactly the local result."""

from __future__ import annotations

import pandas as pd
import pytest

from benchmarks._synthetic import make_run
from cofe import score_run

distributed = pytest.importorskip("distributed", reason='needs the "dask" extra')


@pytest.mark.slow
def test_a_dask_cluster_scores_the_same_as_local_workers():
    run, evalset = make_run(4_500, seed=3)  # three slices of samples: three tasks
    with (
        distributed.LocalCluster(n_workers=2, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        remote = score_run(run, evalset, cluster=client)
        tasks = {key for key in client.run_on_scheduler(_task_keys) if "_score_slice" in key}
    local = score_run(run, evalset, workers=1)
    assert len(tasks) == 3  # each slice ran as a task on the cluster
    pd.testing.assert_frame_equal(remote.scores, local.scores)
    pd.testing.assert_frame_equal(remote.verdicts, local.verdicts)
    pd.testing.assert_frame_equal(remote.points, local.points)


def _task_keys(dask_scheduler=None):
    return [str(entry[0]) for entry in dask_scheduler.transition_log]
