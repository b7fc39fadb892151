"""Generates the field tables of scenarios/REFERENCE.md from the scenario format's types.

The config types of `crates/netstep-scenario` are the one place a field is documented: its
doc comment's prose is the table's meaning, and a last paragraph of tags gives the other
columns, written as

    /// What the field does (any number of lines and paragraphs).
    ///
    /// Unit: duration · Default: `"0s"` · Example: `start = "1ms"`

(each tag optional; without `Unit:` the unit follows from the Rust type, without `Default:` a
required field says "required" and an optional one "none"; without `Example:` the cell is
empty). A table in REFERENCE.md is generated where a line `<!-- fields: TypeName -->` stands:
the table right after it is replaced by the fields of `pub struct TypeName` (skipping
`#[serde(skip)]` fields), in declaration order. Prose around the tables is hand-written.
Every struct of the scenario crate that derives `Deserialize` (a part of the format) must
have its table, except those REFERENCE.md documents as one row per `kind` (`HAND_WRITTEN`):
`--check` names a type that has neither, so a new kind's fields cannot go undocumented.

Usage: python3 ci/reference.py          rewrite REFERENCE.md
       python3 ci/reference.py --check  exit 1 (naming the tables) when it is stale
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "crates" / "netstep-scenario" / "src"
REFERENCE = ROOT / "scenarios" / "REFERENCE.md"
MARKER = re.compile(r"^<!-- fields: ([A-Za-z0-9_]+) -->$")
HEADER = "| field | unit | default | example | meaning |\n|---|---|---|---|---|"
# Tables whose variants REFERENCE.md documents one `kind` per row, by hand.
HAND_WRITTEN = {"SchedulerConfig", "AqmConfig", "ShaperConfig", "PolicerConfig", "PfcConfig"}
DERIVE = re.compile(r"^#\[derive\(.*\bDeserialize\b")
STRUCT = re.compile(r"^pub struct ([A-Za-z0-9_]+)\b")
TAGS = ("Unit", "Default", "Example")
# Units of Rust types a field's doc does not state.
TYPE_UNITS = [
    (re.compile(r"^(u8|u16|u32|u64|usize)$"), "integer"),
    (re.compile(r"^f64$"), "number"),
    (re.compile(r"^bool$"), "bool"),
    (re.compile(r"^Vec<String>$"), "list of names"),
    (re.compile(r"^String$"), "text"),
]


@dataclass
class Field:
    """One documented field of a config type."""

    name: str
    rust_type: str
    optional: bool
    doc: list[str]


def struct_fields(name: str) -> tuple[Path, list[Field]]:
    """The fields of `pub struct name` in the scenario crate, with their doc comments."""
    pattern = re.compile(rf"^pub struct {name}\b.*\{{$")
    for path in sorted(SOURCES.rglob("*.rs")):
        lines = path.read_text().split("\n")
        for i, line in enumerate(lines):
            if pattern.match(line):
                return path, parse_fields(lines[i + 1 :])
    raise SystemExit(f"ci/reference.py: no `pub struct {name}` in {SOURCES}")


def parse_fields(lines: list[str]) -> list[Field]:
    """Fields from the lines after a struct's opening brace up to its closing one."""
    fields: list[Field] = []
    doc: list[str] = []
    skip = False
    defaulted = False
    for raw in lines:
        line = raw.strip()
        if raw.startswith("}"):
            break
        if line.startswith("///"):
            doc.append(line[3:].removeprefix(" "))
            continue
        if line.startswith("#["):
            skip = skip or line == "#[serde(skip)]"
            defaulted = defaulted or "serde(default" in line
            continue
        m = re.match(r"^pub ([a-z_0-9]+): (.+),$", line)
        if m:
            rust_type = m.group(2)
            optional = rust_type.startswith("Option<") or defaulted
            if not skip:
                fields.append(Field(m.group(1), rust_type, optional, doc))
        doc, skip, defaulted = [], False, False
    return fields


def cells(field: Field) -> list[str]:
    """The row's cells: field, unit, default, example, meaning."""
    paragraphs: list[list[str]] = [[]]
    for line in field.doc:
        if line:
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    tags: dict[str, str] = {}
    prose: list[str] = []
    for paragraph in paragraphs:
        text = " ".join(paragraph)
        if text.split(":", 1)[0] in TAGS:
            for part in text.split(" · "):
                key, _, value = part.partition(":")
                if key.strip() not in TAGS:
                    raise SystemExit(f"ci/reference.py: field `{field.name}`: bad tag {part!r}")
                tags[key.strip()] = value.strip()
        elif text:
            prose.append(text)
    inner = re.sub(r"^(Option|Box)<(.+)>$", r"\2", field.rust_type)
    inner = re.sub(r"^Box<(.+)>$", r"\1", inner)
    unit = tags.get("Unit") or next(
        (u for pattern, u in TYPE_UNITS if pattern.match(inner)), "table"
    )
    default = tags.get("Default") or ("none" if field.optional else "required")
    row = [f"`{field.name}`", unit, default, tags.get("Example", ""), " ".join(prose)]
    return [c.replace("|", "\\|") for c in row]


def table(name: str) -> str:
    """The generated table of config type `name`."""
    _, fields = struct_fields(name)
    rows = ["| " + " | ".join(cells(f)) + " |" for f in fields]
    return HEADER + "\n" + "\n".join(rows)


def format_types() -> list[str]:
    """The structs of the scenario crate that derive `Deserialize`."""
    found = []
    for path in sorted(SOURCES.rglob("*.rs")):
        derived = False
        for line in path.read_text().split("\n"):
            if line.startswith("#[derive("):
                derived = bool(DERIVE.match(line))
            elif m := STRUCT.match(line):
                if derived:
                    found.append(m.group(1))
                derived = False
    return found


def unmarked(text: str) -> list[str]:
    """The format's types with no generated table in `text` and not hand-written."""
    marked = set(re.findall(r"^<!-- fields: ([A-Za-z0-9_]+) -->$", text, re.M))
    return [t for t in format_types() if t not in marked and t not in HAND_WRITTEN]


def generate(text: str) -> tuple[str, list[str]]:
    """REFERENCE.md's text with every marked table regenerated, and the types whose table
    changed."""
    lines = text.split("\n")
    out: list[str] = []
    changed: list[str] = []
    i = 0
    while i < len(lines):
        out.append(lines[i])
        m = MARKER.match(lines[i])
        i += 1
        if not m:
            continue
        start = i
        while i < len(lines) and lines[i].startswith("|"):
            i += 1
        new = table(m.group(1))
        if "\n".join(lines[start:i]) != new:
            changed.append(m.group(1))
        out.append(new)
    return "\n".join(out), changed


def main() -> int:
    """Rewrites REFERENCE.md, or with --check reports whether it is stale."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="fail when REFERENCE.md is stale")
    args = parser.parse_args()
    text = REFERENCE.read_text()
    new, changed = generate(text)
    missing = unmarked(text)
    if missing:
        print(
            f"scenarios/REFERENCE.md has no table for {', '.join(missing)}: add a line "
            "`<!-- fields: TYPE -->` where it belongs and run python3 ci/reference.py",
            file=sys.stderr,
        )
        return 1
    if args.check:
        if changed:
            print(
                f"scenarios/REFERENCE.md is stale for {', '.join(changed)}: "
                "run python3 ci/reference.py",
                file=sys.stderr,
            )
            return 1
        print(f"scenarios/REFERENCE.md is current ({text.count('<!-- fields: ')} tables)")
        return 0
    REFERENCE.write_text(new)
    print(f"rewrote {len(changed)} table(s): {', '.join(changed) or 'none changed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
