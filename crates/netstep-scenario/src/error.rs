//! Scenario errors: each names the file, the field path, the line and column where the parser
//! knows them, the offending value and what was expected.

use std::fmt;

use netstep_core::units::UnitError;

/// One segment of a field path (`traffic[0].flows[2].src`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// A table key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// A field path inside the scenario document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldPath(pub Vec<Segment>);

impl FieldPath {
    /// A path from dotted keys: `FieldPath::of(&["topology", "k"])`.
    pub fn of(keys: &[&str]) -> FieldPath {
        FieldPath(
            keys.iter()
                .map(|k| Segment::Key((*k).to_string()))
                .collect(),
        )
    }
    /// This path plus a key.
    pub fn key(&self, key: &str) -> FieldPath {
        let mut p = self.clone();
        p.0.push(Segment::Key(key.to_string()));
        p
    }
    /// This path plus an index.
    pub fn index(&self, index: usize) -> FieldPath {
        let mut p = self.clone();
        p.0.push(Segment::Index(index));
        p
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Segment::Key(k) if i == 0 => write!(f, "{k}")?,
                Segment::Key(k) => write!(f, ".{k}")?,
                Segment::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// A problem found while validating, before it is placed in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// Where in the document.
    pub path: FieldPath,
    /// What is wrong, with the value and what was expected.
    pub message: String,
}

impl Invalid {
    /// A new problem at `path`.
    pub fn new(path: FieldPath, message: impl Into<String>) -> Invalid {
        Invalid {
            path,
            message: message.into(),
        }
    }
    /// A unit string that did not parse.
    pub fn unit(path: FieldPath, err: UnitError) -> Invalid {
        Invalid::new(
            path,
            format!(
                "{:?} is not a valid {}: expected {}",
                err.value, err.kind, err.expected
            ),
        )
    }
}

/// A scenario that cannot be run, located as precisely as the parser allows.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioError {
    /// The file (or `<built-in quickstart>`).
    pub file: String,
    /// 1-based line and column, when known.
    pub line_col: Option<(usize, usize)>,
    /// Field path (empty for syntax errors).
    pub field: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some((line, col)) = self.line_col {
            write!(f, ":{line}:{col}")?;
        }
        if !self.field.is_empty() {
            write!(f, ": {}", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// A TOML or serde error in `text` (shown as `file`) as one line: line:column of the key the
/// message is about (found inside the enclosing table when the parser only reports that, see
/// [`refine`]), the field and the message, without the parser's multi-line snippet.
pub fn toml_error(text: &str, file: &str, e: &toml::de::Error) -> ScenarioError {
    let message = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
    let found = e.span().and_then(|span| {
        refine(text, span.clone(), &message)
            .or_else(|| unknown_key_after(text, span.start, &message))
    });
    let (at, key) = match found {
        Some((offset, key)) => (Some(offset), key),
        None => {
            let at = e.span().map(|s| s.start);
            // A top-level unknown key: the parser points at the key itself.
            let unknown = message
                .strip_prefix("unknown field `")
                .and_then(|rest| rest.split('`').next())
                .filter(|name| at.is_some_and(|a| text[a.min(text.len())..].starts_with(name)));
            let key = match unknown {
                Some(name) => Some(name.to_string()),
                None => at.and_then(|offset| key_before(text, offset)),
            };
            (at, key.unwrap_or_default())
        }
    };
    let field = match at {
        Some(offset) if !key.is_empty() => {
            document_path(text, offset).unwrap_or_else(|| field_path(text, offset, &key))
        }
        _ => key,
    };
    let message = plain_types(unit_hint(&field, message));
    ScenarioError {
        file: file.to_string(),
        line_col: at.map(|offset| line_col(text, offset)),
        field,
        message,
    }
}

/// Every string-valued setting of the scenario and sweep formats that is not a name, a path or
/// a kind is a quantity with a unit; a bare number there gets the accepted form.
fn unit_hint(field: &str, message: String) -> String {
    const NAMES: [&str; 13] = [
        "name", "src", "dst", "path", "link", "nodes", "hosts", "switches", "a", "b", "cdf",
        "scenario", "key",
    ];
    let last = field.rsplit('.').next().unwrap_or("");
    let last = last.split('[').next().unwrap_or(last);
    let number = message
        .strip_prefix("invalid type: integer `")
        .or_else(|| message.strip_prefix("invalid type: floating point `"))
        .and_then(|rest| rest.strip_suffix("`, expected a string"));
    match number {
        Some(n) if !NAMES.contains(&last) => format!(
            "expected a quantity with its unit, as a string (such as \"{n}us\", \"{n}B\" or \"{n}Gbps\": see scenarios/REFERENCE.md for this field's unit), got {n}"
        ),
        _ => message,
    }
}

/// A key of a parsed document: where it starts, its full path and, for a simple value, the
/// value's span.
type DocumentKey = (usize, FieldPath, Option<std::ops::Range<usize>>);

/// Every key of a parsed document (and every simple value of an array): where it starts, its
/// full path (keys and array indices) and, for a simple value, the value's span.
fn document_keys(text: &str) -> Option<Vec<DocumentKey>> {
    let doc = toml::de::DeTable::parse(text).ok()?;
    let mut keys = Vec::new();
    table_keys(doc.get_ref(), &mut FieldPath::default(), &mut keys);
    Some(keys)
}

/// [`document_keys`] of `table`, whose path is `path`.
fn table_keys(table: &toml::de::DeTable<'_>, path: &mut FieldPath, keys: &mut Vec<DocumentKey>) {
    for (key, value) in table.iter() {
        path.0.push(Segment::Key(key.get_ref().to_string()));
        let at = keys.len();
        keys.push((key.span().start, path.clone(), None));
        keys[at].2 = value_keys(value, path, keys);
        path.0.pop();
    }
}

/// [`document_keys`] inside `value` at `path`; returns its span when it is a simple value.
fn value_keys(
    value: &toml::Spanned<toml::de::DeValue<'_>>,
    path: &mut FieldPath,
    keys: &mut Vec<DocumentKey>,
) -> Option<std::ops::Range<usize>> {
    use toml::de::DeValue;
    match value.get_ref() {
        DeValue::Table(t) => table_keys(t, path, keys),
        DeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.0.push(Segment::Index(i));
                // A simple value in an array is named by its index.
                if let Some(span) = value_keys(item, path, keys) {
                    keys.push((span.start, path.clone(), Some(span)));
                }
                path.0.pop();
            }
        }
        _ => return Some(value.span()),
    }
    None
}

/// The full path of the key at byte `offset`, or of the key whose simple value holds it, read
/// from the parsed document: exact whatever the layout (table headers, arrays of tables,
/// inline tables across lines). `None` when no key is there.
fn document_path(text: &str, offset: usize) -> Option<String> {
    let keys = document_keys(text)?;
    let found = keys.iter().find(|(at, _, _)| *at == offset).or_else(|| {
        keys.iter()
            .find(|(_, _, value)| value.as_ref().is_some_and(|v| v.contains(&offset)))
    });
    found.map(|(_, path, _)| path.to_string())
}

/// For "unknown field `name`" when the parser's span (a table tagged by `kind` whose body it
/// cannot see, or the table holding an array of tables) does not contain the key: the first
/// key `name` at or after `from` in the parsed document.
fn unknown_key_after(text: &str, from: usize, message: &str) -> Option<(usize, String)> {
    let name = message.strip_prefix("unknown field `")?.split('`').next()?;
    let named = |path: &FieldPath| matches!(path.0.last(), Some(Segment::Key(k)) if k == name);
    document_keys(text)?
        .into_iter()
        .filter(|(at, path, _)| *at >= from && named(path))
        .map(|(at, _, _)| at)
        .min()
        .map(|at| (at, name.to_string()))
}

/// Serde's Rust type names in "expected ..." as the scenario format's words.
fn plain_types(message: String) -> String {
    const TYPES: [(&str, &str); 9] = [
        ("expected u8", "expected an integer from 0 to 255"),
        ("expected u16", "expected an integer from 0 to 65535"),
        ("expected u32", "expected an integer from 0 to 4294967295"),
        ("expected u64", "expected a non-negative integer"),
        ("expected usize", "expected a non-negative integer"),
        ("expected i64", "expected an integer"),
        ("expected f64", "expected a number"),
        ("expected a boolean", "expected true or false"),
        ("expected a sequence", "expected a list such as [1, 2]"),
    ];
    for (from, to) in TYPES {
        if let Some(at) = message.find(from) {
            let end = at + from.len();
            // Whole words only ("expected u32" must not rewrite "expected u32x").
            if !message[end..].starts_with(|c: char| c.is_ascii_alphanumeric()) {
                return format!("{}{to}{}", &message[..at], &message[end..]);
            }
        }
    }
    message
}

/// The key whose value holds `offset`: the last `key =` before it on its line (inside an
/// inline table, the inner key).
fn key_before(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[start..offset];
    let eq = before.rfind('=')?;
    let lhs = before[..eq].trim_end();
    let simple = |c: char| c.is_ascii_alphanumeric() || "_-\"".contains(c);
    let from = lhs.rfind(|c: char| !simple(c)).map_or(0, |i| i + 1);
    let key = lhs[from..].trim_matches('"');
    (!key.is_empty()).then(|| key.to_string())
}

/// The full path of `key` found at `offset`: the enclosing table header (`[a.b]`, or
/// `[[name]]` as `name[i]` counting the headers before it) and, for a key inside an inline
/// table, the key of its line (`transport.kind`).
fn field_path(text: &str, offset: usize, key: &str) -> String {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let mut path = Vec::new();
    let before = &text[..start];
    // A table header: `[a.b]` or `[[name]]` alone on its line (not an array's element line).
    let is_header = |l: &str| {
        let l = l.split('#').next().unwrap_or("").trim();
        l.starts_with('[') && l.ends_with(']') && !l.contains(',') && !l.contains('{')
    };
    let mut section = 0;
    for (i, _) in before.match_indices('\n') {
        let line_start = before[..i].rfind('\n').map_or(0, |j| j + 1);
        if is_header(&before[line_start..i]) {
            section = i + 1;
        }
    }
    if let Some(header) = before.lines().rev().map(str::trim).find(|l| is_header(l)) {
        if let Some(name) = header.strip_prefix("[[").and_then(|h| h.split("]]").next()) {
            let name = name.trim();
            let index = before
                .lines()
                .filter(|l| {
                    l.trim()
                        .strip_prefix("[[")
                        .and_then(|h| h.split("]]").next())
                        .map(str::trim)
                        == Some(name)
                })
                .count();
            path.push(format!("{name}[{}]", index.saturating_sub(1)));
        } else if let Some(name) = header.strip_prefix('[').and_then(|h| h.split(']').next()) {
            path.push(name.trim().to_string());
        }
    }
    // Inside inline tables and arrays on the key's line: their keys and element indices
    // (`links = [{ a_to_b = { bogus` is `links[0].a_to_b.bogus`).
    // (from the table header on, so an array of inline tables over several lines counts its
    // elements).
    path.extend(inline_path(&text[section.min(start)..offset]));
    let indexed = format!("{key}[");
    if !path
        .last()
        .is_some_and(|last| last == key || last.starts_with(&indexed))
    {
        path.push(key.to_string());
    }
    path.join(".")
}

/// The path to the innermost inline table or array open at the end of `line` (TOML from a
/// table's header up to some offset): `key` for a table, `key[i]` for the i-th element of an
/// array.
fn inline_path(line: &str) -> Vec<String> {
    enum Frame {
        Table(Option<String>),
        Array(Option<String>, usize),
    }
    let mut frames: Vec<Frame> = Vec::new();
    let mut word = String::new();
    let mut key: Option<String> = None;
    let mut in_string = false;
    let mut in_comment = false;
    for c in line.chars() {
        if in_comment {
            in_comment = c != '\n';
            continue;
        }
        if in_string {
            if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '#' => in_comment = true,
            // A new line outside any inline table or array ends a top-level key's value.
            '\n' if frames.is_empty() => {
                key = None;
                word.clear();
            }
            '=' => key = Some(std::mem::take(&mut word)),
            '{' => {
                frames.push(Frame::Table(key.take()));
                word.clear();
            }
            '[' => {
                frames.push(Frame::Array(key.take(), 0));
                word.clear();
            }
            '}' | ']' => {
                frames.pop();
                key = None;
                word.clear();
            }
            ',' => {
                if let Some(Frame::Array(_, i)) = frames.last_mut() {
                    *i += 1;
                }
                key = None;
                word.clear();
            }
            c if c.is_ascii_alphanumeric() || c == '_' || c == '-' => word.push(c),
            _ => {}
        }
    }
    let mut path: Vec<String> = Vec::new();
    for frame in frames {
        match frame {
            Frame::Table(Some(k)) => path.push(k),
            Frame::Table(None) => {}
            Frame::Array(k, i) => {
                let name = k.or_else(|| path.pop()).unwrap_or_default();
                path.push(format!("{name}[{i}]"));
            }
        }
    }
    path
}

/// 1-based line and column of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(offset, |nl| offset - nl - 1) + 1;
    (line, col)
}

/// Byte span of the value at `path` in a TOML document (or of its deepest existing parent).
pub fn locate(text: &str, path: &FieldPath) -> Option<std::ops::Range<usize>> {
    use toml::de::{DeArray, DeTable, DeValue};
    let doc = DeTable::parse(text).ok()?;
    let mut span = None;
    let mut table: Option<&DeTable> = Some(doc.get_ref());
    let mut array: Option<&DeArray> = None;
    for seg in &path.0 {
        let next = match seg {
            Segment::Key(k) => table.and_then(|t| t.get(k.as_str())),
            Segment::Index(i) => array.and_then(|a| a.get(*i)),
        };
        let Some(next) = next else { break };
        span = Some(next.span());
        table = None;
        array = None;
        match next.get_ref() {
            DeValue::Table(t) => table = Some(t),
            DeValue::Array(a) => array = Some(a),
            _ => {}
        }
    }
    span
}

/// Finds the key a serde message is about inside the table at `span` of `text`, when the
/// parser could only point at the table (as it does inside tables tagged by `kind`): an
/// unknown field by its name, a wrongly typed value by the value the message quotes. Returns
/// the key's byte offset and name.
pub fn refine(
    text: &str,
    mut span: std::ops::Range<usize>,
    message: &str,
) -> Option<(usize, String)> {
    if let Some(header) = text.get(span.clone()).filter(|h| h.starts_with('[')) {
        // A table header: the table runs to the next header at the start of a line that is
        // not one of its own subtables (`[a.b]` holds `[a.b.c]`, which a serializer writes as a
        // header of its own).
        let name = header
            .trim_matches(|c| c == '[' || c == ']')
            .trim()
            .to_string();
        let sub = format!("[{name}.");
        let body = &text[span.end..];
        let next = body.match_indices("\n[").map(|(i, _)| i + 1).find(|&i| {
            let rest = &body[i..];
            rest[1..]
                .chars()
                .next()
                .is_some_and(|c| c == '[' || c.is_ascii_alphabetic())
                && !rest.starts_with(&sub)
        });
        span.end = next.map_or(text.len(), |i| span.end + i);
    }
    let table = text.get(span.clone())?;
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let name = rest.split('`').next()?;
        return find_key(table, name).map(|at| (span.start + at, name.to_string()));
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let name = rest.split('`').next()?;
        return find_value(table, &format!("\"{name}\"")).map(|(at, key)| (span.start + at, key));
    }
    let rest = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))?;
    let literal = if let Some(quoted) = rest.strip_prefix("string ") {
        // The message quotes strings with Rust escapes; simple values read the same in TOML.
        quoted.split(", expected").next()?.to_string()
    } else {
        let tick = rest.find('`')?;
        let value = rest[tick + 1..].split('`').next()?;
        value.to_string()
    };
    if literal.is_empty() {
        return None;
    }
    find_value(table, &literal).map(|(at, key)| (span.start + at, key))
}

/// The key (offset and name) whose value is `literal` in `table` (`key = literal`).
fn find_value(table: &str, literal: &str) -> Option<(usize, String)> {
    let mut from = 0;
    while let Some(found) = table[from..].find(literal) {
        let at = from + found;
        from = at + literal.len();
        let end_ok = table[from..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'));
        let before = table[..at].trim_end();
        if end_ok && let Some(lhs) = before.strip_suffix('=') {
            let lhs = lhs.trim_end();
            let start = lhs
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .map_or(0, |i| i + 1);
            let key = &lhs[start..];
            if !key.is_empty() {
                return Some((start, key.to_string()));
            }
        }
    }
    None
}

/// Offset of `name` used as a key (`name =`) in `table`.
fn find_key(table: &str, name: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = table[from..].find(name) {
        let at = from + found;
        from = at + name.len();
        let starts_word = table[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'));
        if starts_word && table[from..].trim_start().starts_with('=') {
            return Some(at);
        }
    }
    None
}

#[cfg(test)]
mod refine_tests {
    use super::{field_path, key_before, refine};

    #[test]
    fn a_field_is_named_with_its_table_and_inline_table() {
        let text = "name = \"x\"\n[[traffic]]\nload = 1\n[[traffic]]\ntransport = { kind = \"tcpx\" }\nload = 2\n[random]\nsamples = -3\n";
        let at = |needle: &str| text.find(needle).unwrap();
        assert_eq!(field_path(text, at("name"), "name"), "name");
        assert_eq!(field_path(text, at("load = 1"), "load"), "traffic[0].load");
        assert_eq!(field_path(text, at("load = 2"), "load"), "traffic[1].load");
        assert_eq!(
            field_path(text, at("kind"), "kind"),
            "traffic[1].transport.kind"
        );
        assert_eq!(field_path(text, at("samples"), "samples"), "random.samples");
        assert_eq!(key_before(text, at("-3")).as_deref(), Some("samples"));
        assert_eq!(key_before(text, at("samples")), None);
        let inline = "[switch]\npfc = { classes = [-3], xoff = \"40KB\" }\n";
        let minus = inline.find("-3").unwrap();
        assert_eq!(key_before(inline, minus).as_deref(), Some("classes"));
        assert_eq!(
            field_path(inline, minus, "classes"),
            "switch.pfc.classes[0]"
        );
        let links = "[topology]\nlinks = [{ a = \"x\" }, { a = \"a\", a_to_b = { rate = \"1Gbps\", bogus = 1 } }]\n";
        let bogus = links.find("bogus").unwrap();
        assert_eq!(
            field_path(links, bogus, "bogus"),
            "topology.links[1].a_to_b.bogus"
        );
        let flows = "[[traffic]]\nflows = [{ src = \"h0\", packts = 3 }]\n";
        let packts = flows.find("packts").unwrap();
        assert_eq!(
            field_path(flows, packts, "packts"),
            "traffic[0].flows[0].packts"
        );
    }

    #[test]
    fn finds_the_key_of_a_mistyped_or_unknown_value() {
        let text =
            "[[traffic]]\nkind = \"random_pairs\"\ncount = \"3\"\nsize = 7\n[trace]\nx = 7\n";
        // The parser points at the header; the table runs to the next one.
        let span = 0..11;
        let (at, key) = refine(
            text,
            span.clone(),
            "invalid type: string \"3\", expected u32",
        )
        .unwrap();
        assert_eq!((key.as_str(), &text[at..at + 5]), ("count", "count"));
        let (_, key) = refine(
            text,
            span.clone(),
            "invalid type: integer `7`, expected a string",
        )
        .unwrap();
        assert_eq!(key, "size");
        let (at, key) = refine(
            text,
            span.clone(),
            "unknown field `size`, expected one of `count`",
        )
        .unwrap();
        assert_eq!((key.as_str(), at), ("size", text.find("size").unwrap()));
        let (_, key) = refine(
            text,
            span.clone(),
            "unknown variant `random_pairs`, expected `flows`",
        )
        .unwrap();
        assert_eq!(key, "kind");
        assert_eq!(refine(text, span, "missing field `count`"), None);
    }
}
