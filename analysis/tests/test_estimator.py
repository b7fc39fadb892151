"""The estimator example runs end to end in its quick form."""

from __future__ import annotations

import os
import subprocess
import sys

import polars as pl
from conftest import REPO, netstep_binary

import netstep_analysis as na

SCRIPT = REPO / "analysis" / "examples" / "estimator" / "run.py"


def run_quick(out, *extra: str) -> subprocess.CompletedProcess:
    """Runs the example's quick form into `out` with extra arguments; asserts it succeeded."""
    env = {**os.environ, "NETSTEP_BIN": str(netstep_binary())}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--out", str(out), *extra],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_estimator_quick(tmp_path):
    done = run_quick(tmp_path)
    assert "| load | bucket | n | W1 point | nW1 point |" in done.stdout
    assert "| all | (5BDP, inf) |" in done.stdout
    assert (tmp_path / "validation.md").read_text().startswith("| load | bucket |")
    assert (tmp_path / "validation.csv").stat().st_size > 0
    for png in ("cdf_pred_vs_true.png", "w1_by_bucket.png"):
        data = (tmp_path / png).read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 1000
    seeds = sorted(p.name for p in (tmp_path / "data" / "load=0.5").iterdir())
    assert seeds == ["seed=1", "seed=2"]


def test_estimator_switches_congestion_control_with_set(tmp_path):
    run_quick(
        tmp_path,
        "--set",
        "transport.cc=dctcp",
        "--set",
        'topology.links.aqm={ kind = "step", k = "20KB" }',
    )
    frames = na.load(tmp_path / "data")
    assert frames["flows"].collect()["transport"].unique().to_list() == ["tcp_dctcp"]
    assert frames["links"].collect()["ecn_marks"].sum() > 0
    assert pl.read_parquet(tmp_path / "data" / "sweep.parquet")["status"].to_list() == ["done"] * 2
