"""The house limits on room sizes, counted: no non-test Rust file over 600 lines (400 under
`engine/`), no function over 150 lines outside tests. Test code is left out: files under a
`tests/` folder, files named `tests.rs`, and a trailing `#[cfg(test)]` module. Prints the
largest files and functions; exits 1 when a limit is broken.

Usage: python3 ci/limits.py [--top N]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILE_LIMIT = 600
ENGINE_LIMIT = 400
FN_LIMIT = 150
FN_START = re.compile(r"^\s*(pub(\([a-z]+\))?\s+)?(const\s+)?(unsafe\s+)?fn\s+([A-Za-z_0-9]+)")


def non_test_lines(text: str) -> list[str]:
    """The file's lines before its `#[cfg(test)]` module, if any."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("#[cfg(test)]") and i + 1 < len(lines) and "mod " in lines[i + 1]:
            if lines[i + 1].rstrip().endswith(";"):
                continue
            return lines[:i]
    return lines


def functions(lines: list[str]) -> list[tuple[str, int, int]]:
    """(name, first line, length) of every function with a body, by brace matching."""
    found = []
    for i, line in enumerate(lines):
        m = FN_START.match(line)
        if not m:
            continue
        depth = 0
        opened = False
        for j in range(i, len(lines)):
            code = lines[j].split("//")[0]
            depth += code.count("{") - code.count("}")
            if "{" in code:
                opened = True
            if not opened and code.rstrip().endswith(";"):
                break
            if opened and depth <= 0:
                found.append((m.group(5), i + 1, j - i + 1))
                break
    return found


def main() -> int:
    """Counts and reports; 1 when a limit is broken."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--top", type=int, default=5, help="largest files and functions shown")
    args = parser.parse_args()
    files = []
    fns = []
    for path in sorted((ROOT / "crates").rglob("*.rs")):
        rel = path.relative_to(ROOT)
        if "tests" in rel.parts or path.name == "tests.rs":
            continue
        lines = non_test_lines(path.read_text())
        limit = ENGINE_LIMIT if "engine" in rel.parts else FILE_LIMIT
        files.append((len(lines), limit, str(rel)))
        fns.extend((n, str(rel), at, length) for n, at, length in functions(lines))
    bad = [f for f in files if f[0] > f[1]] + [
        (length, FN_LIMIT, f"{rel}:{at} {name}")
        for name, rel, at, length in fns
        if length > FN_LIMIT
    ]
    files.sort(reverse=True)
    fns.sort(key=lambda f: -f[3])
    print(f"{len(files)} non-test Rust files; largest:")
    for n, limit, rel in files[: args.top]:
        print(f"  {n:5} lines (limit {limit})  {rel}")
    print(f"{len(fns)} functions; longest:")
    for name, rel, at, length in fns[: args.top]:
        print(f"  {length:5} lines (limit {FN_LIMIT})  {rel}:{at} {name}")
    for n, limit, what in bad:
        print(f"OVER: {what}: {n} lines, limit {limit}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
