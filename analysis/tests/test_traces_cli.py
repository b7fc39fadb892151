"""Trace tables and `netstep compare` checked from Python: schemas as pyarrow and Polars read
them, W1 against scipy on random samples, schema-version checks, bounded memory."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import REPO, netstep_binary, run_netstep
from scipy.stats import wasserstein_distance


def test_trace_schemas_read_back_with_documented_types(traced_run: Path) -> None:
    hops = pl.read_parquet(traced_run / "packet_hops.parquet")
    assert hops.schema["packet_id"] == pl.UInt64
    assert hops.schema["hop"] == pl.UInt16
    assert hops.schema["kind"] == pl.Categorical
    assert hops.schema["drop_reason"] == pl.Categorical
    assert hops.schema["dequeue_ns"] == pl.UInt64
    assert set(hops["kind"].unique().to_list()) == {"data", "ack"}
    dropped = hops.filter(pl.col("dropped"))
    assert dropped["depart_ns"].null_count() == dropped.height
    arrow = pq.read_table(traced_run / "packet_hops.parquet")
    assert pa.types.is_dictionary(arrow.schema.field("kind").type)
    meta = pq.read_metadata(traced_run / "packet_hops.parquet").metadata
    assert meta[b"netstep.schema_version"] == b"1"
    assert b"netstep.scenario_hash" in meta
    samples = pl.read_parquet(traced_run / "queue_samples.parquet")
    assert samples.schema["time_ns"] == pl.UInt64
    assert samples.schema["queue_bytes"] == pl.UInt64
    run = pl.read_parquet(traced_run / "run.parquet").row(0, named=True)
    assert run["trace_tables"] == "packet_hops,queue_samples"
    assert run["sample_interval_ns"] == 10_000  # conftest.traced_run samples every 10 us
    # The quickstart leaves [nic] at its defaults; run.parquet records them with units.
    assert (run["nic_buffer"], run["nic_per_flow"], run["nic_scheduler"]) == (
        "1MB",
        "2pkts",
        "round_robin",
    )
    # Hosts never drop their own packets: no drop record at a host's egress port (hop 0).
    assert hops.filter((pl.col("hop") == 0) & (pl.col("drop_reason") == "buffer_full")).height == 0
    assert hops.filter(pl.col("dequeue_ns").is_not_null()).height == run["packet_hops"]


def fake_run(folder: Path, slowdowns: np.ndarray, version: str = "1") -> Path:
    """A minimal run folder holding exactly the given slowdowns."""
    folder.mkdir(parents=True)
    n = len(slowdowns)
    meta = {"netstep.schema_version": version}
    flows = pa.table(
        {
            "size_bytes": pa.array(np.full(n, 10_000), pa.uint64()),
            "fct_ns": pa.array(np.full(n, 1_000), pa.uint64()),
            "slowdown": pa.array(slowdowns, pa.float64()),
        }
    ).replace_schema_metadata(meta)
    pq.write_table(flows, folder / "flows.parquet")
    run = pa.table(
        {
            "mtu_bytes": pa.array([1500], pa.uint64()),
            "base_rtt_ns": pa.array([10_000], pa.uint64()),
            "host_rate_bps": pa.array([10_000_000_000], pa.uint64()),
        }
    ).replace_schema_metadata(meta)
    pq.write_table(run, folder / "run.parquet")
    return folder


def compare_json(a: Path, b: Path) -> list[dict]:
    out = subprocess.run(
        [str(netstep_binary()), "compare", str(a), str(b), "--by", "none", "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_compare_matches_scipy_on_random_samples(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.lognormal(0.5, 1.0, size=int(rng.integers(50, 400)))
    b = rng.lognormal(0.7, 0.8, size=int(rng.integers(50, 400)))
    result = compare_json(fake_run(tmp_path / "a", a), fake_run(tmp_path / "b", b))[0]
    expected = wasserstein_distance(a, b)
    assert result["w1"] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert result["nw1"] == pytest.approx(expected / a.mean(), rel=1e-9)
    assert (result["n_a"], result["n_b"]) == (len(a), len(b))
    p99 = (np.quantile(b, 0.99) - np.quantile(a, 0.99)) / np.quantile(a, 0.99)
    assert result["rel_err_p99"] == pytest.approx(p99, rel=1e-9)


def test_compare_of_a_constant_shift_is_the_shift(tmp_path: Path) -> None:
    a = np.linspace(1.0, 9.0, 300)
    result = compare_json(fake_run(tmp_path / "a", a), fake_run(tmp_path / "b", a + 2.5))[0]
    assert result["w1"] == pytest.approx(2.5, rel=1e-12)


def test_compare_refuses_other_schema_versions(tmp_path: Path) -> None:
    a = fake_run(tmp_path / "a", np.ones(10))
    b = fake_run(tmp_path / "b", np.ones(10), version="99")
    out = subprocess.run(
        [str(netstep_binary()), "compare", str(a), str(b)], capture_output=True, text=True
    )
    assert out.returncode == 2
    assert "schema version 99" in out.stderr


def peak_rss_mb(args: list[str]) -> float:
    proc = subprocess.Popen(args, cwd=REPO)
    _, status, usage = os.wait4(proc.pid, 0)
    assert status == 0
    return usage.ru_maxrss / 1024


def test_full_tracing_keeps_memory_bounded(tmp_path: Path) -> None:
    """Peak RSS of the traced FatTree-16/512 baseline stays within a fixed margin of the
    untraced run: trace rows stream through a bounded channel instead of accumulating."""
    scenario = str(REPO / "scenarios" / "days-baseline" / "fattree-k16-f512.toml")
    common = [str(netstep_binary()), "run", scenario, "--quiet", "--set", "traffic.0.packets=300"]
    plain = peak_rss_mb([*common, "--out", str(tmp_path / "plain")])
    traced = peak_rss_mb(
        [
            *common,
            "--out",
            str(tmp_path / "traced"),
            "--trace",
            "packet_hops,queue_samples",
            "--sample-interval",
            "100ms",
        ]
    )
    rows = pl.scan_parquet(tmp_path / "traced" / "packet_hops.parquet").select(pl.len()).collect()
    assert rows.item() > 800_000, "enough rows that accumulating them would show"
    # 900k rows x ~64 B would be ~55 MB if kept in memory; the margin allows the writer's
    # bounded batches and Parquet buffers only.
    assert traced - plain < 40, f"traced {traced:.0f} MB vs untraced {plain:.0f} MB"


def test_mm1_sojourn_from_packet_hops_matches_theory(tmp_path: Path) -> None:
    """Mean sojourn at the M/M/1 switch port, computed with Polars from packet_hops.parquet,
    agrees with 1/(mu - lambda) within a 99.9 % batch-means confidence interval."""
    out = run_netstep(
        REPO / "scenarios" / "queueing" / "mm1-rho05.toml",
        tmp_path / "mm1",
        "--trace",
        "packet_hops",
        "--set",
        'trace.nodes=["sw"]',
    )
    hops = (
        pl.scan_parquet(out / "packet_hops.parquet")
        .filter(pl.col("kind") == "data")
        .sort("packet_id")
        .select(((pl.col("depart_ns") - pl.col("arrive_ns")) / 1000).alias("sojourn_us"))
        .collect()["sojourn_us"]
        .to_numpy()
    )
    assert len(hops) == 200_000
    data = hops[len(hops) // 50 :]
    batches = np.array_split(data, 40)
    means = np.array([b.mean() for b in batches])
    half_width = 3.558 * means.std(ddof=1) / np.sqrt(len(means))
    theory = 8.0 / (1 - 0.5)
    # ns rounding of arrive/depart shifts each sample by less than 1 ns.
    assert abs(means.mean() - theory) <= half_width + 0.001, (means.mean(), theory, half_width)
