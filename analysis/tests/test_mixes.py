"""The mix comparison (``netstep_analysis.mixes``) and the m3 shard export
(``netstep_analysis.m3``), on a small cluster written here."""

from __future__ import annotations

import csv
import json
import math
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import REPO, netstep_binary

from netstep_analysis import m3, mixes


def write_reference(folder: Path) -> None:
    """A reference folder in the authors' formats: a 2-pod cluster of 2 racks of 2 hosts (2 fabs
    per pod, 2 spines per plane), a 4-rack matrix, one mix and made-up ns-3 values."""
    hosts, tors, fabs = 8, 4, 4
    link = lambda a, b, bw: {"a": a, "b": b, "bandwidth": bw, "delay": 1000}  # noqa: E731
    pods = []
    for p in range(2):
        racks = []
        for r in range(2):
            tor = hosts + 2 * p + r
            hs = [4 * p + 2 * r + i for i in range(2)]
            racks.append(
                {
                    "tor": {"id": tor, "kind": "Switch"},
                    "hosts": [{"id": h, "kind": "Host"} for h in hs],
                    "host2tor": [link(h, tor, 10_000_000_000) for h in hs],
                }
            )
        pod_fabs = [hosts + tors + 2 * p + f for f in range(2)]
        pods.append(
            {
                "fabs": [{"id": f, "kind": "Switch"} for f in pod_fabs],
                "racks": racks,
                "tor2fab": [
                    link(hosts + 2 * p + r, f, 40_000_000_000)
                    for r in range(len(racks))
                    for f in pod_fabs
                ],
            }
        )
    planes = [[hosts + tors + fabs + 2 * p + s for s in range(2)] for p in range(2)]
    cluster = {
        "planes": [[{"id": s, "kind": "Switch"} for s in plane] for plane in planes],
        "pods": pods,
        "fab2spine": [
            link(hosts + tors + 2 * p + f, s, 40_000_000_000)
            for p in range(2)
            for f in range(2)
            for s in planes[f]
        ],
    }
    (folder / "cluster_t.json").write_text(json.dumps(cluster))
    spatial = {
        "matrix": {
            "inner": [[1, 4, 2, 3], [2, 1, 5, 1], [3, 2, 1, 4], [1, 3, 2, 2]],
            "idx2name": ["a", "b", "c", "d"],
        },
        "pod2tors": {"p0": ["a", "b"], "p1": ["c", "d"]},
        "nr_pods": 2,
        "nr_racks": 4,
    }
    (folder / "spatial_t.json").write_text(json.dumps(spatial))
    mix = {
        "id": 7,
        "spatial": "x/spatial_t.json",
        "size_dist": "x/webserver-all.txt",
        "lognorm_sigma": 1.0,
        "max_load": 0.3,
        "cluster": "spec/cluster_t.json",
        "bfsz": 40.0,
        "window": 18000,
        "enable_pfc": 1.0,
        "cc": "dctcp",
        "param_1": 12.5,
        "param_2": 0.0,
    }
    (folder / "mixes.json").write_text(json.dumps([mix]))
    (folder / "fig8_ns3_p99.csv").write_text(
        "id,matrix,size_dist,sigma,max_load_spec,oversub,window,enable_pfc,dctcp_k_kb,"
        "ns3_p99_all,ns3_p99_lt1KB,ns3_p99_1-10KB,ns3_p99_10-50KB,ns3_p99_ge50KB,ns3_wall_s\n"
        "7,Matrix T,WebServer,1.0,0.3,1-to-1,18000,1,12,4.0,3.0,2.5,3.5,5.0,1\n"
    )


def test_buckets_are_left_closed_and_p99_is_numpys_linear() -> None:
    sizes = [999, 1000, 9999, 10000, 49999, 50000] * 20
    flows = pl.DataFrame(
        {
            "size_bytes": sizes,
            "start_ns": list(range(len(sizes))),
            "slowdown": [float(i % 17 + 1) for i in range(len(sizes))],
        }
    )
    stats = mixes.bucket_stats(flows, batches=4)
    assert [stats[b[0]][2] for b in mixes.BUCKETS] == [120, 20, 40, 40, 20]
    x = flows.filter(pl.col("size_bytes") >= 50_000)["slowdown"].to_numpy()
    assert stats[">= 50 KB"][0] == float(np.percentile(x, 99))
    per = [np.percentile(b, 99) for b in np.array_split(flows["slowdown"].to_numpy(), 4)]
    assert stats["all"][1] == pytest.approx(np.std(per, ddof=1) / 2)


def test_the_comparison_runs_a_mix_natively_and_imported(tmp_path: Path) -> None:
    binary = netstep_binary()
    ref = tmp_path / "ref"
    ref.mkdir()
    write_reference(ref)
    out = tmp_path / "out"
    mixes.main(
        [
            str(ref),
            "--flows",
            "400",
            "--out",
            str(out),
            "--netstep",
            str(binary),
            "--check-import",
            "--batches",
            "4",
        ]
    )
    with open(out / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert {(r["form"], r["bucket"]) for r in rows} == {
        (form, b[0]) for form in ("native", "imported") for b in mixes.BUCKETS
    }
    for r in rows:
        if r["bucket"] == "all":
            assert int(r["flows"]) > 350
            value, ref_value = float(r["netstep_p99"]), float(r["ns3_p99"])
            assert value >= 1.0 and ref_value == 4.0
            assert float(r["rel_error"]) == pytest.approx((value - 4.0) / 4.0)
    # The native scenario is the cluster kind with the imported settings (PFC on here).
    native = (out / "mix7" / "native.toml").read_text()
    assert 'kind = "cluster"' in native and "pfc = {" in native
    assert "| 7 (Matrix T, WebServer, 1-to-1, PFC) |" in (out / "results.md").read_text()


def run_example(out: Path, flows: int, *args: str) -> Path:
    """Runs the m3-mix example with `flows` arrivals into `out` (extra `args` to `netstep run`)."""
    subprocess.run(
        [
            str(netstep_binary()),
            "run",
            str(REPO / "scenarios/workloads/m3-mix.toml"),
            "--out",
            str(out),
            "--quiet",
            "--set",
            f"traffic.0.flows={flows}",
            *args,
        ],
        check=True,
    )
    return out


def test_an_m3_shard_round_trips(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run_example(run, 300, "--format", "hpcc-m3")
    shard = tmp_path / "shard"
    m3.export(run, shard, "_topo-x_s0")
    flows = pl.read_parquet(run / "flows.parquet")
    n = len(flows)
    for name, dtype, shape in [
        ("fsize.npy", np.int64, (n,)),
        ("fsd.npy", np.int32, (n, 2)),
        ("fat.npy", np.int64, (n,)),
    ]:
        a = np.load(shard / name)
        assert a.dtype == dtype and a.shape == shape, name
    back = m3.load(shard, "_topo-x_s0")
    done = flows.filter(pl.col("completed")).sort(["start_ns", "flow_id"])
    assert back["flow_id"].to_list() == done["flow_id"].to_list()
    assert back["src"].to_list() == done["src"].to_list()
    expected = np.maximum(done["fct_ns"].to_numpy(), done["standalone_fct_ns"].to_numpy())
    assert back["fct_ns"].to_list() == expected.tolist()
    assert back["slowdown"].to_numpy() == pytest.approx(expected / back["ideal_fct_ns"].to_numpy())
    assert not math.isnan(float(back["slowdown"].to_numpy().max()))


def test_an_m3_export_needs_the_standalone_fct_and_matching_ids(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run_example(run, 50)
    with pytest.raises(ValueError, match="--format hpcc-m3"):
        m3.export(run, tmp_path / "shard")
    run2 = tmp_path / "run2"
    run_example(run2, 50, "--format", "hpcc-m3")
    lines = (run2 / "fct.txt").read_text().splitlines()
    f = lines[0].split()
    f[1] = "0b00ff01"  # node 255
    (run2 / "fct.txt").write_text("\n".join([" ".join(f), *lines[1:]]) + "\n")
    with pytest.raises(ValueError, match="fct.txt:1: flow"):
        m3.export(run2, tmp_path / "shard2")
