#!/usr/bin/env bash
# The test command (README): formatting, lints, Rust tests, Python lint, type check and tests,
# and a release-mode golden run of the quickstart. `.ci/run` calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "set-up (Python analysis package)"
bash ci/setup.sh

step "room sizes: no non-test file over 600 lines (400 in engine/), no function over 150 (ci/limits.py)"
python3 ci/limits.py

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (release, all targets, -D warnings)"
cargo clippy --workspace --all-targets --release -- -D warnings

step "cargo test (release)"
cargo test --workspace --release

step "ruff (analysis, and the scripts in ci/)"
python3 -m ruff check analysis
python3 -m ruff format --check analysis
python3 -m ruff check --config analysis/pyproject.toml ci
python3 -m ruff format --config analysis/pyproject.toml --check ci

step "scenarios/REFERENCE.md's field tables match the config types (ci/reference.py)"
python3 ci/reference.py --check

step "mypy (analysis: package, tests, examples; configured in analysis/pyproject.toml)"
(cd analysis && python3 -m mypy)

step "pytest (analysis)"
NETSTEP_BIN="$PWD/target/release/netstep" python3 -m pytest analysis -q

step "golden run: netstep run (built-in quickstart)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
(cd "$out" && "$OLDPWD/target/release/netstep" run)
test -f "$out/out/quickstart/flows.parquet"
echo "all checks passed"
