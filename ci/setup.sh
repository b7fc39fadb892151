#!/usr/bin/env bash
# Installs what netstep needs beyond Rust and Python 3.11: the Python analysis package with its
# test tools. Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e 'analysis[test]'
