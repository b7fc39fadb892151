"""Size buckets, run parameters and per-bucket percentiles on a real run."""

from __future__ import annotations

import polars as pl
import pytest

import netstep_analysis as na


def test_size_bucket_boundaries():
    mtu, bdp = 1500, 12_500
    sizes = [0, 1, 1500, 1501, 12_500, 12_501, 62_500, 62_501, 10**9]
    expected = [
        "(0, MTU]",
        "(0, MTU]",
        "(0, MTU]",
        "(MTU, BDP]",
        "(MTU, BDP]",
        "(BDP, 5BDP]",
        "(BDP, 5BDP]",
        "(5BDP, inf)",
        "(5BDP, inf)",
    ]
    assert na.size_bucket(sizes, mtu, bdp) == expected
    assert [na.size_bucket(s, mtu, bdp) for s in sizes] == expected
    df = pl.DataFrame({"size_bytes": pl.Series([*sizes, None], dtype=pl.UInt64)})
    got = df.select(b=na.size_bucket("size_bytes", mtu, bdp))["b"]
    assert got.dtype == na.BUCKET_DTYPE
    assert got.to_list() == [*expected, None]
    assert (
        df.select(na.size_bucket(pl.col("size_bytes"), mtu, bdp))
        .to_series()
        .equals(got, check_names=False)
    )


def test_bdp_and_run_params():
    assert na.bdp_bytes({"base_rtt_ns": 8_000, "host_rate_bps": 100_000_000_000}) == 100_000
    # Without base_rtt_ns: the 10 µs default.
    assert na.bdp_bytes({"host_rate_bps": 10_000_000_000}) == 12_500
    with pytest.raises(KeyError, match="run_params"):
        na.bdp_bytes({"base_rtt_ns": 1})
    p = na.RunParams(mtu_bytes=9000, host_rate_bps=40_000_000_000, base_rtt_ns=5_000)
    assert na.bdp_bytes(p) == p.bdp_bytes == 25_000
    assert na.run_params(p) is p
    row = {"mtu_bytes": 4000, "host_rate_bps": 25_000_000_000, "base_rtt_ns": 4_000}
    assert na.run_params(row) == na.RunParams(4000, 25_000_000_000, 4_000)


def test_run_params_of_a_real_run(small_run):
    frames = na.load(small_run)
    run = frames["run"].collect()
    links = frames["links"].collect()
    p = na.run_params(small_run)
    assert p == na.run_params(frames)
    host_rate = links.filter(pl.col("node_kind") == "host")["rate_bps"].max()
    if "host_rate_bps" in run.columns:
        assert p.host_rate_bps == run["host_rate_bps"][0]
        assert p.base_rtt_ns == run["base_rtt_ns"][0]
        assert p.mtu_bytes == run["mtu_bytes"][0]
    else:
        assert p.host_rate_bps == host_rate == 10_000_000_000
        assert (p.mtu_bytes, p.base_rtt_ns) == (na.DEFAULT_MTU_BYTES, na.DEFAULT_BASE_RTT_NS)
        assert set(p.defaulted) == {"mtu_bytes", "host_rate_bps", "base_rtt_ns"}


def _direct(flows: pl.DataFrame, mtu: float, bdp: float, column: str, q: float) -> dict:
    """Per-bucket quantiles computed without the package's bucket expression."""

    def label(s: int) -> str:
        if s <= mtu:
            return "(0, MTU]"
        if s <= bdp:
            return "(MTU, BDP]"
        if s <= 5 * bdp:
            return "(BDP, 5BDP]"
        return "(5BDP, inf)"

    done = flows.filter(pl.col("completed")).with_columns(
        b=pl.col("size_bytes").map_elements(label, return_dtype=pl.String)
    )
    out = done.group_by("b").agg(
        pl.col(column).cast(pl.Float64).quantile(q, interpolation="linear"), pl.len()
    )
    return {r["b"]: (r[column], r["len"]) for r in out.iter_rows(named=True)}


def test_percentiles_by_bucket_match_a_direct_computation(small_run):
    frames = na.load(small_run)
    p = na.run_params(frames)
    table = na.percentiles_by_bucket(frames["flows"], p)
    assert table["bucket"].to_list() == list(na.BUCKETS)
    expected_cols = {"bucket", "n_flows", "n"} | {
        f"{m}_p{q}" for m in ("slowdown", "fct_ns") for q in (50, 90, 99)
    }
    assert set(table.columns) == expected_cols
    flows = frames["flows"].collect()
    assert table["n_flows"].sum() == flows.height
    assert table["n"].sum() == flows["completed"].sum()
    for column in ("slowdown", "fct_ns"):
        for q, suffix in ((0.5, "p50"), (0.9, "p90"), (0.99, "p99")):
            direct = _direct(flows, p.mtu_bytes, p.bdp_bytes, column, q)
            for row in table.iter_rows(named=True):
                if row["n"] == 0:
                    assert row["bucket"] not in direct
                    assert row[f"{column}_{suffix}"] is None
                else:
                    value, n = direct[row["bucket"]]
                    assert row["n"] == n
                    assert row[f"{column}_{suffix}"] == pytest.approx(value, rel=1e-12)
    # The run row (or folder) works in place of RunParams; custom quantiles and metrics too.
    same = na.percentiles_by_bucket(frames["flows"].collect(), small_run)
    assert same.equals(table)
    custom = na.percentiles_by_bucket(
        frames["flows"], p, metric=["slowdown", "retransmits"], qs=(0.25, 0.999)
    )
    assert {"slowdown_p25", "slowdown_p99.9", "retransmits_p25", "fct_ns_p99.9"} <= set(
        custom.columns
    )


def test_percentiles_by_bucket_groups_a_sweep(tmp_path):
    from conftest import REPO, run_netstep

    for seed in (1, 2):
        run_netstep(
            REPO / "scenarios" / "quickstart.toml",
            tmp_path / "load=0.5" / f"seed={seed}",
            "--set",
            'traffic.0.duration="1ms"',
            "--set",
            f"simulation.seed={seed}",
        )
    frames = na.load(tmp_path)
    table = na.percentiles_by_bucket(frames["flows"], frames, by=["seed"])
    assert table.height == 2 * len(na.BUCKETS)
    assert table["seed"].to_list() == [1] * 4 + [2] * 4
    for seed in (1, 2):
        one = na.percentiles_by_bucket(
            frames["flows"].filter(pl.col("seed") == seed), tmp_path / "load=0.5" / f"seed={seed}"
        )
        assert table.filter(pl.col("seed") == seed).drop("seed").equals(one)
