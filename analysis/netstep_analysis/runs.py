"""Run folders: the tables netstep writes, sweep manifests and :func:`load`.

A run folder holds ``flows.parquet``, ``links.parquet`` and ``run.parquet`` and, when netstep
ran with ``--trace``, ``packet_hops.parquet``, ``queue_samples.parquet`` and
``cc_samples.parquet`` (schema in ``docs/trace-schema.md``). :func:`load` returns one LazyFrame
per table over a single run or a whole sweep of run folders
(``OUT/<key>=<value>/.../<table>.parquet``), with Hive partition columns added for sweeps.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

TABLES = ("flows", "links", "run")
"""Tables every run folder has."""

TRACE_TABLES = ("packet_hops", "queue_samples", "cc_samples")
"""Tables a run folder may have, written with ``--trace`` (each only when asked for)."""

SCHEMA_VERSION = 1
"""The trace schema version this package reads."""


MANIFEST_COLUMNS = ("point_id", "path", "status", "wall_s", "error", "netstep_version")
"""Columns of a sweep's ``sweep.parquet`` that are not axes."""


def sweep_manifest(path: str | Path) -> pl.DataFrame | None:
    """A sweep folder's manifest (``sweep.parquet``: one row per point, with its axis values,
    status, wall time and error), or ``None`` when ``path`` is not a ``netstep sweep`` folder."""
    manifest = Path(path) / "sweep.parquet"
    return pl.read_parquet(manifest) if manifest.is_file() else None


def axes(manifest: pl.DataFrame) -> list[str]:
    """The axis columns of a sweep manifest, in folder order."""
    return [c for c in manifest.columns if c not in MANIFEST_COLUMNS]


def _load_sweep(root: Path, manifest: pl.DataFrame) -> dict[str, pl.LazyFrame]:
    done = manifest.filter(pl.col("status") == "done")
    if done.height == 0:
        raise FileNotFoundError(f"{root}: a sweep with no done point (see sweep.parquet)")
    frames: dict[str, pl.LazyFrame] = {}
    for table in TABLES + TRACE_TABLES:
        files = done.with_columns(
            _netstep_file=pl.concat_str(pl.lit(f"{root}/"), "path", pl.lit(f"/{table}.parquet"))
        ).filter(pl.col("_netstep_file").map_elements(lambda f: Path(f).is_file(), pl.Boolean))
        if files.height == 0:
            continue
        scan = pl.scan_parquet(
            files["_netstep_file"].to_list(),
            include_file_paths="_netstep_file",
            missing_columns="insert",
        )
        own = set(scan.collect_schema().names())
        # An axis the table already has as a column (``seed`` in run.parquet) is not repeated.
        keys = ["point_id"] + [a for a in axes(manifest) if a not in own]
        frames[table] = scan.join(
            files.lazy().select("_netstep_file", *keys),
            on="_netstep_file",
            how="left",
            maintain_order="left",
        ).drop("_netstep_file")
    return frames


def load(path: str | Path) -> dict[str, pl.LazyFrame]:
    """Return ``{table: LazyFrame}`` for a run folder or a folder of run folders.

    Always holds the :data:`TABLES` found; also holds ``packet_hops`` and ``queue_samples``
    (:data:`TRACE_TABLES`) when such files exist (for a sweep: in at least one run).

    A ``netstep sweep`` folder (one with ``sweep.parquet``) is read through its manifest: only
    points whose status is ``done`` are included (not failed or pending ones, nor folders of
    points removed from the sweep file), and every frame gets ``point_id`` and one column per
    axis with the manifest's types. Any other folder of runs is read with Hive partitioning
    (``<key>=<value>`` folder levels become columns).
    Raises ``FileNotFoundError`` naming the folder when it holds no netstep run.
    """
    root = Path(path)
    manifest = sweep_manifest(root)
    if manifest is not None:
        return _load_sweep(root.resolve(), manifest)
    frames: dict[str, pl.LazyFrame] = {}
    for table in TABLES + TRACE_TABLES:
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
