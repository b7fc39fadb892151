"""The m3 / Parsimon evaluation mixes on netstep beside ns-3's published p99 slowdowns.

A mix (m3, SIGCOMM 2024, fig. 8; Parsimon, NSDI 2023) is a 256-host cluster, a rack-level
traffic matrix, a Facebook flow-size distribution, log-normal arrivals at a target load of the
busiest link, and DCTCP settings (window, marking threshold K, buffer, PFC on or off) for the
HPCC ns-3 simulator's m3 fork. For each mix this script

1. writes the simulator's config for it (the keys the fork's ``run.py`` writes for DCTCP,
   :data:`CONFIG`), its topology file (from the mix's cluster file, as the authors'
   ``ns3.rs`` writes it) and a one-flow flow file, and imports them with ``netstep import
   hpcc``: the transport, NIC, switch and PFC settings netstep runs are the importer's
   mapping of the simulator's config;
2. replaces the imported topology by the native ``cluster`` kind and the flows by a
   ``rack_matrix`` block (the mix's matrix file, sizes, sigma, ``max_load`` under Parsimon's
   route model, ``--flows`` arrivals from 1 s), and runs it with ``--format hpcc-m3``, which
   adds the simulator's standalone FCT of every flow;
3. computes the slowdown as m3 does (FCT over the simulator's standalone FCT, not clamped,
   completed flows only) and its p99 (linear interpolation, as numpy) over all flows and per
   size bucket (``[0, 1 KB)``, ``[1, 10 KB)``, ``[10, 50 KB)``, ``>= 50 KB``), with a
   batch-means standard error (the flows in start order cut into ``--batches`` batches: the
   standard deviation of the batches' p99 over the square root of their number);
4. prints the table beside ns-3's p99 for 10,000,000 flows and the relative error, and writes
   it as ``results.csv`` and ``results.md`` into ``--out``.

With ``--check-import`` every mix's flows are also written as the simulator's own flow file and
run the way a user with the simulator's three files runs them (``netstep import hpcc`` of the
config, topology and flow file, ``netstep run --format hpcc-m3``), and both p99s are shown:
the native form and the imported one differ only in the port numbering (ECMP picks).

A run of fewer than 10,000,000 flows is a sample of the same process started from an empty
network; the table says how many flows it had.

The reference folder (``REFERENCE``) holds public data: ``mixes.json`` (the mixes as the
authors' spec lists them: github.com/netiken/parsimon-eval branch m3,
``expts/fig_8/spec/all_dctcp.mix_full.json``), the cluster files it names
(``expts/fig_8/spec/cluster_{1,2,4}_to_1.json``), the spatial files it names
(``workload/spatials/cluster_{a,b,c}_2_16.json``) and ``fig8_ns3_p99.csv`` (per mix ``id`` and
``ns3_p99_all``, ``ns3_p99_lt1KB``, ``ns3_p99_1-10KB``, ``ns3_p99_10-50KB``, ``ns3_p99_ge50KB``:
github.com/uw-polestar/parsimon-eval commit 4d13696,
``expts/fig_8/analysis/config_gen_mlsys-new_e466_s2_p500_l100_t0_nosamp.npz``,
``res_final[mix, bucket, 0]``). The size distributions are the repository's
``datasets/fb_*.toml`` (re-expressed from parsimon-eval's ``workload/distributions/facebook/``),
or Parsimon's own files with ``--sizes DIR``.

Usage::

    python -m netstep_analysis.mixes REFERENCE --flows 100000 --out out/mixes [--mixes 15,58]
        [--netstep BIN] [--threads 2] [--batches 10] [--check-import] [--sizes DIR]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from .sweep import netstep_binary

BUCKETS = [
    ("all", 0, None, "ns3_p99_all"),
    ("< 1 KB", 0, 1_000, "ns3_p99_lt1KB"),
    ("1-10 KB", 1_000, 10_000, "ns3_p99_1-10KB"),
    ("10-50 KB", 10_000, 50_000, "ns3_p99_10-50KB"),
    (">= 50 KB", 50_000, None, "ns3_p99_ge50KB"),
]
SIZES = {"webserver": "fb_webserver", "hadoop": "fb_hadoop", "cachefollower": "fb_cachefollower"}

# The m3 fork's config for DCTCP as its `simulation/run.py` writes it
# (github.com/kwzhao/High-Precision-Congestion-Control, commit 5d3beeb, branch m3): CC_MODE 8,
# KMIN = KMAX = K KB at 10 Gb/s and 4 K at 40 Gb/s, PMAX 1, BUFFER_SIZE = bfsz x 10 (KB),
# FIXED_WIN = window, BASE_RTT 14,400 ns, ACK_HIGH_PRIO 1, 1,000 B payload.
CONFIG = """ENABLE_QCN 1
ENABLE_PFC {pfc}
USE_DYNAMIC_PFC_THRESHOLD 1
PACKET_PAYLOAD_SIZE 1000
TOPOLOGY_FILE topology.txt
FLOW_FILE flows.txt
TRACE_FILE trace.txt
TRACE_OUTPUT_FILE mix.tr
FCT_OUTPUT_FILE fct.txt
PFC_OUTPUT_FILE pfc.txt
SIMULATOR_STOP_TIME {stop}
CC_MODE 8
ALPHA_RESUME_INTERVAL 1
RATE_DECREASE_INTERVAL 4
CLAMP_TARGET_RATE 0
RP_TIMER 300
EWMA_GAIN 0.0625
FAST_RECOVERY_TIMES 1
RATE_AI 10Mb/s
RATE_HAI 10Mb/s
MIN_RATE 1000Mb/s
MAX_RATE 10000Mb/s
DCTCP_RATE_AI 615Mb/s
TIMELY_T_HIGH 50000
TIMELY_T_LOW 10000
TIMELY_BETA 0.8
ERROR_RATE_PER_LINK 0.0000
L2_CHUNK_SIZE 4000
L2_ACK_INTERVAL 1
L2_BACK_TO_ZERO 0
HAS_WIN 1
GLOBAL_T 1
VAR_WIN 1
FAST_REACT 0
U_TARGET 0.95
MI_THRESH 0
INT_MULTI 1
MULTI_RATE 0
SAMPLE_FEEDBACK 0
PINT_LOG_BASE 1.05
PINT_PROB 1.0
RATE_BOUND 1
ACK_HIGH_PRIO 1
LINK_DOWN 0 0 0
ENABLE_TRACE 0
KMAX_MAP 2 10000000000 {k} 40000000000 {k4}
KMIN_MAP 2 10000000000 {k} 40000000000 {k4}
PMAX_MAP 2 10000000000 1.00 40000000000 1.00
BUFFER_SIZE {buffer}
FIXED_WIN {window}
BASE_RTT 14400
"""


@dataclass
class Shape:
    """A regular cluster file's shape and link parameters."""

    pods: int
    racks_per_pod: int
    hosts_per_rack: int
    fabs_per_pod: int
    spines_per_plane: int
    host_bps: int
    fabric_bps: int
    delay_ns: int
    links: list[dict] = field(default_factory=list)
    switches: list[int] = field(default_factory=list)


def read_cluster(path: Path) -> Shape:
    """Parsimon's cluster file as a :class:`Shape`; refuses one that is not regular."""
    c = json.loads(path.read_text())
    pods = c["pods"]
    racks = [r for p in pods for r in p["racks"]]
    links = list(c["fab2spine"])
    for p in pods:
        links += p["tor2fab"]
        for r in p["racks"]:
            links += r["host2tor"]
    host_links = [lk for r in racks for lk in r["host2tor"]]
    fabric = [lk for lk in links if lk not in host_links]
    rates = {lk["bandwidth"] for lk in fabric}
    delays = {lk["delay"] for lk in links}
    host_rates = {lk["bandwidth"] for lk in host_links}
    if len(rates) != 1 or len(delays) != 1 or len(host_rates) != 1:
        raise ValueError(f"{path}: links of one tier differ in rate or delay")
    shape = Shape(
        pods=len(pods),
        racks_per_pod=len(pods[0]["racks"]),
        hosts_per_rack=len(racks[0]["hosts"]),
        fabs_per_pod=len(pods[0]["fabs"]),
        spines_per_plane=len(c["planes"][0]),
        host_bps=host_rates.pop(),
        fabric_bps=rates.pop(),
        delay_ns=delays.pop(),
        links=links,
        switches=[n["id"] for pl_ in c["planes"] for n in pl_]
        + [n["id"] for p in pods for n in p["fabs"]]
        + [r["tor"]["id"] for r in racks],
    )
    return shape


def topology_txt(shape: Shape) -> str:
    """The simulator's topology file, as the authors' ``ns3.rs`` writes it."""
    hosts = shape.pods * shape.racks_per_pod * shape.hosts_per_rack
    lines = [
        f"{hosts + len(shape.switches)} {len(shape.switches)} {len(shape.links)}",
        " ".join(map(str, shape.switches)),
    ]
    lines += [f"{lk['a']} {lk['b']} {lk['bandwidth']}bps {lk['delay']}ns 0" for lk in shape.links]
    return "\n".join(lines) + "\n"


def config_txt(mix: dict, stop_s: int) -> str:
    """The m3 fork's config for ``mix`` (:data:`CONFIG`)."""
    k = int(mix["param_1"])
    return CONFIG.format(
        pfc=int(mix["enable_pfc"]),
        stop=stop_s,
        k=k,
        k4=4 * k,
        buffer=int(mix["bfsz"] * 10),
        window=int(mix["window"]),
    )


def inline(value: object) -> str:
    """A TOML inline value."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {inline(v)}" for k, v in value.items()) + " }"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


def tier_tables(imported: dict, shape: Shape) -> tuple[dict, dict]:
    """The imported scenario's host and fabric link settings: the switch side of a host link
    (the ToR's egress to the host) and a fabric link's."""
    host = fabric = None
    n_hosts = shape.pods * shape.racks_per_pod * shape.hosts_per_rack
    for lk in imported["topology"]["links"]:
        a, b = int(lk["a"]), int(lk["b"])
        base = {k: lk[k] for k in ("rate", "delay", "buffer") if k in lk}
        if host is None and min(a, b) < n_hosts:
            side = "b_to_a" if a < n_hosts else "a_to_b"
            host = base | lk.get(side, {})
        elif fabric is None and min(a, b) >= n_hosts:
            fabric = base | lk.get("a_to_b", {})
    if host is None or fabric is None:
        raise ValueError("the imported topology has no host link or no fabric link")
    return host, fabric


def native_scenario(
    imported_text: str, mix: dict, shape: Shape, matrix: Path, sizes: Path, flows: int
) -> str:
    """The imported scenario with the native cluster topology and ``rack_matrix`` traffic."""
    imported = tomllib.loads(imported_text)
    host, fabric = tier_tables(imported, shape)
    kept, skip = [], False
    for line in imported_text.splitlines():
        if line.startswith("["):
            skip = line.strip() in ("[topology]", "[[traffic]]")
        if line.startswith("duration = ") and not skip:
            line = 'duration = "100000s"'
        if not skip:
            kept.append(line)
    fmt = "parsimon" if sizes.suffix == ".txt" else "netstep"
    return (
        "\n".join(kept)
        + f"""

[topology]
kind = "cluster"
pods = {shape.pods}
racks_per_pod = {shape.racks_per_pod}
hosts_per_rack = {shape.hosts_per_rack}
fabs_per_pod = {shape.fabs_per_pod}
spines_per_plane = {shape.spines_per_plane}
links = {inline(fabric)}
host_links = {inline(host)}

[[traffic]]
kind = "rack_matrix"
matrix = {json.dumps(str(matrix))}
cdf = {json.dumps(str(sizes))}
cdf_format = "{fmt}"
arrivals = "lognormal"
sigma = {float(mix["lognorm_sigma"])!r}
max_load = {float(mix["max_load"])!r}
load_model = "parsimon"
flows = {flows}
start = "1s"
"""
    )


def p99(x: np.ndarray) -> float:
    """The 99th percentile with linear interpolation (numpy's default, as m3's analysis)."""
    return float(np.percentile(x, 99)) if len(x) else math.nan


def bucket_stats(flows: pl.DataFrame, batches: int) -> dict[str, tuple[float, float, int]]:
    """Per bucket: p99 slowdown, its batch-means standard error and the flow count.
    ``flows`` has ``size_bytes``, ``start_ns`` and ``slowdown`` of completed flows."""
    flows = flows.sort("start_ns")
    out = {}
    for name, lo, hi, _ in BUCKETS:
        sel = flows.filter(pl.col("size_bytes") >= lo)
        if hi is not None:
            sel = sel.filter(pl.col("size_bytes") < hi)
        x = sel["slowdown"].to_numpy()
        per = [p99(b) for b in np.array_split(x, batches)] if len(x) >= batches else []
        se = float(np.std(per, ddof=1) / math.sqrt(batches)) if len(per) > 1 else math.nan
        out[name] = (p99(x), se, len(x))
    return out


def completed_slowdowns(run: Path) -> pl.DataFrame:
    """m3's slowdown of every completed flow of a run written with ``--format hpcc-m3``
    (read lazily: only the columns it needs, so a 10 M-flow table costs a few hundred MB)."""
    f = pl.scan_parquet(run / "flows.parquet")
    return (
        f.filter(pl.col("completed") & (pl.col("size_bytes") > 0))
        .select(
            "flow_id",
            "src",
            "dst",
            "size_bytes",
            "start_ns",
            (pl.col("fct_ns") / pl.col("standalone_fct_ns")).alias("slowdown"),
        )
        .collect()
    )


def netstep(binary: Path, *args: str | Path) -> None:
    """Runs netstep, raising with its stderr on failure."""
    r = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"netstep {' '.join(map(str, args))}: {r.stderr.strip()}")


def flow_file(flows: pl.DataFrame) -> str:
    """The simulator's flow file (m3's form) for netstep's generated flows."""
    lines = [str(len(flows))]
    for i, (src, dst, size, start) in enumerate(
        flows.select("src", "dst", "size_bytes", "start_ns").iter_rows()
    ):
        lines.append(f"{i} {src} {dst} 3 100 {size} {start / 1e9!r}")
    return "\n".join(lines) + "\n"


@dataclass
class MixRun:
    """One mix run: its statistics per bucket, flows, wall time and packet-hops."""

    mix: dict
    stats: dict[str, tuple[float, float, int]]
    flows: int
    wall_s: float
    hops: int


def sizes_file(mix: dict, sizes_dir: Path | None) -> Path:
    """The mix's size distribution: Parsimon's file in ``sizes_dir``, else the repository's
    re-expressed TOML."""
    name = Path(mix["size_dist"]).name.removesuffix("-all.txt")
    if name not in SIZES:
        raise ValueError(f"mix {mix['id']}: unknown size distribution {mix['size_dist']!r}")
    if sizes_dir is not None:
        return (sizes_dir / f"{name}-all.txt").resolve()
    return (Path(__file__).resolve().parents[2] / "datasets" / f"{SIZES[name]}.toml").resolve()


def import_files(folder: Path, mix: dict, shape: Shape, flows_text: str) -> Path:
    """Writes the simulator's config, topology, flow and trace files into ``folder`` and
    imports them; returns the imported scenario."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.txt").write_text(config_txt(mix, stop_s=100_000))
    (folder / "topology.txt").write_text(topology_txt(shape))
    (folder / "flows.txt").write_text(flows_text)
    (folder / "trace.txt").write_text("0\n")
    return folder / "imported" / "scenario.toml"


def run_stats(run: Path, mix: dict, batches: int) -> MixRun:
    """Statistics of a finished run folder."""
    flows = completed_slowdowns(run)
    meta = pl.read_parquet(run / "run.parquet").row(0, named=True)
    return MixRun(
        mix, bucket_stats(flows, batches), len(flows), meta["wall_seconds"], meta["packet_hops"]
    )


def run_mix(binary: Path, ref: Path, mix: dict, out: Path, a: argparse.Namespace) -> MixRun:
    """Imports the mix's simulator config, runs its native form; returns its statistics."""
    shape = read_cluster(ref / Path(mix["cluster"]).name)
    folder = out / f"mix{mix['id']}"
    one = "1\n0 0 1 3 100 1000 1\n"
    scenario = import_files(folder / "hpcc", mix, shape, one)
    netstep(binary, "import", "hpcc", folder / "hpcc" / "config.txt", "--out", scenario.parent)
    text = native_scenario(
        scenario.read_text(),
        mix,
        shape,
        (ref / Path(mix["spatial"]).name).resolve(),
        sizes_file(mix, a.sizes),
        a.flows,
    )
    (folder / "native.toml").write_text(text)
    netstep(
        binary,
        "run",
        folder / "native.toml",
        "--out",
        folder / "run",
        "--format",
        "hpcc-m3",
        "--threads",
        str(a.threads),
        "--quiet",
    )
    return run_stats(folder / "run", mix, a.batches)


def run_imported(binary: Path, ref: Path, mix: dict, out: Path, a: argparse.Namespace) -> MixRun:
    """Runs the native run's own flows as the simulator's files, imported unmodified."""
    shape = read_cluster(ref / Path(mix["cluster"]).name)
    folder = out / f"mix{mix['id']}"
    flows = pl.read_parquet(folder / "run" / "flows.parquet").sort("flow_id")
    scenario = import_files(folder / "hpcc-flows", mix, shape, flow_file(flows))
    netstep(
        binary, "import", "hpcc", folder / "hpcc-flows" / "config.txt", "--out", scenario.parent
    )
    netstep(
        binary,
        "run",
        scenario,
        "--out",
        folder / "run-imported",
        "--format",
        "hpcc-m3",
        "--threads",
        str(a.threads),
        "--quiet",
    )
    return run_stats(folder / "run-imported", mix, a.batches)


def describe(mix: dict, ns3: dict) -> str:
    """The mix in a few words."""
    pfc = "PFC" if int(mix["enable_pfc"]) else "no PFC"
    return f"{ns3['matrix']}, {ns3['size_dist']}, {ns3['oversub']}, {pfc}"


def rows_of(run: MixRun, ns3: dict, form: str) -> list[dict]:
    """One result row per bucket."""
    rows = []
    for name, _, _, column in BUCKETS:
        ref = float(ns3[column])
        value, se, n = run.stats[name]
        rows.append(
            {
                "mix": run.mix["id"],
                "form": form,
                "bucket": name,
                "flows": n,
                "ns3_p99": ref,
                "netstep_p99": value,
                "se": se,
                "rel_error": (value - ref) / ref,
                "wall_s": run.wall_s,
                "packet_hops": run.hops,
            }
        )
    return rows


def render(rows: list[dict], ns3: dict[int, dict], mixes: dict[int, dict]) -> str:
    """The markdown table: one line per mix and form, ns-3 / netstep ± se (error) per bucket."""
    head = "| mix | flows | " + " | ".join(b[0] for b in BUCKETS) + " | wall |"
    lines = [head, "|" + "---|" * (len(BUCKETS) + 3)]
    keys = sorted({(r["mix"], r["form"]) for r in rows}, key=lambda k: (k[0], k[1] != "native"))
    for mix_id, form in keys:
        cells = {r["bucket"]: r for r in rows if (r["mix"], r["form"]) == (mix_id, form)}
        first = cells["all"]
        label = f"{mix_id} ({describe(mixes[mix_id], ns3[mix_id])})"
        if form != "native":
            label += f", {form}"
        out = [label, f"{first['flows']:,}"]
        for name, *_ in BUCKETS:
            c = cells[name]
            out.append(
                f"{c['ns3_p99']:.2f} / {c['netstep_p99']:.2f} ± {c['se']:.2f} "
                f"({c['rel_error']:+.0%})"
            )
        out.append(f"{first['wall_s']:.0f} s")
        lines.append("| " + " | ".join(out) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "reference",
        type=Path,
        help="folder with mixes.json, fig8_ns3_p99.csv, the cluster and spatial files",
    )
    p.add_argument("--flows", type=int, default=100_000, help="arrivals per mix")
    p.add_argument("--out", type=Path, default=Path("out/mixes"))
    p.add_argument("--mixes", help="comma-separated mix ids (default: every mix of the CSV)")
    p.add_argument("--netstep", help="netstep binary (default: $NETSTEP_BIN or PATH)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batches", type=int, default=10)
    p.add_argument(
        "--sizes",
        type=Path,
        help="folder of Parsimon's {webserver,hadoop,"
        "cachefollower}-all.txt (default: the repository's datasets/fb_*.toml)",
    )
    p.add_argument(
        "--check-import",
        action="store_true",
        help="also run each mix's flows as the simulator's files, imported",
    )
    a = p.parse_args(argv)
    binary = netstep_binary(a.netstep)
    with open(a.reference / "fig8_ns3_p99.csv") as f:
        ns3 = {int(r["id"]): r for r in csv.DictReader(f)}
    mixes = {int(m["id"]): m for m in json.loads((a.reference / "mixes.json").read_text())}
    ids = [int(i) for i in a.mixes.split(",")] if a.mixes else sorted(ns3)
    missing = [i for i in ids if i not in ns3 or i not in mixes]
    if missing:
        sys.exit(f"mixes {missing}: not in both mixes.json and fig8_ns3_p99.csv")
    a.out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    for i in ids:
        run = run_mix(binary, a.reference, mixes[i], a.out, a)
        rows += rows_of(run, ns3[i], "native")
        print(
            f"mix {i}: {run.flows:,} flows, {run.wall_s:.1f} s, "
            f"p99 {run.stats['all'][0]:.2f} (ns-3 {float(ns3[i]['ns3_p99_all']):.2f})",
            file=sys.stderr,
        )
        if a.check_import:
            rows += rows_of(
                run_imported(binary, a.reference, mixes[i], a.out, a), ns3[i], "imported"
            )
    table = render(rows, ns3, mixes)
    with open(a.out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (a.out / "results.md").write_text(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
