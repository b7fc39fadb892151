"""netstep against the HPCC ns-3 simulator, flow by flow, on m3's demo shards.

Each shard folder holds the simulator's config as it ran, the flows as .npy arrays (``fsize``,
``fsd``, ``fat``) and ns-3's FCTs (``fct_*.npy``, ``fct_i_*.npy``, ``fid_*.npy``); the topology
and trace files sit in the folder above. The data is public: the shards are
``data/shardN_nflows100_nhosts3_lr10Gbps/`` of github.com/netiken/m3 at commit 894cd492, the
topology and trace files ``simulation/mix_m3/{topo,trace}-pl-3.txt`` of
github.com/kwzhao/High-Precision-Congestion-Control at commit 5d3beebd (the README's "HPCC ns-3
users" section gives the layout).

For every shard this script

1. writes the flows once as the simulator's flow file (the count, then
   ``id src dst pg dport size start_s`` per flow, pg 3 and dport 100 and the start written as
   m3 writes it: ``ns / 1e9`` in shortest round-trip form) next to a copy of the config,
   unmodified, and of the topology and trace files;
2. runs ``netstep import hpcc`` on the config and ``netstep run --format hpcc-m3``;
3. pairs netstep's ``fct.txt`` with ns-3's FCTs by flow id.

Both FCTs are compared as ns-3's data stores them: ``max(fct, standalone)``, with the
simulator's standalone (ideal) FCT, which ``--format hpcc-m3`` recomputes and this script checks
against ns-3's own, flow by flow. Reported per congestion control and size bucket: p50, p90 and
p99 of both slowdowns (FCT over the standalone FCT), the normalized W1 distance between the two
slowdown distributions (ns-3 the reference) and the median of ``|log(FCT netstep / FCT ns-3)|``
over the pairs.

Usage::

    python -m netstep_analysis.hpcc_validate SHARDS_DIR [--netstep BIN] [--work DIR] [--markdown]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from .distance import normalized_w1

CC_NAMES = {1: "DCQCN", 3: "HPCC", 7: "TIMELY", 8: "DCTCP", 10: "HPCC-PINT"}
BUCKETS = [(0, 10_000, "<= 10 KB"), (10_000, 100_000, "10-100 KB"), (100_000, None, "> 100 KB")]


def write_flow_file(shard: Path, path: Path) -> None:
    """The shard's flows as the simulator's flow file (m3's form, with ids)."""
    size = np.load(shard / "fsize.npy")
    sd = np.load(shard / "fsd.npy")
    at = np.load(shard / "fat.npy")
    lines = [str(len(size))]
    for i in range(len(size)):
        lines.append(f"{i} {sd[i][0]} {sd[i][1]} 3 100 {size[i]} {repr(float(at[i]) / 1e9)}")
    path.write_text("\n".join(lines) + "\n")


def config_of(shard: Path) -> Path:
    """The shard's config file."""
    found = sorted(shard.glob("config_*.txt"))
    if len(found) != 1:
        sys.exit(f"{shard}: expected one config_*.txt, found {len(found)}")
    return found[0]


def cc_mode(config: Path) -> int:
    """The config's CC_MODE."""
    for line in config.read_text().splitlines():
        parts = line.split()
        if parts and parts[0] == "CC_MODE":
            return int(parts[1])
    return 1


def ns3_fcts(shard: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ns-3's flow ids, FCTs and standalone FCTs (ns)."""
    fid = np.load(next(shard.glob("fid_*.npy")))
    fct = np.load(next(p for p in shard.glob("fct_*.npy") if not p.name.startswith("fct_i_")))
    ideal = np.load(next(shard.glob("fct_i_*.npy")))
    return fid, fct, ideal


def read_fct_txt(path: Path) -> dict[int, tuple[int, int, int]]:
    """netstep's fct.txt (the fork's lines): id -> (size, fct, standalone)."""
    out = {}
    for line in path.read_text().splitlines():
        f = line.split()
        out[int(f[0])] = (int(f[5]), int(f[7]), int(f[8]))
    return out


def run_shard(shard: Path, netstep: str, work: Path) -> dict:
    """Imports and runs one shard; returns its paired rows."""
    work.mkdir(parents=True, exist_ok=True)
    config = config_of(shard)
    shutil.copy(config, work / config.name)
    for name in ("topo-pl-3.txt", "trace-pl-3.txt"):
        shutil.copy(shard.parent / name, work / name)
    write_flow_file(shard, work / "flows.txt")
    imported = work / "imported"
    subprocess.run(
        [netstep, "import", "hpcc", str(work / config.name), "--out", str(imported)],
        check=True,
        capture_output=True,
    )
    run = work / "run"
    subprocess.run(
        [netstep, "run", str(imported / "scenario.toml"), "--out", str(run), "--quiet"]
        + ["--format", "hpcc-m3"],
        check=True,
    )
    mine = read_fct_txt(run / "fct.txt")
    fid, fct, ideal = ns3_fcts(shard)
    size = np.load(shard / "fsize.npy")
    rows: list[tuple[int, int, int, int, int | None, int | None]] = []
    for i, f in enumerate(fid):
        got = mine.get(int(f))
        if got is None:
            rows.append((int(f), int(size[f]), int(fct[i]), int(ideal[i]), None, None))
            continue
        rows.append((int(f), int(size[f]), int(fct[i]), int(ideal[i]), got[1], got[2]))
    cc = CC_NAMES.get(cc_mode(config), str(cc_mode(config)))
    return {"shard": shard.name, "cc": cc, "rows": rows}


def compare(sel: list[tuple]) -> dict:
    """The comparison figures of paired rows (all finished in netstep)."""
    ideal = np.array([r[3] for r in sel], dtype=float)
    ns3 = np.array([r[2] for r in sel], dtype=float)
    mine = np.maximum(np.array([r[4] for r in sel], dtype=float), ideal)
    s_ns3, s_mine = ns3 / ideal, mine / ideal
    return {
        "flows": len(sel),
        "ns3": [float(np.quantile(s_ns3, q)) for q in (0.5, 0.9, 0.99)],
        "netstep": [float(np.quantile(s_mine, q)) for q in (0.5, 0.9, 0.99)],
        "nw1": normalized_w1(s_ns3, s_mine),
        "log_ratio": float(np.median(np.abs(np.log(mine / ns3)))),
    }


def summarize(results: list[dict]) -> list[dict]:
    """Per CC and size bucket (and per CC over all sizes): the comparison figures."""
    table = []
    ccs = sorted({r["cc"] for r in results})
    for cc in ccs:
        rows = [row for r in results if r["cc"] == cc for row in r["rows"]]
        for lo, hi, label in [(0, None, "all")] + BUCKETS:
            sel = [r for r in rows if r[4] is not None and r[1] > lo and (hi is None or r[1] <= hi)]
            if sel:
                table.append({"cc": cc, "bucket": label, **compare(sel)})
    return table


def per_shard(results: list[dict]) -> list[dict]:
    """Per shard over all sizes: the comparison figures."""
    table = []
    for r in results:
        sel = [row for row in r["rows"] if row[4] is not None]
        if sel:
            table.append({"shard": r["shard"], "cc": r["cc"], **compare(sel)})
    return table


def render_shards(table: list[dict]) -> str:
    """The per-shard table in markdown."""
    lines = [
        "| shard | CC | flows | nW1 | median abs log ratio |",
        "|---|---|---|---|---|",
    ]
    for r in table:
        lines.append(
            f"| {r['shard']} | {r['cc']} | {r['flows']} | {r['nw1']:.3f} | {r['log_ratio']:.3f} |"
        )
    return "\n".join(lines)


def render(table: list[dict], ideal_exact: int, ideal_total: int, missing: int) -> str:
    """The table in markdown."""
    lines = [
        "| CC | size | flows | ns-3 p50 / p90 / p99 | netstep p50 / p90 / p99 | nW1 | "
        "median abs log ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in table:
        a = " / ".join(f"{x:.2f}" for x in r["ns3"])
        b = " / ".join(f"{x:.2f}" for x in r["netstep"])
        lines.append(
            f"| {r['cc']} | {r['bucket']} | {r['flows']} | {a} | {b} | {r['nw1']:.3f} | "
            f"{r['log_ratio']:.3f} |"
        )
    lines.append("")
    lines.append(
        f"Standalone FCT equal to ns-3's for {ideal_exact} of {ideal_total} flows; "
        f"{missing} flows unfinished in netstep."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("shards", type=Path, help="folder of shard folders (m3-demo)")
    p.add_argument("--netstep", default="target/release/netstep")
    p.add_argument("--work", type=Path, help="working folder (default: a temporary one)")
    a = p.parse_args(argv)
    shards = sorted(
        (d for d in a.shards.iterdir() if d.is_dir() and d.name.startswith("shard")),
        key=lambda d: int(d.name[5:]),
    )
    if not shards:
        sys.exit(f"{a.shards}: no shard folders")
    work = a.work or Path(tempfile.mkdtemp(prefix="hpcc-validate-"))
    results, skipped = [], []
    for shard in shards:
        try:
            r = run_shard(shard, a.netstep, work / shard.name)
        except subprocess.CalledProcessError as e:
            err = (e.stderr or b"").decode().strip().splitlines()
            skipped.append(f"{shard.name}: {err[-1] if err else e}")
            continue
        results.append(r)
        print(f"{shard.name}: {r['cc']}, {len(r['rows'])} flows", file=sys.stderr)
    rows = [row for r in results for row in r["rows"]]
    exact = sum(1 for r in rows if r[5] is not None and r[5] == r[3])
    missing = sum(1 for r in rows if r[4] is None)
    print(render(summarize(results), exact, len(rows), missing))
    print()
    print(render_shards(per_shard(results)))
    for s in skipped:
        print(f"\nnot run: {s}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
