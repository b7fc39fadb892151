"""Run parameters that analysis needs: MTU, host line rate, base RTT and the BDP they imply.

Newer runs store ``mtu_bytes``, ``host_rate_bps`` and ``base_rtt_ns`` in ``run.parquet``. Older
runs lack them; :func:`run_params` then falls back to an MTU of 1500 B, the largest ``rate_bps``
of a host port in ``links.parquet`` and a base RTT of 10 µs (a fixed guess, not derived from the
topology), and records which values were defaulted in :attr:`RunParams.defaulted`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from netstep_analysis.runs import load

DEFAULT_MTU_BYTES = 1500
"""MTU assumed for runs whose ``run.parquet`` has no ``mtu_bytes`` column."""

DEFAULT_BASE_RTT_NS = 10_000
"""Base RTT (10 µs) assumed for runs whose ``run.parquet`` has no ``base_rtt_ns`` column."""

PARAM_COLUMNS = ("mtu_bytes", "host_rate_bps", "base_rtt_ns")
"""The ``run.parquet`` columns :class:`RunParams` is read from."""


@dataclass(frozen=True)
class RunParams:
    """MTU, host line rate and base RTT of a run (or of every run of a sweep)."""

    mtu_bytes: int
    host_rate_bps: int
    base_rtt_ns: int
    defaulted: tuple[str, ...] = ()
    """Names of the fields that were not in ``run.parquet`` and were filled by fallbacks."""

    @property
    def bdp_bytes(self) -> float:
        """Bandwidth-delay product in bytes: base RTT × host rate / 8."""
        return self.base_rtt_ns * self.host_rate_bps / 8e9

    def describe(self) -> str:
        """One line naming the values, marking defaulted ones."""
        parts = [
            f"MTU {self.mtu_bytes} B",
            f"host rate {self.host_rate_bps / 1e9:g} Gb/s",
            f"base RTT {self.base_rtt_ns / 1e3:g} µs",
            f"BDP {self.bdp_bytes:,.0f} B",
        ]
        text = ", ".join(parts)
        if self.defaulted:
            text += f" (defaulted, not in run.parquet: {', '.join(self.defaulted)})"
        return text


def bdp_bytes(run_row: RunParams | Mapping[str, Any]) -> float:
    """Bandwidth-delay product in bytes, ``base_rtt × host_rate / 8``, of one run.

    ``run_row`` is a :class:`RunParams` or a mapping such as a row of ``run.parquet``
    (``run_df.row(0, named=True)``) with ``host_rate_bps`` and, optionally, ``base_rtt_ns``
    (10 µs when absent). A mapping without ``host_rate_bps`` raises ``KeyError``; use
    :func:`run_params` for older runs, which derives the host rate from ``links.parquet``.
    """
    if isinstance(run_row, RunParams):
        return run_row.bdp_bytes
    if run_row.get("host_rate_bps") is None:
        raise KeyError(
            "host_rate_bps: not in this run row (older run?); "
            "use netstep_analysis.run_params(run_folder) instead"
        )
    rtt = run_row.get("base_rtt_ns")
    rtt_ns = DEFAULT_BASE_RTT_NS if rtt is None else int(rtt)
    return rtt_ns * int(run_row["host_rate_bps"]) / 8e9


def _collect(frame: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


def _host_rate_from_links(links: pl.LazyFrame | pl.DataFrame | None) -> int:
    if links is None:
        raise ValueError(
            "run.parquet has no host_rate_bps and no links table was given to derive it from"
        )
    rate = (
        _collect(links)
        .filter(pl.col("node_kind").cast(pl.String) == "host")
        .select(pl.col("rate_bps").max())
        .item()
    )
    if rate is None:
        raise ValueError("links.parquet has no host port; cannot derive the host rate")
    return int(rate)


def run_params(
    source: str | Path | Mapping[str, Any] | RunParams,
    links: pl.LazyFrame | pl.DataFrame | None = None,
) -> RunParams:
    """The :class:`RunParams` of a run folder, a sweep, ``load()`` frames or a run row.

    ``source`` is a run (or sweep) folder, the dict returned by :func:`netstep_analysis.load`,
    a mapping that is one row of ``run.parquet`` (then pass ``links`` for older runs), or a
    :class:`RunParams` (returned unchanged). Missing columns fall back to MTU 1500 B, the
    largest host-port ``rate_bps`` in ``links.parquet`` and a base RTT of 10 µs. For a sweep,
    every run must agree on the three values, otherwise ``ValueError`` is raised: analyse its
    runs one by one instead.
    """
    if isinstance(source, RunParams):
        return source
    if isinstance(source, str | Path):
        source = load(source)
    if (
        isinstance(source, Mapping)
        and "run" in source
        and isinstance(source["run"], pl.LazyFrame | pl.DataFrame)
    ):
        run = _collect(source["run"])
        links = source.get("links", links)
        present = [c for c in PARAM_COLUMNS if c in run.columns]
        distinct = run.select(present).unique() if present else run.head(1).select([])
        if distinct.height > 1:
            raise ValueError(
                f"the runs disagree on {', '.join(present)}; analyse them one run at a time"
            )
        row: Mapping[str, Any] = distinct.row(0, named=True) if present else {}
    else:
        row = source
    defaulted = []
    mtu = row.get("mtu_bytes")
    if mtu is None:
        mtu = DEFAULT_MTU_BYTES
        defaulted.append("mtu_bytes")
    rate = row.get("host_rate_bps")
    if rate is None:
        rate = _host_rate_from_links(links)
        defaulted.append("host_rate_bps")
    rtt = row.get("base_rtt_ns")
    if rtt is None:
        rtt = DEFAULT_BASE_RTT_NS
        defaulted.append("base_rtt_ns")
    return RunParams(int(mtu), int(rate), int(rtt), tuple(defaulted))
