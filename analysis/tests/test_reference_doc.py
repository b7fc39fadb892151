"""scenarios/REFERENCE.md's field tables are generated from the config types' doc comments by
ci/reference.py: the file must be current, and the check must notice a stale table."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def reference_module() -> ModuleType:
    """ci/reference.py, imported from its path (ci/ is not a package)."""
    spec = importlib.util.spec_from_file_location("reference", REPO / "ci" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up by name.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_reference_tables_are_current() -> None:
    reference = reference_module()
    text = (REPO / "scenarios" / "REFERENCE.md").read_text()
    assert "<!-- fields: " in text
    _, changed = reference.generate(text)
    assert changed == [], f"stale tables {changed}: run python3 ci/reference.py"


def test_a_stale_table_is_noticed_and_regenerated() -> None:
    reference = reference_module()
    text = (REPO / "scenarios" / "REFERENCE.md").read_text()
    row = next(line for line in text.split("\n") if line.startswith("| `mss` |"))
    stale = text.replace(row, row.replace('"1460B"', '"1500B"'), 1)
    regenerated, changed = reference.generate(stale)
    assert changed == ["TcpConfig"]
    assert regenerated == text


def test_the_unit_follows_the_type_when_the_doc_does_not_state_it() -> None:
    reference = reference_module()
    field = reference.Field("count", "u32", False, ["Number of flows."])
    assert reference.cells(field) == ["`count`", "integer", "required", "", "Number of flows."]
    field = reference.Field("ecn", "Option<bool>", True, ["A | B.", "", "Default: false"])
    assert reference.cells(field) == ["`ecn`", "bool", "false", "", "A \\| B."]


def test_a_format_type_without_a_table_is_named() -> None:
    reference = reference_module()
    text = (REPO / "scenarios" / "REFERENCE.md").read_text()
    assert "TcpConfig" in reference.format_types()
    assert reference.unmarked(text) == []
    assert reference.unmarked(text.replace("<!-- fields: TcpConfig -->", "")) == ["TcpConfig"]
