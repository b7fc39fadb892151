"""Matplotlib figures of runs, each saved as a PNG; every function returns the PNG's path.

Figures are drawn on the Agg canvas directly (no ``pyplot``, no global backend change), so the
functions work headless and leave an interactive session's backend alone. Frames may be Polars
DataFrames or LazyFrames of one run; a sweep's frames are pooled unless filtered first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from netstep_analysis.buckets import BUCKET_DTYPE, BUCKETS, size_bucket
from netstep_analysis.distance import compare
from netstep_analysis.params import run_params

Frame = pl.DataFrame | pl.LazyFrame


def _collect(frame: Frame) -> pl.DataFrame:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


def _labelled(frames: Frame | Mapping[str, Frame], default: str) -> dict[str, pl.DataFrame]:
    if isinstance(frames, pl.DataFrame | pl.LazyFrame):
        return {default: _collect(frames)}
    return {str(k): _collect(v) for k, v in frames.items()}


def with_bucket(flows: Frame, params: Any = None) -> pl.DataFrame:
    """``flows`` collected with a ``bucket`` column (kept as is when it already has one).

    ``params`` is anything :func:`netstep_analysis.run_params` accepts; it is only needed when
    ``flows`` has no ``bucket`` column. Rows with ``completed`` false are kept.
    """
    df = _collect(flows)
    if "bucket" in df.columns:
        return df.with_columns(pl.col("bucket").cast(pl.String).cast(BUCKET_DTYPE))
    if params is None:
        raise ValueError("flows have no bucket column; pass the run parameters")
    p = run_params(params)
    return df.with_columns(bucket=size_bucket("size_bytes", p.mtu_bytes, p.bdp_bytes))


def _completed_values(df: pl.DataFrame, metric: str, bucket: str) -> np.ndarray:
    sel = df.filter(pl.col("bucket") == bucket)
    if "completed" in sel.columns:
        sel = sel.filter(pl.col("completed"))
    return sel[metric].drop_nulls().cast(pl.Float64).to_numpy()


def _save(fig: Figure, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)
    fig.savefig(path, format="png", dpi=110)
    return path


def plot_slowdown_cdf(
    flows: Frame | Mapping[str, Frame],
    params: Any,
    path: str | Path,
    *,
    metric: str = "slowdown",
    title: str | None = None,
) -> Path:
    """Empirical CDF of slowdown (or ``metric``) per size bucket, one panel per bucket.

    ``flows`` is one flows frame or a mapping ``label → frame`` drawn as overlaid curves
    (e.g. ``{"netstep": truth, "estimator": predicted}``); frames need ``size_bytes`` and
    ``metric`` (or a ``bucket`` column), and rows whose ``completed`` is false are left out.
    ``params`` sets the buckets (see :func:`with_bucket`). Returns ``path``.
    """
    series = {k: with_bucket(v, params) for k, v in _labelled(flows, "run").items()}
    fig = Figure(figsize=(10, 7.5))
    axes = fig.subplots(2, 2).ravel()
    for ax, bucket in zip(axes, BUCKETS, strict=True):
        drawn = False
        for label, df in series.items():
            x = np.sort(_completed_values(df, metric, bucket))
            if x.size == 0:
                continue
            y = np.arange(0, x.size + 1) / x.size
            ax.step(np.r_[x[0], x], y, where="post", label=f"{label} (n={x.size})")
            drawn = True
        ax.set_title(f"size {bucket}")
        ax.set_xlabel(metric)
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        if drawn:
            if metric == "slowdown":
                ax.set_xscale("log")
            ax.legend(fontsize=7, loc="lower right")
        else:
            ax.text(0.5, 0.5, "no completed flows", ha="center", transform=ax.transAxes)
    fig.suptitle(title or f"{metric} CDF per flow-size bucket")
    fig.tight_layout()
    return _save(fig, path)


def _busiest_ports(qs: pl.DataFrame, top_n: int) -> list[int]:
    ranked = (
        qs.group_by("port")
        .agg(pl.col("queue_bytes").mean().alias("mean_q"), pl.col("tx_bytes").max().alias("tx"))
        .sort(["mean_q", "tx", "port"], descending=[True, True, False])
    )
    return ranked["port"].head(top_n).to_list()


def plot_queue_occupancy(
    queue_samples: Frame, path: str | Path, *, top_n: int = 8, title: str | None = None
) -> Path:
    """Queue occupancy (KB) over time of the ``top_n`` busiest egress ports of one run.

    Ports are ranked by their mean sampled ``queue_bytes`` (ties: most bytes sent). Input is a
    ``queue_samples`` frame (``time_ns``, ``port``, ``node``, ``queue_bytes``, ...). Returns
    ``path``.
    """
    qs = _collect(queue_samples)
    fig = Figure(figsize=(10, 5))
    ax = fig.subplots()
    if qs.height == 0:
        ax.text(0.5, 0.5, "no queue samples", ha="center", transform=ax.transAxes)
    for port in _busiest_ports(qs, top_n) if qs.height else []:
        p = qs.filter(pl.col("port") == port).sort("time_ns")
        node = p["node"][0]
        ax.step(
            p["time_ns"].to_numpy() / 1e6,
            p["queue_bytes"].to_numpy() / 1e3,
            where="post",
            label=f"port {port} (node {node})",
        )
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("queue (KB)")
    ax.grid(alpha=0.3)
    if qs.height:
        ax.legend(fontsize=7, ncol=2)
    ax.set_title(title or f"Queue occupancy, top {top_n} ports by mean backlog")
    fig.tight_layout()
    return _save(fig, path)


def link_utilization(
    queue_samples: Frame,
    links: Frame,
    bins: int | None = 50,
    *,
    interval_ns: int | None = None,
) -> pl.DataFrame:
    """Utilisation of every sampled port per time bin from cumulative ``tx_bytes``.

    Utilisation over an interval is ``Δtx_bytes·8 / (Δt·rate_bps)`` with ``rate_bps`` from
    ``links`` (joined on ``port = port_id``). The sample interval is ``interval_ns`` (the run's
    ``sample_interval_ns``) or, when not given, the smallest gap between sample times; a port's
    first sample counts its bytes from one interval earlier (ports appear once they have carried
    traffic). Consecutive intervals are grouped into at most ``bins`` bins of equal width
    (``None``: one bin per sample interval); ports absent from a bin sent nothing in it.
    Counters move a whole packet at a time, so a short bin at line rate can read slightly
    above 1 (by up to one packet's serialization time over the bin width).

    Returns columns ``port``, ``bin`` (0-based), ``start_ns``, ``end_ns``, ``tx_bytes`` (sent in
    the bin), ``rate_bps`` and ``utilization`` (0..1), only for (port, bin) pairs with samples.
    """
    qs = _collect(queue_samples).select("time_ns", "port", "tx_bytes")
    rates = _collect(links).select(pl.col("port_id").alias("port"), "rate_bps")
    cols = ["port", "bin", "start_ns", "end_ns", "tx_bytes", "rate_bps", "utilization"]
    if qs.height == 0:
        return pl.DataFrame(
            schema={
                "port": pl.UInt32,
                "bin": pl.Int64,
                "start_ns": pl.Int64,
                "end_ns": pl.Int64,
                "tx_bytes": pl.Int64,
                "rate_bps": pl.UInt64,
                "utilization": pl.Float64,
            }
        )
    times = qs["time_ns"].unique().sort().cast(pl.Int64).to_numpy()
    gaps = np.diff(times)
    gaps = gaps[gaps > 0]
    if interval_ns is not None:
        interval = int(interval_ns)
    else:
        interval = int(gaps.min()) if gaps.size else int(times[0])
    if interval <= 0:
        raise ValueError("queue samples need positive sample times")
    t0 = max(int(times[0]) - interval, 0)
    n_intervals = max(math.ceil((int(times[-1]) - t0) / interval), 1)
    n_bins = n_intervals if bins is None else max(1, min(int(bins), n_intervals))
    per_bin = math.ceil(n_intervals / n_bins)
    n_bins = math.ceil(n_intervals / per_bin)
    d = (
        qs.sort(["port", "time_ns"])
        .with_columns(
            pl.col("time_ns").cast(pl.Int64),
            (
                pl.col("tx_bytes").cast(pl.Int64)
                - pl.col("tx_bytes").cast(pl.Int64).shift(1).over("port").fill_null(0)
            ).alias("dtx"),
        )
        .with_columns(
            (((pl.col("time_ns") - t0 + interval - 1) // interval - 1).clip(0) // per_bin).alias(
                "bin"
            )
        )
        .group_by(["port", "bin"])
        .agg(pl.col("dtx").sum().alias("tx_bytes"))
        .join(rates, on="port", how="left")
        .with_columns(
            (t0 + pl.col("bin") * per_bin * interval).alias("start_ns"),
            pl.min_horizontal(
                t0 + (pl.col("bin") + 1) * per_bin * interval, t0 + n_intervals * interval
            ).alias("end_ns"),
        )
        .with_columns(
            (
                pl.col("tx_bytes").cast(pl.Float64)
                * 8
                / ((pl.col("end_ns") - pl.col("start_ns")).cast(pl.Float64) * 1e-9)
                / pl.col("rate_bps").cast(pl.Float64)
            ).alias("utilization")
        )
    )
    return d.select(cols).sort(["port", "bin"])


def plot_utilization_heatmap(
    queue_samples: Frame,
    links: Frame,
    path: str | Path,
    *,
    bins: int = 50,
    max_ports: int = 64,
    interval_ns: int | None = None,
    title: str | None = None,
) -> Path:
    """Heatmap of link utilisation, ports × time bins, from :func:`link_utilization`.

    Shows at most ``max_ports`` ports (those that sent the most bytes), sorted by port id;
    colour 0 (idle) to 1 (line rate). ``interval_ns`` is the sample interval (inferred from
    the sample times when not given). Returns ``path``.
    """
    util = link_utilization(queue_samples, links, bins, interval_ns=interval_ns)
    fig = Figure(figsize=(10, 6))
    ax = fig.subplots()
    if util.height == 0:
        ax.text(0.5, 0.5, "no queue samples", ha="center", transform=ax.transAxes)
    else:
        top = (
            util.group_by("port")
            .agg(pl.col("tx_bytes").sum())
            .sort(["tx_bytes", "port"], descending=[True, False])["port"]
            .head(max_ports)
            .sort()
            .to_list()
        )
        n_bins = int(util.select(pl.col("bin").max()).item()) + 1
        grid = np.zeros((len(top), n_bins))
        row = {p: i for i, p in enumerate(top)}
        for port, b, u in (
            util.filter(pl.col("port").is_in(top)).select("port", "bin", "utilization").iter_rows()
        ):
            grid[row[port], b] = u
        t0, t1 = util.select(pl.col("start_ns").min() / 1e6, pl.col("end_ns").max() / 1e6).row(0)
        im = ax.imshow(
            grid,
            aspect="auto",
            interpolation="nearest",
            origin="lower",
            extent=(float(t0), float(t1), -0.5, len(top) - 0.5),
            vmin=0.0,
            vmax=max(1.0, float(grid.max())),
            cmap="viridis",
        )
        fig.colorbar(im, ax=ax, label="utilisation")
        if len(top) <= 40:
            ax.set_yticks(range(len(top)), [str(p) for p in top], fontsize=6)
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("port")
    ax.set_title(title or "Link utilisation per egress port")
    fig.tight_layout()
    return _save(fig, path)


def w1_by_bucket(
    reference: Frame, other: Frame, params: Any = None, *, metric: str = "slowdown"
) -> pl.DataFrame:
    """:func:`netstep_analysis.compare` of ``other`` against ``reference`` per size bucket.

    Both frames need ``size_bytes`` (or a ``bucket`` column) and ``metric``; incomplete flows
    are left out; ``params`` sets the buckets (see :func:`with_bucket`). Returns one row per
    bucket: ``bucket, n_a, n_b, w1, nw1, rel_err_p50, rel_err_p90, rel_err_p99, few_samples``
    (NaN where a side is empty).
    """
    ref = with_bucket(reference, params)
    oth = with_bucket(other, params)
    rows = []
    for bucket in BUCKETS:
        c = compare(_completed_values(ref, metric, bucket), _completed_values(oth, metric, bucket))
        rows.append({"bucket": bucket, **c})
    return pl.DataFrame(rows).with_columns(pl.col("bucket").cast(BUCKET_DTYPE))


def plot_w1_by_bucket(
    reference: Frame,
    others: Frame | Mapping[str, Frame],
    params: Any,
    path: str | Path,
    *,
    metric: str = "slowdown",
    title: str | None = None,
) -> Path:
    """Bar chart of W1 per size bucket between ``reference`` and one or more other runs.

    ``others`` is one flows frame or a mapping ``label → frame`` (grouped bars). Each bar is
    annotated with nW1 (W1 / reference mean); buckets with fewer than 100 samples on a side
    are hatched. Returns ``path``.
    """
    series = _labelled(others, "other")
    fig = Figure(figsize=(9, 5))
    ax = fig.subplots()
    width = 0.8 / max(len(series), 1)
    x = np.arange(len(BUCKETS))
    for i, (label, df) in enumerate(series.items()):
        table = w1_by_bucket(reference, df, params, metric=metric)
        w1 = np.nan_to_num(table["w1"].to_numpy(), nan=0.0)
        bars = ax.bar(x + (i - (len(series) - 1) / 2) * width, w1, width, label=label)
        for bar, raw, nw1, few in zip(
            bars,
            table["w1"].to_list(),
            table["nw1"].to_list(),
            table["few_samples"].to_list(),
            strict=True,
        ):
            if few:
                bar.set_hatch("//")
            empty = raw is None or not np.isfinite(raw)
            if empty or (nw1 is not None and np.isfinite(nw1)):
                ax.annotate(
                    "no data" if empty else f"{nw1:.2f}",
                    (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center",
                    va="bottom",
                    fontsize=7,
                )
    ax.set_xticks(x, list(BUCKETS))
    ax.set_xlabel("flow size bucket")
    ax.set_ylabel(f"W1 of {metric}")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, title="labels: nW1; hatched: < 100 samples", title_fontsize=7)
    ax.set_title(title or f"Wasserstein-1 distance of {metric} per bucket vs reference")
    fig.tight_layout()
    return _save(fig, path)


def slowdown_by_axis(flows: Frame, axis: str) -> pl.DataFrame:
    """Completed flows' slowdown per value of a sweep axis, pooled over the other axes.

    ``flows`` is a sweep's flows frame with the axis column (:func:`netstep_analysis.load`).
    Returns one row per value, sorted: ``points``, ``completed``, ``p50``, ``p99``, ``mean``.
    """
    df = _collect(flows)
    return (
        df.filter(pl.col("completed"))
        .group_by(axis)
        .agg(
            pl.col("point_id").n_unique().alias("points"),
            pl.len().alias("completed"),
            pl.col("slowdown").quantile(0.5, interpolation="linear").alias("p50"),
            pl.col("slowdown").quantile(0.99, interpolation="linear").alias("p99"),
            pl.col("slowdown").mean().alias("mean"),
        )
        .sort(axis)
    )


def plot_axis(table: pl.DataFrame, axis: str, path: str | Path) -> Path:
    """Slowdown p50, mean and p99 against the values of one sweep axis (a
    :func:`slowdown_by_axis` table); numeric axes on a numeric x axis, others as categories.
    Returns ``path``."""
    fig = Figure(figsize=(7, 4.5))
    ax = fig.subplots()
    values = table[axis]
    numeric = values.dtype.is_numeric()
    x = values.to_numpy() if numeric else np.arange(table.height)
    for column, style in (("p50", "o-"), ("mean", "s--"), ("p99", "^-")):
        ax.plot(x, table[column].to_numpy(), style, label=column)
    if not numeric:
        ax.set_xticks(x, [str(v) for v in values.to_list()], rotation=30, ha="right")
    ax.set_yscale("log")
    ax.set_xlabel(axis)
    ax.set_ylabel("slowdown (completed flows, pooled over other axes)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"Slowdown by {axis}")
    fig.tight_layout()
    return _save(fig, path)
