"""Polars helpers for netstep run folders.

A run folder holds ``flows.parquet``, ``links.parquet`` and ``run.parquet`` (schema in
``docs/trace-schema.md``). :func:`load` returns one LazyFrame per table over a single run or a
whole sweep of run folders (``OUT/<key>=<value>/.../<table>.parquet``), with Hive partition
columns added for sweeps.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

TABLES = ("flows", "links", "run")
"""Tables every run folder has."""

SCHEMA_VERSION = 1
"""The trace schema version this package reads."""


def load(path: str | Path) -> dict[str, pl.LazyFrame]:
    """Return ``{table: LazyFrame}`` for a run folder or a folder of run folders.

    Raises ``FileNotFoundError`` naming the folder when it holds no netstep run.
    """
    root = Path(path)
    frames: dict[str, pl.LazyFrame] = {}
    for table in TABLES:
        direct = root / f"{table}.parquet"
        if direct.exists():
            frames[table] = pl.scan_parquet(direct)
        elif any(root.glob(f"**/{table}.parquet")):
            frames[table] = pl.scan_parquet(
                str(root / "**" / f"{table}.parquet"), hive_partitioning=True
            )
    if "run" not in frames:
        raise FileNotFoundError(f"{root}: no run.parquet here or below; not a netstep run")
    return frames


def schema_version(run_folder: str | Path) -> int:
    """The schema version stored in a run's ``run.parquet`` key-value metadata."""
    import pyarrow.parquet as pq

    meta = pq.read_metadata(Path(run_folder) / "run.parquet").metadata or {}
    return int(meta[b"netstep.schema_version"])
