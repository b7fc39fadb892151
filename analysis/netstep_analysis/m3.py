"""A netstep run as m3's data shards hold a simulation, and those shards read back.

m3 (github.com/netiken/m3, ``util/dataset.py``) trains and evaluates on folders
``data/shard{N}_nflows{n}_nhosts{h}_lr10Gbps/`` of NumPy arrays written by the HPCC simulator's
scripts (``traffic_gen/traffic_gen_synthetic.py`` and ``analysis/fct_to_file.py`` of
github.com/kwzhao/High-Precision-Congestion-Control, branch m3):

=============================  =======  ======  ===============================================
file                           dtype    shape   meaning
=============================  =======  ======  ===============================================
``fsize.npy``                  int64    (n,)    payload bytes, by flow id
``fsd.npy``                    int32    (n, 2)  source and destination node ids, by flow id
``fat.npy``                    int64    (n,)    arrival (start) time, ns, by flow id
``fct{topo}.npy``              int64    (m,)    FCT, ns, as ``max(FCT, standalone FCT)``
``fct_i{topo}.npy``            int64    (m,)    the simulator's standalone (ideal) FCT, ns
``fid{topo}.npy``              int64    (m,)    the flow id of each FCT entry
=============================  =======  ======  ===============================================

The last three hold the completed flows (``fct.txt``'s lines) in start order (ties by flow id),
``topo`` being the run's suffix (m3's demo shards: ``_topo-pl-3_s0``); m3 computes a slowdown
as ``fct / fct_i``. :func:`export` writes a run made with ``netstep run --format hpcc-m3`` (or
``hpcc``: its ``flows.parquet`` then has the simulator's standalone FCT) in that layout, so an
estimator trains on netstep runs unchanged; :func:`load` reads a shard (netstep's or m3's).

Node ids are netstep's node indices. For a scenario imported by ``netstep import hpcc`` they
are the simulator's ids when its topology file numbers the hosts before the switches (as m3's
and Parsimon's do); when the run folder has ``fct.txt`` (``--format hpcc-m3``) every completed
flow's source and destination in it are checked against them, and a run whose ids differ is
refused rather than written with ids m3 would misread.

Usage::

    python -m netstep_analysis.m3 export RUN DIR [--topo _topo_s0]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl


def _ip_id(hex_ip: str) -> int:
    """The simulator's node id of an address written ``%08x`` (``11.(id/256).(id%256).1``)."""
    ip = int(hex_ip, 16)
    return ((ip >> 8) & 0xFFFF) if ((ip >> 24) == 0x0B) else -1


def _check_ids(run: Path, flows: pl.DataFrame) -> None:
    """Refuses a run whose ``fct.txt`` (m3's lines) names nodes by other ids than netstep's."""
    fct = run / "fct.txt"
    if not fct.exists():
        return
    by_id = {r[0]: (r[1], r[2]) for r in flows.select("flow_id", "src", "dst").iter_rows()}
    for n, line in enumerate(fct.read_text().splitlines(), 1):
        f = line.split()
        if len(f) != 9:
            return  # upstream lines (no flow id): nothing to pair by
        want = by_id.get(int(f[0]))
        got = (_ip_id(f[1]), _ip_id(f[2]))
        if want is not None and want != got:
            raise ValueError(
                f"{fct}:{n}: flow {f[0]} runs from node {got[0]} to {got[1]} in the simulator's "
                f"ids, netstep's indices are {want[0]} and {want[1]}; m3's arrays would name "
                "other hosts (a topology whose switches are numbered before its hosts)"
            )


def export(run: str | Path, out: str | Path, topo: str = "_topo_s0") -> list[Path]:
    """Writes run folder ``run`` as an m3 shard in ``out``; returns the files written."""
    run, out = Path(run), Path(out)
    flows = pl.read_parquet(run / "flows.parquet").sort("flow_id")
    if "standalone_fct_ns" not in flows.columns:
        raise ValueError(
            f"{run / 'flows.parquet'} has no standalone_fct_ns: run the scenario with "
            "`netstep run --format hpcc-m3` so the simulator's ideal FCT is written"
        )
    ids = flows["flow_id"].to_numpy()
    if not np.array_equal(ids, np.arange(len(ids))):
        raise ValueError(f"{run / 'flows.parquet'}: flow ids are not 0..n-1")
    _check_ids(run, flows)
    if flows["start_ns"].null_count():
        raise ValueError(f"{run / 'flows.parquet'}: a flow never started (waits for others)")
    done = flows.filter(pl.col("completed") & (pl.col("size_bytes") > 0)).sort(
        ["start_ns", "flow_id"]
    )
    fct = done["fct_ns"].to_numpy().astype(np.int64)
    ideal = done["standalone_fct_ns"].to_numpy().astype(np.int64)
    arrays = {
        "fsize.npy": flows["size_bytes"].to_numpy().astype(np.int64),
        "fsd.npy": np.stack([flows["src"].to_numpy(), flows["dst"].to_numpy()], 1).astype(np.int32),
        "fat.npy": flows["start_ns"].to_numpy().astype(np.int64),
        f"fct{topo}.npy": np.maximum(fct, ideal),
        f"fct_i{topo}.npy": ideal,
        f"fid{topo}.npy": done["flow_id"].to_numpy().astype(np.int64),
    }
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, array in arrays.items():
        np.save(out / name, array)
        written.append(out / name)
    return written


def load(shard: str | Path, topo: str = "_topo_s0") -> pl.DataFrame:
    """An m3 shard's completed flows: ``flow_id``, ``src``, ``dst``, ``size_bytes``,
    ``start_ns``, ``fct_ns``, ``ideal_fct_ns`` and m3's ``slowdown`` (``fct / fct_i``), in the
    shard's order."""
    shard = Path(shard)
    fid = np.load(shard / f"fid{topo}.npy")
    sd = np.load(shard / "fsd.npy")
    fct = np.load(shard / f"fct{topo}.npy")
    ideal = np.load(shard / f"fct_i{topo}.npy")
    return pl.DataFrame(
        {
            "flow_id": fid,
            "src": sd[fid, 0],
            "dst": sd[fid, 1],
            "size_bytes": np.load(shard / "fsize.npy")[fid],
            "start_ns": np.load(shard / "fat.npy")[fid],
            "fct_ns": fct,
            "ideal_fct_ns": ideal,
            "slowdown": fct / ideal,
        }
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("export", help="write a run folder as an m3 shard")
    e.add_argument("run", type=Path)
    e.add_argument("out", type=Path)
    e.add_argument("--topo", default="_topo_s0", help="suffix of the FCT arrays' names")
    a = p.parse_args(argv)
    for path in export(a.run, a.out, a.topo):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
