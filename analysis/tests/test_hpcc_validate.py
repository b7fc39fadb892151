"""hpcc_validate end to end: a shard folder rebuilt from the Rust test's fixture (m3's shard 1,
re-expressed there with its source) goes through import, run and the flow-by-flow table."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
from conftest import REPO, netstep_binary

from netstep_analysis import hpcc_validate

FIXTURES = REPO / "crates" / "netstep" / "tests" / "fixtures" / "hpcc-m3"


def make_shard(root: Path) -> None:
    """m3's folder layout: shard1/ with the config and .npy arrays, the topology beside it."""
    fixture = tomllib.loads((FIXTURES / "shards.toml").read_text())
    root.mkdir(parents=True)
    (root / "topo-pl-3.txt").write_text(fixture["topology"])
    (root / "trace-pl-3.txt").write_text("4\n0 1 2 3\n")
    shard = root / "shard1"
    shard.mkdir()
    config = "".join(f"{k} {v}\n" for k, v in fixture["shard1"]["config"])
    (shard / "config_topo-pl-3_flows_s0.txt").write_text(config)
    rows = np.array(
        [
            [int(x) for x in line.split(",")]
            for line in (FIXTURES / "shard1.csv").read_text().splitlines()
            if line and not line.startswith(("#", "id,"))
        ]
    )
    np.save(shard / "fsize.npy", rows[:, 3])
    np.save(shard / "fsd.npy", rows[:, 1:3])
    np.save(shard / "fat.npy", rows[:, 4])
    np.save(shard / "fid_topo-pl-3_s0.npy", rows[:, 0])
    np.save(shard / "fct_topo-pl-3_s0.npy", rows[:, 5])
    np.save(shard / "fct_i_topo-pl-3_s0.npy", rows[:, 6])


def test_a_shard_is_imported_run_and_compared(tmp_path, capsys):
    make_shard(tmp_path / "shards")
    code = hpcc_validate.main(
        [
            str(tmp_path / "shards"),
            "--netstep",
            str(netstep_binary()),
            "--work",
            str(tmp_path / "w"),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "| DCQCN | all | 200 |" in out, out
    assert "Standalone FCT equal to ns-3's for 200 of 200 flows; 0 flows unfinished" in out, out
    table = hpcc_validate.summarize(
        [
            hpcc_validate.run_shard(
                tmp_path / "shards" / "shard1", str(netstep_binary()), tmp_path / "w2"
            )
        ]
    )
    overall = next(r for r in table if r["bucket"] == "all")
    # The targets; this shard is well within them (README table).
    assert overall["nw1"] <= 0.05 and overall["log_ratio"] <= 0.03, overall
