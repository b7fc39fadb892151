"""Plots and the ``report`` command, on real runs and on synthetic trace tables."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from conftest import REPO, run_netstep

import netstep_analysis as na

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_png(path: Path) -> None:
    assert path.is_file(), path
    data = path.read_bytes()
    assert len(data) > 1000 and data.startswith(PNG_MAGIC), path


def report_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "netstep_analysis", "report", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
    )


# Synthetic trace tables with the documented columns: port p sends at a fixed share of its
# 10 Gb/s line rate from its first sample on, sampled every 10 µs.
SHARES = {0: 1.0, 1: 0.5, 16: 0.25}
INTERVAL_NS = 10_000
SAMPLES = 100


def synthetic_queue_samples() -> pl.DataFrame:
    rows = []
    for k in range(1, SAMPLES + 1):
        for port, share in SHARES.items():
            first = 20 if port == 16 else 1  # port 16 carries traffic from 190 µs on
            if k < first:
                continue
            tx = int(share * 10e9 / 8 * INTERVAL_NS * 1e-9) * (k - first + 1)
            rows.append(
                {
                    "time_ns": k * INTERVAL_NS,
                    "port": port,
                    "node": port,
                    "queue_bytes": 1000 * (port + 1) * (k % 10),
                    "queue_packets": k % 10,
                    "tx_bytes": tx,
                    "tx_packets": tx // 1500,
                    "drops": 0,
                    "ecn_marks": 0,
                }
            )
    return pl.DataFrame(
        rows,
        schema={
            "time_ns": pl.UInt64,
            "port": pl.UInt32,
            "node": pl.UInt32,
            "queue_bytes": pl.UInt64,
            "queue_packets": pl.UInt32,
            "tx_bytes": pl.UInt64,
            "tx_packets": pl.UInt64,
            "drops": pl.UInt64,
            "ecn_marks": pl.UInt64,
        },
    )


def synthetic_packet_hops() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "packet_id": [0, 0, 1, 2],
            "flow_id": [0, 0, 0, 1],
            "hop": [0, 1, 0, 0],
            "node": [0, 16, 0, 1],
            "port": [0, 20, 0, 1],
            "kind": ["data", "data", "ack", "data"],
            "seq": [0, 0, 1, 0],
            "size_bytes": [1500, 1500, 40, 1500],
            "arrive_ns": [0, 2_000, 100, 0],
            "enqueue_ns": [0, 2_000, 100, 0],
            "dequeue_ns": [0, 3_000, 1_300, None],
            "depart_ns": [1_200, 4_200, 1_332, None],
            "queue_bytes": [0, 1500, 1500, 256_000],
            "queue_packets": [0, 1, 1, 171],
            "ecn": [0, 0, 0, 0],
            "dropped": [False, False, False, True],
            "drop_reason": [None, None, None, "buffer_full"],
        },
        schema_overrides={
            "packet_id": pl.UInt64,
            "flow_id": pl.UInt32,
            "hop": pl.UInt16,
            "node": pl.UInt32,
            "port": pl.UInt32,
            "kind": pl.Categorical,
            "seq": pl.UInt32,
            "size_bytes": pl.UInt32,
            "arrive_ns": pl.UInt64,
            "enqueue_ns": pl.UInt64,
            "dequeue_ns": pl.UInt64,
            "depart_ns": pl.UInt64,
            "queue_bytes": pl.UInt64,
            "queue_packets": pl.UInt32,
            "ecn": pl.UInt8,
            "drop_reason": pl.Categorical,
        },
    )


@pytest.fixture()
def synthetic_traced_run(small_run: Path, tmp_path: Path) -> Path:
    """A copy of the small run with synthetic ``queue_samples`` and ``packet_hops`` tables."""
    run = tmp_path / "run"
    shutil.copytree(small_run, run)
    synthetic_queue_samples().write_parquet(run / "queue_samples.parquet")
    synthetic_packet_hops().write_parquet(run / "packet_hops.parquet")
    return run


def test_report_of_a_run(small_run, tmp_path):
    out = tmp_path / "report"
    done = report_cli(str(small_run), "--out", str(out))
    assert done.returncode == 0, done.stderr
    text = (out / "report.md").read_text()
    flows = pl.read_parquet(small_run / "flows.parquet")
    assert "## Summary" in text
    for bucket in na.BUCKETS:
        assert bucket in text
    assert f"| . | quickstart | 1 | {flows.height} | {flows['completed'].sum()} |" in text
    assert_png(out / "slowdown_cdf.png")
    assert "(slowdown_cdf.png)" in text
    if not (small_run / "queue_samples.parquet").exists():
        assert "Skipped: no `queue_samples.parquet`" in text
        assert not list(out.glob("queue_occupancy*.png"))


def test_report_of_a_sweep_compares_runs(tmp_path):
    for seed in (1, 2, 3):
        run_netstep(
            REPO / "scenarios" / "quickstart.toml",
            tmp_path / "sweep" / f"seed={seed}",
            "--set",
            'traffic.0.duration="1ms"',
            "--set",
            f"simulation.seed={seed}",
        )
    report = na.write_report(tmp_path / "sweep")
    assert report == tmp_path / "sweep" / "report" / "report.md"
    text = report.read_text()
    assert "sweep of 3 runs" in text
    for seed in (1, 2, 3):
        assert f"| seed={seed} | quickstart | {seed} |" in text
    assert_png(report.parent / "slowdown_cdf.png")
    assert_png(report.parent / "w1_by_bucket.png")
    # The report folder inside the sweep does not disturb reading it back.
    assert na.load(tmp_path / "sweep")["run"].collect().height == 3


def test_report_refuses_a_folder_without_a_run(tmp_path):
    (tmp_path / "empty").mkdir()
    for target in (tmp_path / "empty", tmp_path / "missing"):
        done = report_cli(str(target))
        assert done.returncode == 2
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "not a netstep run" in lines[0] and str(target) in lines[0]
    with pytest.raises(na.NotARunError):
        na.write_report(tmp_path / "empty")


def test_load_returns_trace_tables_when_present(synthetic_traced_run, small_run):
    assert set(na.load(small_run)) >= set(na.TABLES)
    frames = na.load(synthetic_traced_run)
    assert set(frames) == set(na.TABLES) | {"packet_hops", "queue_samples"}
    assert frames["queue_samples"].collect().height == synthetic_queue_samples().height
    assert frames["packet_hops"].collect().schema["kind"] == pl.Categorical


def test_link_utilization_from_cumulative_bytes(synthetic_traced_run):
    frames = na.load(synthetic_traced_run)
    per_interval = na.link_utilization(frames["queue_samples"], frames["links"], bins=None)
    first = {0: 1, 1: 1, 16: 20}
    for port, share in SHARES.items():
        u = per_interval.filter(pl.col("port") == port)
        assert u.height == SAMPLES - first[port] + 1
        assert u["utilization"].to_list() == pytest.approx([share] * u.height)
    binned = na.link_utilization(frames["queue_samples"], frames["links"], bins=10)
    assert binned["bin"].max() == 9
    assert (binned["end_ns"] - binned["start_ns"] == 10 * INTERVAL_NS).all()
    assert binned.filter(pl.col("port") == 0)["utilization"].to_list() == pytest.approx([1.0] * 10)
    # Port 16 sent during one 10 µs interval of bin 1, then at 25 % from bin 2 on.
    late = binned.filter(pl.col("port") == 16)
    assert late["bin"].to_list() == list(range(1, 10))
    assert late["utilization"].to_list() == pytest.approx([0.025] + [0.25] * 8)


def test_queue_plots_and_report_with_synthetic_traces(synthetic_traced_run, tmp_path):
    frames = na.load(synthetic_traced_run)
    qs, links = frames["queue_samples"], frames["links"]
    assert_png(na.plot_queue_occupancy(qs, tmp_path / "occ.png", top_n=2))
    assert_png(na.plot_utilization_heatmap(qs, links, tmp_path / "heat.png", bins=20))
    report = na.write_report(synthetic_traced_run, tmp_path / "report")
    text = report.read_text()
    assert "Skipped" not in text
    assert "(queue_occupancy.png)" in text and "(utilization.png)" in text
    assert_png(tmp_path / "report" / "queue_occupancy.png")
    assert_png(tmp_path / "report" / "utilization.png")
    # Packet-hop summary: 4 hops, one dropped at a full buffer; queueing 0, 1 and 1.2 µs.
    assert "| . | 4 | 1 | 1 | 0 | 0.73 | 1.20 |" in text


def test_w1_plot_of_two_runs(small_run, tmp_path):
    other = run_netstep(
        REPO / "scenarios" / "quickstart.toml",
        tmp_path / "seed2",
        "--set",
        'traffic.0.duration="2ms"',
        "--set",
        "simulation.seed=2",
    )
    a = na.load(small_run)
    b = na.load(other)
    p = na.run_params(a)
    table = na.w1_by_bucket(a["flows"], b["flows"], p)
    assert table["bucket"].to_list() == list(na.BUCKETS)
    fa = na.with_bucket(a["flows"], p).filter(pl.col("completed"))
    fb = na.with_bucket(b["flows"], p).filter(pl.col("completed"))
    for row in table.iter_rows(named=True):
        xa = fa.filter(pl.col("bucket") == row["bucket"])["slowdown"]
        xb = fb.filter(pl.col("bucket") == row["bucket"])["slowdown"]
        assert (row["n_a"], row["n_b"]) == (xa.len(), xb.len())
        if xa.len() and xb.len():
            assert row["w1"] == pytest.approx(na.wasserstein1(xa, xb))
    assert_png(na.plot_w1_by_bucket(a["flows"], {"seed 2": b["flows"]}, p, tmp_path / "w1.png"))
    assert_png(
        na.plot_slowdown_cdf({"seed 1": a["flows"], "seed 2": b["flows"]}, p, tmp_path / "c.png")
    )


def test_queue_plots_on_a_traced_run(traced_run, tmp_path):
    frames = na.load(traced_run)
    assert "queue_samples" in frames and "packet_hops" in frames
    qs = frames["queue_samples"].collect()
    assert qs.height > 0
    run = frames["run"].collect().row(0, named=True)
    interval = run.get("sample_interval_ns") or 10_000
    util = na.link_utilization(qs, frames["links"], bins=None, interval_ns=interval)
    assert util.height > 0
    lowest, highest = util["utilization"].min(), util["utilization"].max()
    assert isinstance(lowest, float) and lowest >= 0.0
    # Counters move a packet at a time: an interval can hold one packet more than line rate.
    p = na.run_params(frames)
    slack = p.mtu_bytes * 8 / (p.host_rate_bps * interval * 1e-9)
    assert isinstance(highest, float) and highest <= 1.0 + slack + 1e-9
    # Bytes add up: the utilisation table accounts for every byte the samples counted.
    sent = qs.group_by("port").agg(pl.col("tx_bytes").max()).sort("port")["tx_bytes"].to_list()
    assert (
        util.group_by("port").agg(pl.col("tx_bytes").sum()).sort("port")["tx_bytes"].to_list()
        == sent
    )
    coarse = na.link_utilization(qs, frames["links"], bins=20, interval_ns=interval)
    last_bin = coarse["bin"].max()
    assert isinstance(last_bin, int) and last_bin <= 19
    assert coarse["tx_bytes"].sum() == sum(sent)
    assert_png(na.plot_queue_occupancy(qs, tmp_path / "occ.png"))
    assert_png(na.plot_utilization_heatmap(qs, frames["links"], tmp_path / "heat.png"))
    report = na.write_report(traced_run, tmp_path / "report")
    assert "(queue_occupancy.png)" in report.read_text()
    assert_png(tmp_path / "report" / "utilization.png")
