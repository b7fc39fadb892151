"""Fixtures: the netstep binary (built beforehand, never by the tests) and runs made with it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

BUILD_COMMAND = "cargo build --release -p netstep"
"""How to build the binary the tests run (``ci/check.sh`` does it before pytest)."""


def netstep_binary() -> Path:
    """The netstep binary: ``$NETSTEP_BIN`` when set, else ``<repo>/target/release/netstep``.

    The tests never build it. When ``NETSTEP_BIN`` is set but names no file, the calling test
    fails; when it is unset and the release binary is missing, the test is skipped. Both
    messages name :data:`BUILD_COMMAND`.
    """
    override = os.environ.get("NETSTEP_BIN")
    if override:
        binary = Path(override)
        if not binary.is_file():
            pytest.fail(
                f"NETSTEP_BIN={override} is not a file: build netstep with `{BUILD_COMMAND}` "
                "or point NETSTEP_BIN at a netstep binary",
                pytrace=False,
            )
        return binary
    binary = REPO / "target" / "release" / "netstep"
    if not binary.is_file():
        pytest.skip(f"no netstep binary at {binary}: build it with `{BUILD_COMMAND}`")
    return binary


def run_netstep(scenario: Path, out: Path, *args: str) -> Path:
    """Run a scenario into ``out`` and return it."""
    subprocess.run(
        [str(netstep_binary()), "run", str(scenario), "--out", str(out), "--quiet", *args],
        check=True,
        cwd=REPO,
    )
    return out


@pytest.fixture(scope="session")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The quickstart scenario, shortened."""
    out = tmp_path_factory.mktemp("runs") / "quickstart"
    return run_netstep(
        REPO / "scenarios" / "quickstart.toml", out, "--set", 'traffic.0.duration="2ms"'
    )


def netstep_supports_trace() -> bool:
    """Whether the binary has ``netstep run --trace`` (packet_hops and queue_samples tables)."""
    done = subprocess.run(
        [str(netstep_binary()), "run", "--help"], capture_output=True, text=True, cwd=REPO
    )
    return "--trace" in done.stdout


@pytest.fixture(scope="session")
def traced_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shortened quickstart traced with ``--trace packet_hops,queue_samples``.

    Fails (does not skip) when the binary lacks ``--trace``: a missing feature is a failure.
    """
    assert netstep_supports_trace(), "this netstep binary has no `run --trace` option"
    out = tmp_path_factory.mktemp("runs") / "traced"
    return run_netstep(
        REPO / "scenarios" / "quickstart.toml",
        out,
        "--set",
        'traffic.0.duration="2ms"',
        "--trace",
        "packet_hops,queue_samples",
        "--sample-interval",
        "10us",
    )
