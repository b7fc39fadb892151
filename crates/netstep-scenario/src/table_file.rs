//! Tabular input files (flow traces, link lists) read row by row from CSV or Parquet, so a
//! file of millions of rows is streamed, never copied into TOML. Columns are found by name in
//! the header (CSV) or schema (Parquet); errors name the file, the row and the column.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// Rows per Parquet batch.
const BATCH_ROWS: usize = 64 * 1024;

/// One cell: text (CSV cells, Parquet strings), an integer, a float, a list of integers, or
/// nothing (an empty CSV cell, a Parquet null, a missing column).
#[derive(Clone, Debug, PartialEq)]
pub enum Cell<'a> {
    /// No value.
    Null,
    /// Text.
    Text(&'a str),
    /// An integer column's value.
    Int(i128),
    /// A floating-point column's value.
    Float(f64),
    /// A list column's values (integers).
    List(Vec<i128>),
}

impl Cell<'_> {
    /// The cell as a non-negative integer: an integer, or text of decimal digits.
    pub fn unsigned(&self) -> Result<Option<u64>, String> {
        match self {
            Cell::Null => Ok(None),
            Cell::Int(v) => u64::try_from(*v)
                .map(Some)
                .map_err(|_| format!("expected a non-negative integer, got {v}")),
            Cell::Text(t) => t
                .trim()
                .parse::<u64>()
                .map(Some)
                .map_err(|_| format!("expected a non-negative integer, got {t:?}")),
            Cell::Float(f) => Err(format!("expected an integer, got {f}")),
            Cell::List(_) => Err("expected an integer, got a list".to_string()),
        }
    }

    /// The cell as a number: an integer, a float, or text of a number.
    pub fn number(&self) -> Result<Option<f64>, String> {
        match self {
            Cell::Null => Ok(None),
            Cell::Int(v) => Ok(Some(*v as f64)),
            Cell::Float(f) => Ok(Some(*f)),
            Cell::Text(t) => t
                .trim()
                .parse::<f64>()
                .map(Some)
                .map_err(|_| format!("expected a number, got {t:?}")),
            Cell::List(_) => Err("expected a number, got a list".to_string()),
        }
    }

    /// The cell as text (an integer is shown in decimal).
    pub fn text(&self) -> Result<Option<std::borrow::Cow<'_, str>>, String> {
        match self {
            Cell::Null => Ok(None),
            Cell::Text(t) => Ok(Some(std::borrow::Cow::Borrowed(t))),
            Cell::Int(v) => Ok(Some(std::borrow::Cow::Owned(v.to_string()))),
            Cell::Float(f) => Err(format!("expected text, got the number {f}")),
            Cell::List(_) => Err("expected text, got a list".to_string()),
        }
    }

    /// The cell as a list of non-negative integers: a list column, or text of integers
    /// separated by spaces, commas or semicolons (empty: no values).
    pub fn id_list(&self) -> Result<Vec<u64>, String> {
        match self {
            Cell::Null => Ok(Vec::new()),
            Cell::List(values) => values
                .iter()
                .map(|&v| match v {
                    NULL_ITEM => Err("a null inside the list; expected flow ids".to_string()),
                    v => u64::try_from(v).map_err(|_| format!("expected flow ids (>= 0), got {v}")),
                })
                .collect(),
            Cell::Int(v) => {
                Ok(vec![u64::try_from(*v).map_err(|_| {
                    format!("expected a flow id (>= 0), got {v}")
                })?])
            }
            Cell::Text(t) => t
                .split([' ', ',', ';'])
                .filter(|p| !p.is_empty())
                .map(|p| {
                    p.parse::<u64>().map_err(|_| {
                        format!("expected flow ids separated by spaces, got {p:?} in {t:?}")
                    })
                })
                .collect(),
            Cell::Float(f) => Err(format!("expected flow ids, got the number {f}")),
        }
    }
}

/// A CSV or Parquet file (by its extension: `.csv`, `.parquet`).
pub struct TableFile {
    path: PathBuf,
    shown: String,
    parquet: bool,
}

/// Where a row is, for errors (CSV adds its line).
#[derive(Clone, Copy, Debug)]
pub struct RowAt {
    /// Data row, from 1.
    pub row: u64,
    /// CSV line (the header is line 1), if CSV.
    pub line: Option<u64>,
}

impl TableFile {
    /// Opens `path` (shown in errors as `shown`), by its extension.
    pub fn open(path: &Path, shown: &str) -> Result<TableFile, String> {
        let parquet = match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("parquet") => true,
            Some(e) if e.eq_ignore_ascii_case("csv") => false,
            _ => {
                return Err(format!(
                    "{shown}: expected a .csv or .parquet file (by its extension)"
                ));
            }
        };
        if !path.is_file() {
            return Err(format!("{shown}: no such file"));
        }
        Ok(TableFile {
            path: path.to_path_buf(),
            shown: shown.to_string(),
            parquet,
        })
    }

    /// The file as shown in errors.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// `FILE row id N[ (line L)], column C: message`, with the row id counted from 0 (the
    /// ids `after` uses; Polars' `with_row_index`).
    pub fn error(&self, at: RowAt, column: &str, message: &str) -> String {
        let line = at.line.map_or(String::new(), |l| format!(" (line {l})"));
        format!(
            "{}: row id {}{line}, column {column:?}: {message}",
            self.shown,
            at.row.saturating_sub(1)
        )
    }

    /// Number of data rows when it is known without reading them (Parquet: its footer).
    pub fn known_rows(&self) -> Option<u64> {
        if self.parquet {
            self.row_count().ok()
        } else {
            None
        }
    }

    /// Number of data rows (Parquet: from the footer; CSV: by reading the records).
    pub fn row_count(&self) -> Result<u64, String> {
        if self.parquet {
            let file = File::open(&self.path).map_err(|e| format!("{}: {e}", self.shown))?;
            let builder = ParquetRecordBatchReaderBuilder::try_new(file)
                .map_err(|e| format!("{}: not a Parquet file: {e}", self.shown))?;
            return Ok(builder.metadata().file_metadata().num_rows().max(0) as u64);
        }
        let mut reader = self.csv_reader()?;
        let mut record = csv::ByteRecord::new();
        let mut rows = 0;
        while reader
            .read_byte_record(&mut record)
            .map_err(|e| format!("{}: {e}", self.shown))?
        {
            rows += 1;
        }
        Ok(rows)
    }

    fn csv_reader(&self) -> Result<csv::Reader<File>, String> {
        csv::ReaderBuilder::new()
            .has_headers(true)
            .comment(Some(b'#'))
            .trim(csv::Trim::All)
            .from_path(&self.path)
            .map_err(|e| format!("{}: {e}", self.shown))
    }

    /// Calls `each(row, cells)` for every row, with the cells of `columns` in that order (a
    /// column the file lacks gives [`Cell::Null`]). Refuses a file that has a column outside
    /// `known` (a misspelling would otherwise be ignored). Returns the columns present.
    pub fn for_each_row(
        &self,
        columns: &[&str],
        known: &[&str],
        mut each: impl FnMut(RowAt, &[Cell<'_>]) -> Result<(), String>,
    ) -> Result<Vec<bool>, String> {
        let check_header = |names: &[String]| -> Result<Vec<Option<usize>>, String> {
            for (i, name) in names.iter().enumerate() {
                if !known.contains(&name.as_str()) {
                    return Err(format!(
                        "{}: column {} is {name:?}, which is not one of {}",
                        self.shown,
                        i + 1,
                        known.join(", ")
                    ));
                }
                if names[..i].contains(name) {
                    return Err(format!("{}: column {name:?} appears twice", self.shown));
                }
            }
            Ok(columns
                .iter()
                .map(|c| names.iter().position(|n| n == c))
                .collect())
        };
        if self.parquet {
            let file = File::open(&self.path).map_err(|e| format!("{}: {e}", self.shown))?;
            let builder = ParquetRecordBatchReaderBuilder::try_new(file)
                .map_err(|e| format!("{}: not a Parquet file: {e}", self.shown))?;
            let names: Vec<String> = builder
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect();
            let index = check_header(&names)?;
            let reader = builder
                .with_batch_size(BATCH_ROWS)
                .build()
                .map_err(|e| format!("{}: {e}", self.shown))?;
            let mut row = 0u64;
            for batch in reader {
                let batch = batch.map_err(|e| format!("{}: {e}", self.shown))?;
                let cols: Vec<Option<Column<'_>>> = index
                    .iter()
                    .zip(columns)
                    .map(|(i, name)| {
                        i.map(|i| Column::of(batch.column(i), &batch, name, &self.shown))
                            .transpose()
                    })
                    .collect::<Result<_, _>>()?;
                for r in 0..batch.num_rows() {
                    row += 1;
                    let cells: Vec<Cell<'_>> = cols
                        .iter()
                        .map(|c| c.as_ref().map_or(Cell::Null, |c| c.cell(r)))
                        .collect();
                    each(RowAt { row, line: None }, &cells)?;
                }
            }
            return Ok(index.iter().map(Option::is_some).collect());
        }
        let mut reader = self.csv_reader()?;
        let names: Vec<String> = reader
            .headers()
            .map_err(|e| format!("{}: {e}", self.shown))?
            .iter()
            .map(str::to_string)
            .collect();
        let index = check_header(&names)?;
        let mut record = csv::StringRecord::new();
        let mut row = 0u64;
        loop {
            match reader.read_record(&mut record) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => return Err(format!("{}: {e}", self.shown)),
            }
            row += 1;
            let line = record.position().map(|p| p.line());
            let cells: Vec<Cell<'_>> = index
                .iter()
                .map(|i| match i.and_then(|i| record.get(i)) {
                    None | Some("") => Cell::Null,
                    Some(text) => Cell::Text(text),
                })
                .collect();
            each(RowAt { row, line }, &cells)?;
        }
        Ok(index.iter().map(Option::is_some).collect())
    }
}

/// One Parquet column of a batch, typed once.
enum Column<'a> {
    Text(&'a arrow_array::StringArray),
    LargeText(&'a arrow_array::LargeStringArray),
    Dictionary {
        keys: Vec<usize>,
        values: ArrayRef,
        array: &'a dyn Array,
    },
    Int(Vec<Option<i128>>),
    View(&'a arrow_array::StringViewArray),
    Float(&'a arrow_array::Float64Array),
    Lists(Vec<Option<Vec<i128>>>),
}

/// A null item inside a list column (refused by [`Cell::id_list`]).
const NULL_ITEM: i128 = i128::MIN;

fn ints(array: &dyn Array) -> Option<Vec<Option<i128>>> {
    macro_rules! collect {
        ($($t:ty),*) => {
            $(if let Some(a) = array.as_primitive_opt::<$t>() {
                return Some(a.iter().map(|v| v.map(|v| v as i128)).collect());
            })*
        };
    }
    collect!(
        Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type
    );
    None
}

impl<'a> Column<'a> {
    fn of(
        array: &'a ArrayRef,
        _batch: &RecordBatch,
        name: &str,
        shown: &str,
    ) -> Result<Column<'a>, String> {
        let unsupported = || {
            format!(
                "{shown}: column {name:?} has type {}; expected text or integers",
                array.data_type()
            )
        };
        Ok(match array.data_type() {
            DataType::Utf8 => Column::Text(array.as_string::<i32>()),
            DataType::LargeUtf8 => Column::LargeText(array.as_string::<i64>()),
            DataType::Dictionary(_, value) if **value == DataType::Utf8 => {
                let dict = array.as_any_dictionary_opt().ok_or_else(unsupported)?;
                Column::Dictionary {
                    keys: dict.normalized_keys(),
                    values: dict.values().clone(),
                    array: array.as_ref(),
                }
            }
            DataType::Utf8View => Column::View(array.as_string_view()),
            DataType::Float64 => Column::Float(array.as_primitive()),
            DataType::List(item) | DataType::LargeList(item) => {
                let lists: Vec<Option<ArrayRef>> = match array.data_type() {
                    DataType::List(_) => array.as_list::<i32>().iter().collect(),
                    _ => array.as_list::<i64>().iter().collect(),
                };
                let mut rows = Vec::with_capacity(lists.len());
                for list in lists {
                    rows.push(match list {
                        None => None,
                        Some(values) => Some(
                            ints(values.as_ref())
                                .ok_or_else(|| {
                                    format!(
                                        "{shown}: column {name:?} is a list of {}; expected a list of integers",
                                        item.data_type()
                                    )
                                })?
                                .into_iter()
                                // A null item is no flow id: refused when the list is read.
                                .map(|v| v.unwrap_or(NULL_ITEM))
                                .collect(),
                        ),
                    });
                }
                Column::Lists(rows)
            }
            _ => Column::Int(ints(array.as_ref()).ok_or_else(unsupported)?),
        })
    }

    fn cell(&self, r: usize) -> Cell<'_> {
        let null = match self {
            Column::Text(a) => a.is_null(r),
            Column::LargeText(a) => a.is_null(r),
            Column::View(a) => a.is_null(r),
            Column::Dictionary { array, .. } => array.is_null(r),
            Column::Float(a) => a.is_null(r),
            Column::Int(v) => v[r].is_none(),
            Column::Lists(rows) => rows[r].is_none(),
        };
        if null {
            return Cell::Null;
        }
        match self {
            Column::Text(a) => Cell::Text(a.value(r)),
            Column::LargeText(a) => Cell::Text(a.value(r)),
            Column::View(a) => Cell::Text(a.value(r)),
            Column::Dictionary { keys, values, .. } => {
                Cell::Text(values.as_string::<i32>().value(keys[r]))
            }
            Column::Float(a) => Cell::Float(a.value(r)),
            Column::Int(v) => v[r].map_or(Cell::Null, Cell::Int),
            Column::Lists(rows) => rows[r].clone().map_or(Cell::Null, Cell::List),
        }
    }
}

/// FNV-1a of a file's bytes, read in blocks (for the scenario hash).
pub fn file_hash(path: &Path) -> Result<u64, String> {
    use std::io::Read;
    let mut file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut hash = 0xcbf2_9ce4_8422_2325;
    let mut block = vec![0u8; 1 << 20];
    loop {
        let n = file
            .read(&mut block)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if n == 0 {
            return Ok(hash);
        }
        hash = crate::fnv1a(&block[..n], hash);
    }
}

/// Resolves an input file's path: relative to the scenario's folder when it exists there,
/// else as given.
pub fn resolve(path: &str, base_dir: Option<&Path>) -> PathBuf {
    let given = Path::new(path);
    match base_dir.map(|d| d.join(given)) {
        Some(candidate) if !given.is_absolute() && candidate.exists() => candidate,
        _ => given.to_path_buf(),
    }
}
