//! `--set KEY=VALUE` overrides applied to the scenario text, and the content hash of the
//! effective text.

use crate::limits;

/// FNV-1a 64: a stable, dependency-free content hash.
pub fn fnv1a(bytes: &[u8], mut hash: u64) -> u64 {
    for &b in bytes {
        hash ^= b as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// Applies `KEY.PATH=VALUE` overrides to the document. Values are parsed as TOML (`8`,
/// `"1us"`, `true`); anything that is not valid TOML is taken as a string (`--set
/// topology.links.rate=10Gbps`). Numeric segments index arrays (`traffic.0.count=4`).
pub fn apply_overrides(text: &str, overrides: &[String]) -> Result<String, String> {
    if overrides.is_empty() {
        return Ok(text.to_string());
    }
    let mut doc: toml::Table = toml::from_str(text).map_err(|e| {
        format!(
            "cannot apply overrides to a scenario that does not parse: {}",
            e.message()
        )
    })?;
    for item in overrides {
        let (key, raw) = item
            .split_once('=')
            .ok_or_else(|| format!("{item:?} is not KEY=VALUE (e.g. topology.k=8)"))?;
        let key = key.trim();
        let value = match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
            Ok(mut t) => t.remove("v").expect("parsed"),
            // A bare word is a string (`--set transport.cc=dctcp`); something that is meant as
            // a TOML array, table or number but does not parse is an error, not a string.
            Err(e) if meant_as_toml(raw) => {
                return Err(format!(
                    "{}: cannot read {raw:?} as a TOML value: {}",
                    key.trim(),
                    e.message().split_whitespace().collect::<Vec<_>>().join(" ")
                ));
            }
            Err(_) => toml::Value::String(raw.to_string()),
        };
        let segments: Vec<&str> = key.split('.').collect();
        if segments.len() > limits::MAX_SET_SEGMENTS {
            return Err(format!(
                "a key path of {} segments; the limit is {} (scenario keys are at most a few deep)",
                segments.len(),
                limits::MAX_SET_SEGMENTS
            ));
        }
        if segments.iter().any(|s| s.is_empty()) {
            return Err(format!(
                "{key:?} is not a dotted key path (e.g. simulation.seed)"
            ));
        }
        set_path(&mut doc, &segments, value).map_err(|e| format!("{key}: {e}"))?;
    }
    toml::to_string(&doc).map_err(|e| format!("cannot re-serialize the scenario: {e}"))
}

fn set_path(table: &mut toml::Table, segments: &[&str], value: toml::Value) -> Result<(), String> {
    let (first, rest) = segments.split_first().expect("non-empty");
    if rest.is_empty() {
        table.insert((*first).to_string(), value);
        return Ok(());
    }
    let entry = table
        .entry((*first).to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    set_value(entry, rest, value)
}

fn set_value(
    current: &mut toml::Value,
    segments: &[&str],
    value: toml::Value,
) -> Result<(), String> {
    match current {
        toml::Value::Table(t) => set_path(t, segments, value),
        toml::Value::Array(items) => {
            let (first, rest) = segments.split_first().expect("non-empty");
            let index: usize = first
                .parse()
                .map_err(|_| format!("{first:?} must be an array index"))?;
            let len = items.len();
            let item = items.get_mut(index).ok_or_else(|| {
                format!("index {index} is out of range (the array has {len} items)")
            })?;
            if rest.is_empty() {
                *item = value;
                Ok(())
            } else {
                set_value(item, rest, value)
            }
        }
        _ => Err(format!(
            "cannot set {:?} inside a value that is not a table",
            segments.join(".")
        )),
    }
}

/// Whether a `--set` value that failed to parse as TOML was meant as a TOML array, table or
/// number (an error) rather than a bare word taken as a string (`dctcp`, `2us`).
fn meant_as_toml(raw: &str) -> bool {
    let raw = raw.trim();
    raw.starts_with(['[', '{', '-', '+'])
        || raw.parse::<f64>().is_ok()
        || (!raw.is_empty() && raw.chars().all(|c| c.is_ascii_digit() || c == '_'))
}
