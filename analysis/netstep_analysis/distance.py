"""Distances between samples: exact 1-D Wasserstein-1 and a compact comparison summary."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from netstep_analysis.buckets import quantile_label

FEW_SAMPLES = 100
"""Below this many samples on either side, :func:`compare` sets ``few_samples``."""


def _as_array(x: Any, name: str) -> np.ndarray:
    if isinstance(x, pl.Series | pl.Expr):
        if isinstance(x, pl.Expr):
            raise TypeError(f"{name}: pass values (a Series or array), not an expression")
        x = x.drop_nulls().to_numpy()
    a = np.asarray(x, dtype=np.float64).ravel()
    if a.size == 0:
        raise ValueError(f"{name}: empty sample")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: sample holds NaN or infinite values")
    return a


def wasserstein1(a: Any, b: Any) -> float:
    """Exact Wasserstein-1 distance between the empirical distributions of ``a`` and ``b``.

    ``W1 = ∫₀¹ |F_a⁻¹(t) − F_b⁻¹(t)| dt`` with the empirical quantile functions, which are
    step functions with breakpoints ``i/n`` and ``j/m``. Both breakpoint sets are merged (in
    integer units of ``1/(n·m)``, so the merge is exact) and the integral is summed over the
    pieces where both quantile functions are constant: O(n + m) after sorting the samples.
    Sample sizes may differ; nulls in a Polars Series are dropped; NaN or infinite values and
    empty samples raise ``ValueError``. Agrees with ``scipy.stats.wasserstein_distance``.
    """
    xa = np.sort(_as_array(a, "a"))
    xb = np.sort(_as_array(b, "b"))
    n, m = xa.size, xb.size
    if n * m >= 2**62:
        raise ValueError("samples too large for exact integer breakpoints (n*m >= 2**62)")
    # Breakpoints i/n = i*m/(n*m) and j/m = j*n/(n*m); both lists are sorted, so the stable
    # sort (timsort for int64) merges the two runs in linear time.
    ticks = np.sort(
        np.concatenate([np.arange(n, dtype=np.int64) * m, np.arange(m, dtype=np.int64) * n]),
        kind="stable",
    )
    starts = ticks[np.concatenate([[True], ticks[1:] != ticks[:-1]])]
    ends = np.append(starts[1:], np.int64(n) * m)
    widths = (ends - starts).astype(np.float64)
    diffs = np.abs(xa[starts // m] - xb[starts // n])
    return float(np.dot(widths, diffs) / (float(n) * float(m)))


def normalized_w1(a: Any, b: Any) -> float:
    """``wasserstein1(a, b) / mean(a)``: W1 relative to the reference sample ``a``'s mean.

    Returns ``inf`` (or ``nan`` when W1 is also 0) when ``mean(a)`` is 0.
    """
    mean = float(np.mean(_as_array(a, "a")))
    w1 = wasserstein1(a, b)
    if mean == 0.0:
        return float("nan") if w1 == 0.0 else float("inf")
    return w1 / abs(mean)


def compare(a_samples: Any, b_samples: Any, qs: tuple[float, ...] = (0.5, 0.9, 0.99)) -> dict:
    """Compare a sample ``b`` with a reference ``a`` (ground truth first).

    Returns a dict with ``n_a``, ``n_b``, ``w1``, ``nw1`` (W1 / mean(a)), ``rel_err_p50``,
    ``rel_err_p90``, ``rel_err_p99`` (``(q_b − q_a) / q_a`` with linearly interpolated
    quantiles; one key per entry of ``qs``) and ``few_samples`` (fewer than
    :data:`FEW_SAMPLES` on either side). If either sample is empty, the numbers are NaN.
    """
    xa = _as_array(a_samples, "a") if _size(a_samples) else np.empty(0)
    xb = _as_array(b_samples, "b") if _size(b_samples) else np.empty(0)
    out: dict[str, Any] = {"n_a": int(xa.size), "n_b": int(xb.size)}
    if xa.size and xb.size:
        out["w1"] = wasserstein1(xa, xb)
        out["nw1"] = normalized_w1(xa, xb)
        for q in qs:
            qa, qb = np.quantile(xa, q), np.quantile(xb, q)
            out[f"rel_err_{quantile_label(q)}"] = float((qb - qa) / qa) if qa != 0 else float("nan")
    else:
        out["w1"] = out["nw1"] = float("nan")
        for q in qs:
            out[f"rel_err_{quantile_label(q)}"] = float("nan")
    out["few_samples"] = bool(xa.size < FEW_SAMPLES or xb.size < FEW_SAMPLES)
    return out


def _size(x: Any) -> int:
    if isinstance(x, pl.Series):
        return x.len() - x.null_count()
    return int(np.asarray(x).size)
