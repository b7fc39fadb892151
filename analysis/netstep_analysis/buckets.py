"""Flow-size buckets relative to the MTU and the bandwidth-delay product, and per-bucket tails."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from netstep_analysis.params import RunParams, run_params

BUCKETS = ("(0, MTU]", "(MTU, BDP]", "(BDP, 5BDP]", "(5BDP, inf)")
"""Bucket labels, smallest flows first."""

BUCKET_DTYPE = pl.Enum(BUCKETS)
"""Polars dtype of bucket columns (ordered as :data:`BUCKETS`)."""


def _label(size: float | None, mtu: float, bdp: float) -> str | None:
    if size is None or (isinstance(size, float) and np.isnan(size)):
        return None
    if size <= mtu:
        return BUCKETS[0]
    if size <= bdp:
        return BUCKETS[1]
    if size <= 5 * bdp:
        return BUCKETS[2]
    return BUCKETS[3]


def size_bucket(size_bytes: Any, mtu: float, bdp: float) -> Any:
    """Size bucket of flows: ``(0, MTU]``, ``(MTU, BDP]``, ``(BDP, 5BDP]`` or ``(5BDP, inf)``.

    Intervals are open on the left and closed on the right; a size of 0 falls in the first
    bucket and a null size gets a null bucket. ``size_bytes`` may be

    - a column name or Polars expression: returns an expression of dtype :data:`BUCKET_DTYPE`
      (``flows.with_columns(bucket=size_bucket("size_bytes", 1500, bdp))``);
    - a number: returns its label;
    - a sequence, NumPy array or Polars Series: returns a list of labels.
    """
    if isinstance(size_bytes, str):
        size_bytes = pl.col(size_bytes)
    if isinstance(size_bytes, pl.Expr):
        s = size_bytes
        return (
            pl.when(s.is_null())
            .then(pl.lit(None, dtype=pl.String))
            .when(s <= mtu)
            .then(pl.lit(BUCKETS[0]))
            .when(s <= bdp)
            .then(pl.lit(BUCKETS[1]))
            .when(s <= 5 * bdp)
            .then(pl.lit(BUCKETS[2]))
            .otherwise(pl.lit(BUCKETS[3]))
            .cast(BUCKET_DTYPE)
        )
    if isinstance(size_bytes, int | float | np.integer | np.floating):
        return _label(float(size_bytes), mtu, bdp)
    if isinstance(size_bytes, pl.Series):
        size_bytes = size_bytes.to_list()
    return [_label(None if v is None else float(v), mtu, bdp) for v in size_bytes]


def quantile_label(q: float) -> str:
    """Column suffix of quantile ``q``: 0.5 → ``p50``, 0.99 → ``p99``, 0.999 → ``p99.9``."""
    return f"p{q * 100:.6g}"


def percentiles_by_bucket(
    flows_lf: pl.LazyFrame | pl.DataFrame,
    run_row_or_params: Any,
    metric: str | Sequence[str] = "slowdown",
    qs: Sequence[float] = (0.5, 0.9, 0.99),
    by: Sequence[str] = (),
) -> pl.DataFrame:
    """Flow count and percentiles of ``metric`` and ``fct_ns`` per size bucket.

    ``run_row_or_params`` is anything :func:`netstep_analysis.run_params` accepts (a
    :class:`RunParams`, a row of ``run.parquet``, ``load()`` frames or a run folder); it sets
    the MTU and BDP of the buckets. ``metric`` names a column (or several); ``fct_ns`` is always
    included as well. Percentiles use linear interpolation (Polars ``"linear"``, NumPy's
    default) over completed flows. ``by`` adds grouping columns, e.g. the Hive partition
    columns of a sweep (``by=["load"]``).

    Returns one row per (``by`` values, bucket) for every bucket, empty ones included, sorted,
    with columns ``*by, bucket, n_flows`` (all flows), ``n`` (completed flows) and
    ``<metric>_p50, …`` for each metric and quantile (null when ``n`` is 0).
    """
    params: RunParams = run_params(run_row_or_params)
    metrics = [metric] if isinstance(metric, str) else list(metric)
    if "fct_ns" not in metrics:
        metrics.append("fct_ns")
    by = list(by)
    lf = flows_lf.lazy().with_columns(
        bucket=size_bucket("size_bytes", params.mtu_bytes, params.bdp_bytes)
    )
    done = pl.col("completed")
    aggs = [pl.len().alias("n_flows"), done.sum().cast(pl.UInt32).alias("n")]
    for m in metrics:
        for q in qs:
            aggs.append(
                pl.col(m)
                .filter(done)
                .cast(pl.Float64)
                .quantile(q, interpolation="linear")
                .alias(f"{m}_{quantile_label(q)}")
            )
    stats = lf.group_by([*by, "bucket"]).agg(aggs).collect()
    grid = pl.DataFrame({"bucket": pl.Series(BUCKETS, dtype=BUCKET_DTYPE)})
    if by:
        grid = stats.select(by).unique().join(grid, how="cross")
    out = grid.join(stats, on=[*by, "bucket"], how="left").with_columns(
        pl.col("n_flows").fill_null(0).cast(pl.UInt32), pl.col("n").fill_null(0)
    )
    return out.sort([*by, "bucket"])
