"""Exact 1-D Wasserstein-1 against SciPy, and the comparison summary."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy.stats import wasserstein_distance

import netstep_analysis as na


@pytest.mark.parametrize(
    ("n", "m"), [(1, 1), (1, 5), (3, 7), (10, 10), (100, 37), (999, 1000), (4000, 2503)]
)
def test_w1_matches_scipy_on_unequal_samples(n, m):
    rng = np.random.default_rng(n * 7919 + m)
    for a, b in [
        (rng.normal(size=n), rng.normal(0.5, 2.0, size=m)),
        (rng.lognormal(size=n), rng.exponential(3.0, size=m)),
        (rng.integers(0, 5, size=n).astype(float), rng.integers(0, 5, size=m).astype(float)),
    ]:
        expected = wasserstein_distance(a, b)
        got = na.wasserstein1(a, b)
        assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)
        # Symmetric, and independent of input order.
        assert na.wasserstein1(b, a) == pytest.approx(got, rel=1e-12)
        assert na.wasserstein1(rng.permutation(a), b) == pytest.approx(got, rel=1e-12)


def test_w1_identity_is_zero():
    x = np.random.default_rng(1).lognormal(size=777)
    assert na.wasserstein1(x, x) == 0.0
    assert na.wasserstein1(x, np.random.default_rng(2).permutation(x)) == 0.0
    assert na.normalized_w1(x, x) == 0.0


def test_w1_of_a_shift_is_the_shift():
    rng = np.random.default_rng(3)
    # Integer-valued samples: every difference is exact, so W1 is exactly c.
    x = rng.integers(0, 1000, size=501).astype(float)
    assert na.wasserstein1(x, x + 7.0) == 7.0
    assert na.wasserstein1(x + 7.0, x) == 7.0
    # Real-valued samples: exact up to the rounding of x + c.
    y = rng.normal(size=1000)
    assert na.wasserstein1(y, y + 0.37) == pytest.approx(0.37, rel=1e-12)


def test_w1_accepts_lists_and_series_and_rejects_bad_input():
    assert na.wasserstein1([0.0, 1.0], pl.Series([0.5, None, 1.5])) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="empty"):
        na.wasserstein1([], [1.0])
    with pytest.raises(ValueError, match="NaN"):
        na.wasserstein1([1.0, float("nan")], [1.0])


def test_normalized_w1_divides_by_the_reference_mean():
    a = np.array([1.0, 2.0, 3.0, 6.0])
    b = a * 2
    assert na.normalized_w1(a, b) == pytest.approx(na.wasserstein1(a, b) / 3.0)
    assert na.normalized_w1(b, a) == pytest.approx(na.wasserstein1(a, b) / 6.0)


def test_compare_summary():
    rng = np.random.default_rng(4)
    a = rng.lognormal(size=150)
    b = a * 1.1
    c = na.compare(a, b)
    assert c["n_a"] == 150 and c["n_b"] == 150
    assert c["w1"] == pytest.approx(na.wasserstein1(a, b))
    assert c["nw1"] == pytest.approx(c["w1"] / a.mean())
    for key in ("rel_err_p50", "rel_err_p90", "rel_err_p99"):
        assert c[key] == pytest.approx(0.1)
    assert c["few_samples"] is False
    small = na.compare(a[:99], b)
    assert small["few_samples"] is True
    assert small["rel_err_p50"] == pytest.approx(
        (np.quantile(b, 0.5) - np.quantile(a[:99], 0.5)) / np.quantile(a[:99], 0.5)
    )
    empty = na.compare([], b)
    assert empty["n_a"] == 0 and math.isnan(empty["w1"]) and empty["few_samples"] is True


def test_w1_by_bucket_agrees_with_netstep_compare(tmp_path):
    """The Python and Rust (``netstep compare``) implementations agree bucket by bucket."""
    import json
    import subprocess

    from conftest import REPO, netstep_binary, run_netstep

    helps = subprocess.run([str(netstep_binary()), "--help"], capture_output=True, text=True)
    assert "compare" in helps.stdout, "this netstep binary has no `compare` command"
    for seed in range(1, 7):
        run_netstep(
            REPO / "scenarios" / "quickstart.toml",
            tmp_path / ("a" if seed <= 3 else "b") / f"seed={seed}",
            "--set",
            'traffic.0.duration="10ms"',
            "--set",
            f"simulation.seed={seed}",
        )

    def pooled(root):
        return pl.concat(
            [
                na.with_bucket(pl.read_parquet(run / "flows.parquet"), na.run_params(run))
                for run in na.find_runs(root)
            ]
        )

    ours = na.w1_by_bucket(pooled(tmp_path / "a"), pooled(tmp_path / "b"))
    done = subprocess.run(
        [str(netstep_binary()), "compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    theirs = {row["group"]: row for row in json.loads(done.stdout)}
    assert set(theirs) == set(na.BUCKETS)
    for row in ours.iter_rows(named=True):
        other = theirs[row["bucket"]]
        assert (row["n_a"], row["n_b"], row["few_samples"]) == (
            other["n_a"],
            other["n_b"],
            other["few_samples"],
        )
        for key in ("w1", "nw1", "rel_err_p50", "rel_err_p90", "rel_err_p99"):
            assert row[key] == pytest.approx(other[key], rel=1e-9, abs=1e-12), key
