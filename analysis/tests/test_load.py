"""Run folders read back with Polars with the documented types."""

from __future__ import annotations

import polars as pl
import pytest
from conftest import REPO, run_netstep

import netstep_analysis as na


def test_tables_have_documented_types(small_run):
    frames = na.load(small_run)
    flows = frames["flows"].collect()
    assert flows.schema["flow_id"] == pl.UInt32
    assert flows.schema["transport"] == pl.Categorical
    assert flows.schema["size_bytes"] == pl.UInt64
    assert flows.schema["slowdown"] == pl.Float64
    assert flows.schema["completed"] == pl.Boolean
    assert flows.height > 0
    done = flows.filter(pl.col("completed"))
    # Computed columns agree with each other.
    assert (done["fct_ns"] == done["end_ns"] - done["start_ns"]).all()
    assert (done["slowdown"] >= 0.99).all()
    run = frames["run"].collect()
    assert run.height == 1
    assert run["flows"][0] == flows.height
    links = frames["links"].collect()
    assert links.schema["node_kind"] == pl.Categorical
    assert links["tx_packets"].sum() == run["packet_hops"][0]
    assert na.schema_version(small_run) == na.SCHEMA_VERSION


def test_sweep_layout_reads_with_hive_partitioning(tmp_path):
    scenario = REPO / "scenarios" / "days-baseline" / "fattree-k4-f8.toml"
    for seed in (1, 2):
        run_netstep(
            scenario,
            tmp_path / f"seed={seed}",
            "--set",
            f"simulation.seed={seed}",
            "--set",
            "traffic.0.packets=3",
        )
    flows = na.load(tmp_path)["flows"].collect()
    assert sorted(flows["seed"].unique().to_list()) == [1, 2]
    assert flows.height == 16


def test_folder_without_a_run_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a netstep run"):
        na.load(tmp_path)


def test_cc_samples_load_with_their_documented_types(tmp_path):
    out = run_netstep(
        REPO / "scenarios" / "transports" / "dctcp.toml",
        tmp_path / "dctcp",
        "--set",
        'traffic.0.flows.0.size="2MB"',
        "--set",
        'traffic.0.flows.1.size="2MB"',
        "--trace",
        "cc_samples",
        "--sample-interval",
        "50us",
    )
    cc = na.load(out)["cc_samples"].collect()
    assert cc.schema["cwnd_segments"] == pl.Float64
    assert cc.schema["alpha"] == pl.Float64
    assert cc.schema["srtt_ns"] == pl.UInt64
    assert sorted(cc["flow_id"].unique().to_list()) == [0, 1]
    # DCTCP samples its alpha, between 0 and 1; the RTT is at least the 60 us base RTT.
    assert cc["alpha"].is_between(0.0, 1.0).all()
    min_srtt = cc["srtt_ns"].drop_nulls().min()
    assert isinstance(min_srtt, int) and min_srtt >= 60_000
