"""Sweeps from Python: loading through the manifest, reports per axis, the local and Ray
drivers of ``netstep_analysis.sweep``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import ray
from conftest import REPO, netstep_binary

import netstep_analysis as na
from netstep_analysis import sweep as na_sweep

QUICKSTART = REPO / "scenarios" / "quickstart.toml"


def write_sweep(folder: Path, body: str, duration: str = "2ms") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "sweep.toml"
    path.write_text(
        f'scenario = "{QUICKSTART.as_posix()}"\n{body}\n'
        f'[set]\n"traffic.0.duration" = "{duration}"\n'
    )
    return path


def netstep_sweep(sweep: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(netstep_binary()), "sweep", str(sweep), "--out", str(out), "--quiet", *args],
        capture_output=True,
        text=True,
    )


def test_load_reads_done_points_with_typed_axis_columns(tmp_path):
    # Two integer axes; the points with 600,000 s links are valid but fail while running
    # (their packets would arrive past the latest representable time): exit 4.
    sweep = write_sweep(
        tmp_path,
        "seeds = 2\n[grid]\n"
        'k = { key = "topology.k", values = [4] }\n'
        'delay_s = { key = "topology.links.delay", values = ["1us", "600000s"] }\n',
    )
    out = tmp_path / "out"
    done = netstep_sweep(sweep, out)
    assert done.returncode == na_sweep.EXIT_POINTS_FAILED, done.stderr
    manifest = na.sweep_manifest(out)
    assert manifest is not None
    assert na.axes(manifest) == ["k", "delay_s", "seed"]
    failed = manifest.filter(pl.col("delay_s") == "600000s")
    assert failed["status"].to_list() == ["failed", "failed"]
    assert failed["error"].str.contains("latest representable time").all()
    frames = na.load(out)
    flows = frames["flows"].collect()
    assert flows.schema["k"] == pl.Int64
    assert flows.schema["seed"] == pl.Int64
    assert flows["delay_s"].unique().to_list() == ["1us"], "failed points are not loaded"
    assert sorted(flows["seed"].unique().to_list()) == [1, 2]
    assert flows["point_id"].n_unique() == 2
    # Every flow of both runs, once.
    per_run = [
        pl.read_parquet(out / p / "flows.parquet").height
        for p in ("k=4/delay_s=1us/seed=1", "k=4/delay_s=1us/seed=2")
    ]
    assert flows.height == sum(per_run)
    run = frames["run"].collect()
    assert run.height == 2
    # run.parquet has its own seed column; the axis does not repeat it.
    assert "seed_right" not in run.columns
    assert sorted(run["seed"].to_list()) == [1, 2]


def test_report_on_a_sweep_has_a_plot_per_axis(tmp_path):
    sweep = write_sweep(
        tmp_path, 'seeds = 2\n[grid]\nload = { key = "traffic.0.load", values = [0.3, 0.7] }\n'
    )
    out = tmp_path / "out"
    assert netstep_sweep(sweep, out).returncode == 0
    report = na.write_report(out, tmp_path / "report")
    text = report.read_text()
    assert "## Per axis" in text
    assert "### load" in text and "### seed" in text
    assert (tmp_path / "report" / "axis_load.png").stat().st_size > 0
    # The per-axis numbers are the pooled flows of each value's points.
    flows = na.load(out)["flows"].collect()
    table = na.plots.slowdown_by_axis(flows, "load")
    assert table["points"].to_list() == [2, 2]
    high = flows.filter(pl.col("completed") & (pl.col("load") == 0.7))["slowdown"]
    assert abs(table["p50"][1] - high.quantile(0.5, interpolation="linear")) < 1e-12


def _same_runs(a: Path, b: Path, paths: list[str]) -> None:
    for p in paths:
        for table in ("flows.parquet", "links.parquet"):
            assert (a / p / table).read_bytes() == (b / p / table).read_bytes(), f"{p} {table}"
        # run.parquet holds the wall time; everything else is equal.
        ra = pl.read_parquet(a / p / "run.parquet").drop("wall_seconds")
        rb = pl.read_parquet(b / p / "run.parquet").drop("wall_seconds")
        assert ra.equals(rb), p


def test_ray_local_cluster_equals_the_local_sweep_byte_for_byte(tmp_path):
    sweep = write_sweep(
        tmp_path, 'seeds = 2\n[grid]\nload = { key = "traffic.0.load", values = [0.3, 0.6] }\n'
    )
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    assert netstep_sweep(sweep, local).returncode == 0
    try:
        results = na_sweep.run_ray(
            sweep,
            on_ray,
            netstep=netstep_binary(),
            init={
                "num_cpus": 2,
                "include_dashboard": False,
                "_node_ip_address": "127.0.0.1",
                "object_store_memory": 80 * 1024 * 1024,
                "log_to_driver": False,
            },
        )
        assert len(results) == 4
        assert all(r.returncode == 0 for r in results), results
        # Resume: nothing pending, no task runs.
        assert na_sweep.run_ray(sweep, on_ray, netstep=netstep_binary()) == []
    finally:
        ray.shutdown()
    m_local, m_ray = na.sweep_manifest(local), na.sweep_manifest(on_ray)
    assert m_local is not None and m_ray is not None
    assert m_ray["status"].to_list() == ["done"] * 4
    assert m_ray["point_id"].to_list() == m_local["point_id"].to_list()
    _same_runs(local, on_ray, m_local["path"].to_list())


def test_the_module_runs_a_sweep_locally(tmp_path):
    sweep = write_sweep(tmp_path, "seeds = 2\n", duration="1ms")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "netstep_analysis.sweep", str(sweep), "--out", str(out)]
    done = subprocess.run(
        [*cmd, "--netstep", str(netstep_binary())], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    manifest = na.sweep_manifest(out)
    assert manifest is not None
    assert manifest["status"].to_list() == ["done", "done"]
    missing = subprocess.run(
        [*cmd, "--netstep", str(tmp_path / "nope")], capture_output=True, text=True
    )
    assert missing.returncode == 2
    assert "netstep binary not found" in missing.stderr
