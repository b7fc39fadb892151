"""The comparison of `run`'s two simulators: per size bucket and per k, and the Markdown.

The floor columns compare netstep with itself on the same flow list with every start moved by
up to 10 ns (uniform, seeded): how far two runs of one simulator drift apart flow by flow
once the first tie breaks differently on a lossy fabric, the least any second simulator
could be expected to differ by.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parents[2]
BUCKETS = (
    ("<10KB", 0, 10_000),
    ("10KB-100KB", 10_000, 100_000),
    ("100KB-1MB", 100_000, 1_000_000),
    (">=1MB", 1_000_000, None),
    ("all", 0, None),
)
TOTALS_HEAD = (
    "| k | seeds | flows | netstep wall s | ns-3 Run() wall s | speed-up | packet-hops "
    "| unfinished | flows with RTO | RTOs | drops (ns-3: device + TC) |"
)
BUCKETS_HEAD = (
    "| k | size | flows | slowdown p50 | p90 | p99 | ns-3 from app start p50 / p99 "
    "| nW1 | median abs ln FCT ratio | floor nW1 | floor median abs ln |"
)


# --- the comparison ------------------------------------------------------------------------


def normalized_w1(reference: np.ndarray, other: np.ndarray) -> float:
    """`netstep_analysis.distance.normalized_w1` (W1 / mean of the reference)."""
    if str(REPO / "analysis") not in sys.path:
        sys.path.insert(0, str(REPO / "analysis"))
    from netstep_analysis.distance import normalized_w1 as nw1

    return nw1(reference, other)


def paired_ln(a: pl.Series, b: pl.Series) -> float | None:
    """Median |ln(a / b)| over the flows both finished."""
    both = pl.DataFrame({"a": a, "b": b}).drop_nulls()
    if both.height == 0:
        return None
    return float(np.median(np.abs(np.log(both["a"].to_numpy() / both["b"].to_numpy()))))


def pcts(x: np.ndarray) -> list[float | None]:
    """p50, p90, p99 (numpy's linear quantiles, as netstep_analysis), or None when empty."""
    if x.size == 0:
        return [None, None, None]
    return [float(v) for v in np.quantile(x, [0.5, 0.9, 0.99])]


def bucket_stats(flows: pl.DataFrame) -> list[dict]:
    """Per size bucket: counts, slowdown percentiles, nW1 and the paired FCT difference."""
    out = []
    for name, lo, hi in BUCKETS:
        sel = flows.filter(pl.col("size") >= lo)
        if hi is not None:
            sel = sel.filter(pl.col("size") < hi)
        ideal = sel["ideal_ns"]
        ns = (sel["netstep_fct_ns"] / ideal).drop_nulls().to_numpy()
        n3 = (sel["ns3_fct_ns"] / ideal).drop_nulls().to_numpy()
        n3_app = (sel["ns3_fct_app_ns"] / ideal).drop_nulls().to_numpy()
        both = sel.drop_nulls(["netstep_fct_ns", "ns3_fct_ns"])
        jitter = (sel["jitter_fct_ns"] / ideal).drop_nulls().to_numpy()
        out.append(
            {
                "bucket": name,
                "flows": sel.height,
                "netstep_completed": int(ns.size),
                "ns3_completed": int(n3.size),
                "netstep_slowdown_p50_p90_p99": pcts(ns),
                "ns3_slowdown_p50_p90_p99": pcts(n3),
                "ns3_slowdown_from_app_start_p50_p90_p99": pcts(n3_app),
                "netstep_below_ideal": int(np.sum(ns < 1)),
                "ns3_below_ideal": int(np.sum(n3 < 1)),
                "nw1_slowdown": normalized_w1(n3, ns) if ns.size and n3.size else None,
                "paired_flows": both.height,
                "paired_median_abs_ln_fct_ratio": paired_ln(
                    sel["netstep_fct_ns"], sel["ns3_fct_ns"]
                ),
                "floor_nw1_slowdown": normalized_w1(ns, jitter)
                if ns.size and jitter.size
                else None,
                "floor_median_abs_ln_fct_ratio": paired_ln(
                    sel["netstep_fct_ns"], sel["jitter_fct_ns"]
                ),
            }
        )
    return out


def per_k(k: int, runs: list[dict]) -> dict:
    """One k's seeds pooled: totals of both simulators and the per-bucket statistics."""
    flows = pl.concat([r["flows"] for r in runs])
    ns, n3 = [r["netstep"] for r in runs], [r["ns3"] for r in runs]
    ns_wall = sum(r["wall_seconds"] for r in ns)
    n3_wall = sum(r["run_wall_seconds"] for r in n3)
    n3_drop_kinds = ("device_queue_drops", "tc_drops", "host_qdisc_drops", "ipv4_drops")
    return {
        "k": k,
        "seeds": sorted(set(flows["seed"].to_list())),
        "flows": flows.height,
        "netstep_wall_seconds": ns_wall,
        "netstep_process_wall_seconds": sum(r["process_wall_seconds"] for r in ns),
        "ns3_run_wall_seconds": n3_wall,
        "ns3_process_wall_seconds": sum(r["process_wall_seconds"] for r in n3),
        "speedup_run": n3_wall / ns_wall if ns_wall > 0 else None,
        "netstep_packet_hops": sum(r["packet_hops"] for r in ns),
        "ns3_packet_hops": sum(r["packet_hops"] for r in n3),
        "netstep_events": sum(r["events"] for r in ns),
        "netstep_versions": sorted({r["version"] for r in ns}),
        "netstep_unfinished": int(flows["netstep_fct_ns"].null_count()),
        "ns3_unfinished": int(flows["ns3_fct_ns"].null_count()),
        "netstep_flows_with_timeout": int((flows["netstep_timeouts"] > 0).sum()),
        "netstep_timeouts": int(flows["netstep_timeouts"].sum()),
        "ns3_flows_with_timeout": int((flows["ns3_timeouts"] > 0).sum()),
        "ns3_timeouts": int(flows["ns3_timeouts"].sum()),
        "ns3_ca_loss_entries": int(flows["ns3_loss_states"].sum()),
        "netstep_retransmits": int(flows["netstep_retransmits"].sum()),
        "ns3_retransmissions": int(flows["ns3_retransmits"].sum()),
        "netstep_drops": sum(r["drops"] for r in ns),
        "netstep_flow_drops": int(flows["netstep_drops"].sum()),
        "ns3_drops": sum(r[kind] for r in n3 for kind in n3_drop_kinds),
        **{f"ns3_{kind}": sum(r[kind] for r in n3) for kind in n3_drop_kinds},
        "ns3_flow_drops": int(flows["ns3_drops"].sum()),
        "ns3_unattributed_drops": sum(r["unattributed_drops"] for r in n3),
        "buckets": bucket_stats(flows),
    }


def fmt(x: float | None, digits: int = 2) -> str:
    """A table cell: `-` for a missing value, thousands separators for integers."""
    if x is None:
        return "-"
    if isinstance(x, int):
        return f"{x:,}"
    return f"{x:.{digits}f}"


def pair(a: float | None, b: float | None, digits: int = 2) -> str:
    """`netstep / ns-3` cell."""
    return f"{fmt(a, digits)} / {fmt(b, digits)}"


def markdown(results: list[dict], recovery: str, sets: list[str]) -> str:
    """The two Markdown tables (totals per k; slowdowns per k and size bucket)."""
    extra = f", netstep `--set {' --set '.join(sets)}`" if sets else ""
    lines = [
        f"ns-3 3.44 recovery: {recovery}{extra}. Cells `a / b` are netstep / ns-3.",
        "",
        TOTALS_HEAD,
        "|---" * TOTALS_HEAD.count(" | ") + "|---|",
    ]
    for r in results:
        n3_drops = (
            f"{r['netstep_drops']:,} / {r['ns3_drops']:,} "
            f"({r['ns3_device_queue_drops']:,} + {r['ns3_tc_drops']:,})"
        )
        lines.append(
            f"| {r['k']} | {','.join(map(str, r['seeds']))} | {r['flows']:,} "
            f"| {fmt(r['netstep_wall_seconds'])} | {fmt(r['ns3_run_wall_seconds'])} "
            f"| {fmt(r['speedup_run'], 1)}x "
            f"| {pair(r['netstep_packet_hops'], r['ns3_packet_hops'])} "
            f"| {pair(r['netstep_unfinished'], r['ns3_unfinished'])} "
            f"| {pair(r['netstep_flows_with_timeout'], r['ns3_flows_with_timeout'])} "
            f"| {pair(r['netstep_timeouts'], r['ns3_timeouts'])} | {n3_drops} |"
        )
    lines += [
        "",
        BUCKETS_HEAD,
        "|---" * BUCKETS_HEAD.count(" | ") + "|---|",
    ]
    for r in results:
        for b in r["buckets"]:
            ns, n3 = b["netstep_slowdown_p50_p90_p99"], b["ns3_slowdown_p50_p90_p99"]
            app = b["ns3_slowdown_from_app_start_p50_p90_p99"]
            lines.append(
                f"| {r['k']} | {b['bucket']} | {b['flows']:,} | {pair(ns[0], n3[0])} "
                f"| {pair(ns[1], n3[1])} | {pair(ns[2], n3[2])} | {fmt(app[0])} / {fmt(app[2])} "
                f"| {fmt(b['nw1_slowdown'], 3)} | {fmt(b['paired_median_abs_ln_fct_ratio'], 3)} "
                f"| {fmt(b['floor_nw1_slowdown'], 3)} "
                f"| {fmt(b['floor_median_abs_ln_fct_ratio'], 3)} |"
            )
    return "\n".join(lines)
