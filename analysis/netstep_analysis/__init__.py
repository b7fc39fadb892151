"""Polars helpers for netstep run folders.

A run folder holds ``flows.parquet``, ``links.parquet`` and ``run.parquet`` and, when netstep
ran with ``--trace``, ``packet_hops.parquet`` and ``queue_samples.parquet`` (schema in
``docs/trace-schema.md``). :func:`load` returns one LazyFrame per table over a single run or a
whole sweep of run folders (``OUT/<key>=<value>/.../<table>.parquet``), with Hive partition
columns added for sweeps.

Modules, re-exported here:

- :mod:`~netstep_analysis.runs`: :func:`load`, sweep manifests and the table names;
- :mod:`~netstep_analysis.params`: MTU, host rate, base RTT and BDP of a run (with fallbacks
  for runs older than those ``run.parquet`` columns);
- :mod:`~netstep_analysis.buckets`: flow-size buckets and per-bucket percentiles;
- :mod:`~netstep_analysis.distance`: exact 1-D Wasserstein-1 and sample comparisons;
- :mod:`~netstep_analysis.plots`: PNG figures (slowdown CDFs, queues, utilisation, W1);
- :mod:`~netstep_analysis.report`: ``python -m netstep_analysis report RUN_OR_SWEEP``.
"""

from netstep_analysis.buckets import (
    BUCKET_DTYPE,
    BUCKETS,
    percentiles_by_bucket,
    quantile_label,
    size_bucket,
)
from netstep_analysis.distance import FEW_SAMPLES, compare, normalized_w1, wasserstein1
from netstep_analysis.params import (
    DEFAULT_BASE_RTT_NS,
    DEFAULT_MTU_BYTES,
    RunParams,
    bdp_bytes,
    run_params,
)
from netstep_analysis.plots import (
    link_utilization,
    plot_queue_occupancy,
    plot_slowdown_cdf,
    plot_utilization_heatmap,
    plot_w1_by_bucket,
    w1_by_bucket,
    with_bucket,
)
from netstep_analysis.report import NotARunError, find_runs, write_report
from netstep_analysis.runs import (
    MANIFEST_COLUMNS,
    SCHEMA_VERSION,
    TABLES,
    TRACE_TABLES,
    axes,
    load,
    schema_version,
    sweep_manifest,
)

__all__ = [
    "BUCKETS",
    "BUCKET_DTYPE",
    "DEFAULT_BASE_RTT_NS",
    "DEFAULT_MTU_BYTES",
    "FEW_SAMPLES",
    "NotARunError",
    "RunParams",
    "SCHEMA_VERSION",
    "MANIFEST_COLUMNS",
    "TABLES",
    "TRACE_TABLES",
    "axes",
    "bdp_bytes",
    "compare",
    "find_runs",
    "link_utilization",
    "load",
    "normalized_w1",
    "percentiles_by_bucket",
    "plot_queue_occupancy",
    "plot_slowdown_cdf",
    "plot_utilization_heatmap",
    "plot_w1_by_bucket",
    "quantile_label",
    "run_params",
    "schema_version",
    "size_bucket",
    "sweep_manifest",
    "w1_by_bucket",
    "wasserstein1",
    "with_bucket",
    "write_report",
]
