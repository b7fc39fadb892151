"""The comparison of `run`'s two simulators: per size bucket and per k, and the Markdown.

The floor columns compare netstep with itself on the same flow list with every start moved by
up to 10 ns (uniform, seeded; `--floor-draws` draws, columns `jitter{i}_fct_ns`): how far
two runs of one simulator drift apart once the first tie breaks differently on a lossy
fabric, the least any second simulator could be expected to differ by. Each draw gives one
value of each statistic (nW1 of the run against the draw, paired median |ln FCT ratio|,
timeouts); the tables give their median and maximum over the draws. Were ns-3 and netstep the
same model, ns-3's run would be one more such draw, so its nW1 against netstep would fall
below the draws' maximum with probability D/(D+1) for D draws: "within floor" says whether it
does.
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
    "| unfinished | flows with RTO | RTOs | netstep floor: flows with RTO, RTOs, flows' drops "
    "(min-max) | drops (ns-3: device + TC) |"
)
BUCKETS_HEAD = (
    "| k | size | flows | slowdown p50 | p90 | p99 | ns-3 from app start p50 / p99 "
    "| nW1 | median abs ln FCT ratio | floor nW1 median / max | floor median abs ln median "
    "/ max | nW1 within floor |"
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


def draws(flows: pl.DataFrame) -> int:
    """How many floor draws the join holds (`jitter{i}_fct_ns` columns)."""
    return sum(
        1 for c in flows.columns if c.startswith("jitter") and c.endswith("_fct_ns")
    )


def spread(values: list[float | None]) -> list[float | None]:
    """Median and maximum of the draws' values (None when there are none)."""
    got = [v for v in values if v is not None]
    if not got:
        return [None, None]
    return [float(np.median(got)), float(np.max(got))]


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
        floor_nw1, floor_ln = [], []
        for i in range(draws(flows)):
            jitter = (sel[f"jitter{i}_fct_ns"] / ideal).drop_nulls().to_numpy()
            floor_nw1.append(
                normalized_w1(ns, jitter) if ns.size and jitter.size else None
            )
            floor_ln.append(paired_ln(sel["netstep_fct_ns"], sel[f"jitter{i}_fct_ns"]))
        nw1 = normalized_w1(n3, ns) if ns.size and n3.size else None
        floor = spread(floor_nw1)
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
                "nw1_slowdown": nw1,
                "paired_flows": both.height,
                "paired_median_abs_ln_fct_ratio": paired_ln(
                    sel["netstep_fct_ns"], sel["ns3_fct_ns"]
                ),
                "floor_nw1_slowdown_draws": floor_nw1,
                "floor_nw1_slowdown_median_max": floor,
                "floor_median_abs_ln_fct_ratio_draws": floor_ln,
                "floor_median_abs_ln_fct_ratio_median_max": spread(floor_ln),
                "nw1_within_floor": None
                if nw1 is None or floor[1] is None
                else bool(nw1 <= floor[1]),
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
        "floor_flows_with_timeout_min_max": floor_counts(
            flows, lambda t: (t > 0).sum()
        ),
        "floor_timeouts_min_max": floor_counts(flows, lambda t: t.sum()),
        "floor_flow_drops_min_max": floor_counts(flows, lambda t: t.sum(), "drops"),
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


def floor_counts(flows: pl.DataFrame, count, what: str = "timeouts") -> list[int]:
    """Smallest and largest `count(column)` over netstep's run and its floor draws, for
    the per-flow `what` (timeouts or drops)."""
    columns = [f"netstep_{what}"]
    columns += [f"jitter{i}_{what}" for i in range(draws(flows))]
    values = [int(count(flows[c])) for c in columns]
    return [min(values), max(values)]


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


def span(lo_hi: list[int]) -> str:
    """`min-max` cell."""
    return f"{lo_hi[0]:,}-{lo_hi[1]:,}"


def slash(median_max: list[float | None]) -> str:
    """`median / max` cell, three digits."""
    return f"{fmt(median_max[0], 3)} / {fmt(median_max[1], 3)}"


def within(flag: bool | None) -> str:
    """The verdict cell."""
    return "-" if flag is None else ("yes" if flag else "no")


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
            f"| {pair(r['netstep_timeouts'], r['ns3_timeouts'])} "
            f"| {span(r['floor_flows_with_timeout_min_max'])}, "
            f"{span(r['floor_timeouts_min_max'])}, "
            f"{span(r['floor_flow_drops_min_max'])} | {n3_drops} |"
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
                f"| {slash(b['floor_nw1_slowdown_median_max'])} "
                f"| {slash(b['floor_median_abs_ln_fct_ratio_median_max'])} "
                f"| {within(b['nw1_within_floor'])} |"
            )
    return "\n".join(lines)
