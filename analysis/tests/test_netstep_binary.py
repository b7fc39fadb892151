"""The tests' netstep binary lookup: never a build, a failure or a skip that names the build."""

from __future__ import annotations

from pathlib import Path

import conftest
import pytest


def test_a_netstep_bin_that_names_nothing_fails(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("NETSTEP_BIN", str(tmp_path / "nope"))
    with pytest.raises(pytest.fail.Exception, match="cargo build --release -p netstep"):
        conftest.netstep_binary()


def test_a_missing_release_binary_skips_with_the_build_command(monkeypatch, tmp_path: Path):
    monkeypatch.delenv("NETSTEP_BIN", raising=False)
    monkeypatch.setattr(conftest, "REPO", tmp_path)
    with pytest.raises(pytest.skip.Exception, match="cargo build --release -p netstep"):
        conftest.netstep_binary()
    assert not (tmp_path / "target").exists(), "the lookup must not build anything"


def test_netstep_bin_is_used_as_given(monkeypatch, tmp_path: Path):
    binary = tmp_path / "netstep"
    binary.write_text("")
    monkeypatch.setenv("NETSTEP_BIN", str(binary))
    assert conftest.netstep_binary() == binary
