//! Column builders shared by every table: one Arrow array from one field of each row.

use std::sync::Arc;

use arrow_array::builder::StringDictionaryBuilder;
use arrow_array::types::Int8Type;
use arrow_array::{ArrayRef, UInt32Array, UInt64Array};

/// A non-null `UInt64` column.
pub(crate) fn u64_column<R>(rows: &[R], field: impl Fn(&R) -> u64) -> ArrayRef {
    Arc::new(UInt64Array::from_iter_values(rows.iter().map(field)))
}

/// A nullable `UInt64` column.
pub(crate) fn optional_u64_column<R>(rows: &[R], field: impl Fn(&R) -> Option<u64>) -> ArrayRef {
    Arc::new(rows.iter().map(field).collect::<UInt64Array>())
}

/// A non-null `UInt32` column.
pub(crate) fn u32_column<R>(rows: &[R], field: impl Fn(&R) -> u32) -> ArrayRef {
    Arc::new(UInt32Array::from_iter_values(rows.iter().map(field)))
}

/// A dictionary column of short enum names (Polars reads it as a categorical).
pub(crate) fn name_column<R>(rows: &[R], field: impl Fn(&R) -> &'static str) -> ArrayRef {
    let mut builder = StringDictionaryBuilder::<Int8Type>::new();
    rows.iter().for_each(|r| builder.append_value(field(r)));
    Arc::new(builder.finish())
}
