"""``python -m netstep_analysis report RUN_OR_SWEEP [--out DIR]``: a Markdown report with plots.

The report has a summary table (flows, completed, drops, p50/p99 slowdown per size bucket) per
run, a per-bucket percentile table, a slowdown CDF per bucket, for sweeps a W1-per-bucket chart
against the first run, and, for runs traced with ``--trace queue_samples``, queue occupancy and
link-utilisation plots (skipped with a note otherwise).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from netstep_analysis.buckets import BUCKETS, percentiles_by_bucket
from netstep_analysis.params import RunParams, run_params
from netstep_analysis.plots import (
    plot_axis,
    plot_queue_occupancy,
    plot_slowdown_cdf,
    plot_utilization_heatmap,
    plot_w1_by_bucket,
    slowdown_by_axis,
    with_bucket,
)
from netstep_analysis.runs import axes, load

MAX_CDF_RUNS = 10
"""At most this many runs are overlaid in the report's CDF figure."""

MAX_W1_RUNS = 8
"""At most this many runs are compared with the first in the report's W1 chart."""

MAX_QUEUE_RUNS = 4
"""Queue plots are drawn for at most this many runs."""


class NotARunError(FileNotFoundError):
    """The folder holds no netstep run (no ``run.parquet`` here or below)."""


def find_runs(path: str | Path) -> list[Path]:
    """Run folders at or below ``path`` (folders with ``run.parquet``), sorted.

    For a ``netstep sweep`` folder these are the points whose status is ``done`` in
    ``sweep.parquet``. Hidden folders (staging folders of an interrupted run, for instance)
    are skipped. Raises :class:`NotARunError` when there is none.
    """
    root = Path(path)
    if not root.is_dir():
        raise NotARunError(f"{root}: not a folder; not a netstep run")
    if (root / "run.parquet").is_file():
        return [root]
    manifest = root / "sweep.parquet"
    if manifest.is_file():
        # A netstep sweep: its done points, in the manifest's order.
        done = pl.read_parquet(manifest).filter(pl.col("status") == "done")
        if done.height == 0:
            raise NotARunError(f"{root}: a sweep with no done point (see sweep.parquet)")
        return [root / p for p in done["path"].to_list()]
    runs = sorted(
        p.parent
        for p in root.rglob("run.parquet")
        if not any(part.startswith(".") for part in p.relative_to(root).parts[:-1])
    )
    if not runs:
        raise NotARunError(f"{root}: no run.parquet here or below; not a netstep run")
    return runs


def _fmt(v: object, digits: int = 2) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}" if v == v else "–"
    return str(v)


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(c) for c in row) + " |" for row in rows]
    return lines


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", label).strip("_") or "run"


class _Run:
    def __init__(self, root: Path, folder: Path):
        self.folder = folder
        self.label = "." if folder == root else folder.relative_to(root).as_posix()
        self.run = pl.read_parquet(folder / "run.parquet")
        self.links = pl.read_parquet(folder / "links.parquet")
        self.flows = pl.read_parquet(folder / "flows.parquet")
        self.params: RunParams = run_params(self.run.row(0, named=True), self.links)
        self.queue_samples = folder / "queue_samples.parquet"
        self.packet_hops = folder / "packet_hops.parquet"


def _hops_summary(path: Path) -> list[object]:
    hops = pl.scan_parquet(path)
    delay = (pl.col("dequeue_ns").cast(pl.Float64) - pl.col("enqueue_ns").cast(pl.Float64)) / 1e3
    s = (
        hops.select(
            pl.len().alias("hops"),
            pl.col("dropped").sum().alias("dropped"),
            (pl.col("drop_reason").cast(pl.String) == "buffer_full").sum().alias("buffer_full"),
            (pl.col("drop_reason").cast(pl.String) == "link_loss").sum().alias("link_loss"),
            delay.mean().alias("mean_us"),
            delay.quantile(0.99, interpolation="linear").alias("p99_us"),
        )
        .collect()
        .row(0)
    )
    return list(s)


def write_report(path: str | Path, out: str | Path | None = None) -> Path:
    """Write ``report.md`` and its PNGs for a run or sweep folder; return the report's path.

    ``out`` defaults to ``<path>/report``. Raises :class:`NotARunError` for a folder without a
    run.
    """
    root = Path(path)
    folders = find_runs(root)
    out_dir = Path(out) if out is not None else root / "report"
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = [_Run(root, f) for f in folders]

    lines = [f"# netstep report: `{root}`", ""]
    kind = "run" if len(runs) == 1 else f"sweep of {len(runs)} runs"
    lines += [f"A {kind}. Size buckets use {runs[0].params.describe()}."]
    differing = {r.params for r in runs if r.params != runs[0].params}
    if differing:
        lines += ["Runs differ in these parameters; each run is bucketed with its own."]
    lines += [""]

    # Summary: one row per run.
    lines += ["## Summary", "", "Slowdown per size bucket as p50 / p99 over completed flows.", ""]
    header = ["run", "scenario", "seed", "flows", "completed", "drops"] + list(BUCKETS)
    rows, detail = [], []
    for r in runs:
        pct = percentiles_by_bucket(r.flows, r.params, qs=(0.5, 0.9, 0.99))
        row = r.run.row(0, named=True)
        cells = []
        for b in pct.iter_rows(named=True):
            cells.append(
                "–" if b["n"] == 0 else f"{_fmt(b['slowdown_p50'])} / {_fmt(b['slowdown_p99'])}"
            )
            detail.append(
                [
                    r.label,
                    b["bucket"],
                    b["n_flows"],
                    b["n"],
                    b["slowdown_p50"],
                    b["slowdown_p90"],
                    b["slowdown_p99"],
                    None if b["fct_ns_p50"] is None else b["fct_ns_p50"] / 1e3,
                    None if b["fct_ns_p99"] is None else b["fct_ns_p99"] / 1e3,
                ]
            )
        rows.append(
            [r.label, row["scenario"], row["seed"], row["flows"], row["flows_completed"]]
            + [row["drops"]]
            + cells
        )
    lines += _table(header, rows) + [""]
    lines += ["## Percentiles per size bucket", ""]
    lines += _table(
        [
            "run",
            "bucket",
            "flows",
            "completed",
            "slowdown p50",
            "p90",
            "p99",
            "FCT p50 (µs)",
            "FCT p99 (µs)",
        ],
        detail,
    )
    lines += [""]

    # Slowdown CDFs.
    lines += ["## Plots", ""]
    shown = runs[:MAX_CDF_RUNS]
    cdf = plot_slowdown_cdf(
        {r.label: with_bucket(r.flows, r.params) for r in shown},
        None,
        out_dir / "slowdown_cdf.png",
    )
    lines += [f"![slowdown CDF per size bucket]({cdf.name})", ""]
    if len(runs) > MAX_CDF_RUNS:
        lines += [f"(first {MAX_CDF_RUNS} of {len(runs)} runs shown)", ""]

    if len(runs) > 1:
        others = {r.label: with_bucket(r.flows, r.params) for r in runs[1 : 1 + MAX_W1_RUNS]}
        w1 = plot_w1_by_bucket(
            with_bucket(runs[0].flows, runs[0].params), others, None, out_dir / "w1_by_bucket.png"
        )
        lines += [
            f"W1 of slowdown per size bucket, each run against `{runs[0].label}`:",
            "",
            f"![W1 per bucket]({w1.name})",
            "",
        ]

    # Sweeps: one plot per axis.
    manifest = root / "sweep.parquet"
    if manifest.is_file() and len(runs) > 1:
        names = axes(pl.read_parquet(manifest))
        flows = load(root)["flows"].collect()
        lines += ["## Per axis", ""]
        lines += [
            "Slowdown of completed flows for each value of each axis, pooled over the other "
            "axes' values (points: how many sweep points have the value).",
            "",
        ]
        for axis in names:
            table = slowdown_by_axis(flows, axis)
            if table.height < 2:
                continue
            png = plot_axis(table, axis, out_dir / f"axis_{_slug(axis)}.png")
            lines += [f"### {axis}", ""]
            lines += _table(
                [axis, "points", "completed", "p50", "mean", "p99"],
                [
                    [r[axis], r["points"], r["completed"], r["p50"], r["mean"], r["p99"]]
                    for r in table.iter_rows(named=True)
                ],
            )
            lines += ["", f"![slowdown by {axis}]({png.name})", ""]

    # Queue plots.
    traced = [r for r in runs if r.queue_samples.is_file()]
    lines += ["### Queues and links", ""]
    if not traced:
        lines += [
            "Skipped: no `queue_samples.parquet` in this "
            + ("run" if len(runs) == 1 else "sweep")
            + " (run netstep with `--trace queue_samples` to get queue and utilisation plots).",
            "",
        ]
    for r in traced[:MAX_QUEUE_RUNS]:
        qs = pl.read_parquet(r.queue_samples)
        slug = "" if r.label == "." else "_" + _slug(r.label)
        occ = plot_queue_occupancy(qs, out_dir / f"queue_occupancy{slug}.png")
        interval = r.run["sample_interval_ns"][0] if "sample_interval_ns" in r.run.columns else None
        heat = plot_utilization_heatmap(
            qs, r.links, out_dir / f"utilization{slug}.png", interval_ns=interval
        )
        title = "" if r.label == "." else f" `{r.label}`"
        lines += [
            f"Queue occupancy{title}:",
            "",
            f"![queue occupancy]({occ.name})",
            "",
            f"Link utilisation{title}:",
            "",
            f"![link utilisation]({heat.name})",
            "",
        ]
    if len(traced) > MAX_QUEUE_RUNS:
        lines += [f"(queue plots for the first {MAX_QUEUE_RUNS} of {len(traced)} runs)", ""]
    if traced and len(traced) < len(runs):
        lines += [f"{len(runs) - len(traced)} run(s) have no queue_samples.parquet.", ""]

    hopped = [r for r in runs if r.packet_hops.is_file()]
    if hopped:
        lines += [
            "### Packet hops",
            "",
            "Queueing delay is dequeue − enqueue of queued packets.",
            "",
        ]
        lines += _table(
            [
                "run",
                "hops",
                "dropped",
                "buffer_full",
                "link_loss",
                "mean queueing (µs)",
                "p99 queueing (µs)",
            ],
            [[r.label, *_hops_summary(r.packet_hops)] for r in hopped],
        )
        lines += [""]

    report = out_dir / "report.md"
    report.write_text("\n".join(lines))
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit code (0 ok, 2 bad input)."""
    parser = argparse.ArgumentParser(
        prog="python -m netstep_analysis", description="Analyse netstep run folders."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="write report.md and PNG plots for a run or sweep")
    rep.add_argument("path", help="run folder or folder of run folders (a sweep)")
    rep.add_argument("--out", help="output folder (default: PATH/report)")
    args = parser.parse_args(argv)
    try:
        report = write_report(args.path, args.out)
    except NotARunError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (FileNotFoundError, pl.exceptions.PolarsError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"error: {args.path}: not a readable netstep run ({first})", file=sys.stderr)
        return 2
    print(report)
    return 0
