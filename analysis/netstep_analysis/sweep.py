"""Run a netstep sweep locally or on a Ray cluster.

``python -m netstep_analysis.sweep SWEEP.toml [--out DIR] [--ray [ADDRESS]]``

Without ``--ray`` this is ``netstep sweep SWEEP.toml``. With ``--ray`` every pending point
(``netstep sweep plan --pending``) becomes one Ray task that calls ``netstep sweep run-point``
on the worker, writing into ``DIR``; Ray only schedules, netstep does the work. Each point is
recorded in ``DIR`` by ``run-point`` itself (done or failed, under a per-point lock), so a
cancelled or crashed job resumes by running the same command again, and the Ray and local
drivers can take turns on one folder. At the end the manifest ``DIR/sweep.parquet`` is rebuilt
with ``netstep sweep manifest``.

On a cluster, ``DIR``, the sweep file, its scenario and CDFs, and the netstep binary must be
at the same absolute paths on every node (a shared file system); ``ADDRESS`` is the head node
(``ray start --head`` prints it), or ``auto`` from a node of the cluster.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

EXIT_POINTS_FAILED = 4
"""Exit status when some points failed (the others completed), as for ``netstep sweep``."""


@dataclass(frozen=True)
class PointResult:
    """The outcome of one point's task."""

    id: str
    path: str
    returncode: int
    error: str


def netstep_binary(given: str | os.PathLike[str] | None = None) -> Path:
    """The netstep binary: ``given``, else ``$NETSTEP_BIN``, else ``netstep`` on ``PATH``."""
    import shutil

    candidate = given or os.environ.get("NETSTEP_BIN") or shutil.which("netstep")
    if not candidate or not Path(candidate).is_file():
        raise FileNotFoundError(
            "netstep binary not found: pass --netstep, set NETSTEP_BIN, or put netstep on PATH"
        )
    return Path(candidate).resolve()


def default_out(sweep: Path) -> Path:
    """``out/<sweep name>``, as ``netstep sweep`` chooses it."""
    with sweep.open("rb") as f:
        name = tomllib.load(f).get("name") or sweep.stem
    return Path("out") / name


def plan(binary: Path, sweep: Path, out: Path, pending: bool = True) -> list[dict]:
    """The sweep's points as ``netstep sweep plan`` prints them."""
    cmd = [str(binary), "sweep", "plan", str(sweep), "--out", str(out)]
    if pending:
        cmd.append("--pending")
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise ValueError(done.stderr.strip() or f"{' '.join(cmd)} failed")
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def _run_point(binary: str, sweep: str, point: dict, out: str, threads: int) -> PointResult:
    cmd = [binary, "sweep", "run-point", sweep, "--id", point["id"], "--out", out]
    cmd += ["--threads", str(threads), "--quiet"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return PointResult(point["id"], point["path"], done.returncode, lines[-1] if lines else "")


def run_ray(
    sweep: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    address: str | None = None,
    netstep: str | os.PathLike[str] | None = None,
    threads_per_run: int = 1,
    init: dict | None = None,
) -> list[PointResult]:
    """Run the sweep's pending points as Ray tasks; return one result per point run.

    ``address`` is passed to ``ray.init`` (``None`` starts a local Ray instance); ``init``
    adds keyword arguments to it. A Ray already initialised in this process is used as is.
    The manifest is rebuilt at the end.
    """
    import ray

    binary = netstep_binary(netstep)
    sweep_path = Path(sweep).resolve()
    out_path = Path(out) if out is not None else default_out(sweep_path)
    out_path.mkdir(parents=True, exist_ok=True)
    out_path = out_path.resolve()
    points = plan(binary, sweep_path, out_path)
    results: list[PointResult] = []
    if points:
        if not ray.is_initialized():
            ray.init(address=address, **(init or {}))
        task = ray.remote(num_cpus=threads_per_run)(_run_point)
        refs = [
            task.remote(str(binary), str(sweep_path), p, str(out_path), threads_per_run)
            for p in points
        ]
        results = ray.get(refs)
    rebuilt = subprocess.run(
        [str(binary), "sweep", "manifest", str(sweep_path), "--out", str(out_path)],
        capture_output=True,
        text=True,
    )
    if rebuilt.returncode != 0:
        raise RuntimeError(f"netstep sweep manifest failed: {rebuilt.stderr.strip()}")
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0, 2 bad input, 4 failed points)."""
    parser = argparse.ArgumentParser(
        prog="python -m netstep_analysis.sweep",
        description="Run a netstep sweep locally or on a Ray cluster.",
    )
    parser.add_argument("sweep", help="sweep file (TOML)")
    parser.add_argument("--out", help="sweep folder (default: out/<sweep name>)")
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="run on Ray; ADDRESS of the cluster (default: start a local Ray instance)",
    )
    parser.add_argument("--netstep", help="netstep binary (default: $NETSTEP_BIN or PATH)")
    parser.add_argument("--threads-per-run", type=int, default=1)
    parser.add_argument("--jobs", type=int, help="local runs at once (without --ray)")
    args = parser.parse_args(argv)
    try:
        binary = netstep_binary(args.netstep)
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.ray is None:
        cmd = [str(binary), "sweep", args.sweep, "--threads-per-run", str(args.threads_per_run)]
        if args.out:
            cmd += ["--out", args.out]
        if args.jobs:
            cmd += ["--jobs", str(args.jobs)]
        return subprocess.run(cmd).returncode
    try:
        results = run_ray(
            args.sweep,
            args.out,
            address=args.ray or None,
            netstep=binary,
            threads_per_run=args.threads_per_run,
        )
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    failed = [r for r in results if r.returncode != 0]
    print(f"{len(results)} point(s) run on Ray, {len(failed)} failed")
    for r in failed:
        print(f"failed {r.path}: {r.error}")
    return EXIT_POINTS_FAILED if failed else 0


if __name__ == "__main__":
    sys.exit(main())
