"""Peak resident set of a benchmarked netstep process, measured as its own.

`wait4`'s `ru_maxrss` of a child forked from this Python process is not the child's own peak:
Linux keeps, across `exec`, the high-water mark of the memory the child had before it (a copy
of this interpreter, 48-65 MB with Polars loaded). GNU time (`/usr/bin/time`, Debian package
`time`) forks from a process of a few hundred kB, so the figure it reports is netstep's own;
without it the wait4 figure is used and labelled as an upper bound.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

GNU_TIME = shutil.which("time", path="/usr/bin:/bin")


def run(cmd: list[str], cwd: Path) -> tuple[int, float, bool]:
    """Runs `cmd` in `cwd`; returns its exit status, its peak RSS in MB and whether that figure
    is the process's own (False: wait4's, which includes this interpreter's pages)."""
    if GNU_TIME is None:
        proc = subprocess.Popen(cmd, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        return os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024, False
    with tempfile.NamedTemporaryFile("r") as report:
        status = subprocess.call([GNU_TIME, "-f", "%M", "-o", report.name, *cmd], cwd=cwd)
        lines = Path(report.name).read_text().split()
    return status, int(lines[-1]) / 1024, True
