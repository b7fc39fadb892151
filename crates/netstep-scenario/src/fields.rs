//! Readers for the optional unit-string and small-number fields every part of a scenario
//! shares: each parses its value at a field path, applies the default when it is absent, and
//! names that path when the value is wrong.

use netstep_core::units::{Bytes, SimTime, parse_duration, parse_rate, parse_size};

use crate::error::{FieldPath, Invalid};

/// An optional rate in bits per second at `path` (`default` when absent); zero is refused.
pub(crate) fn rate_at(
    value: &Option<String>,
    path: FieldPath,
    default: f64,
) -> Result<f64, Invalid> {
    match value {
        None => Ok(default),
        Some(v) => {
            let rate = parse_rate(v).map_err(|e| Invalid::unit(path.clone(), e))?;
            if rate.0 == 0 {
                return Err(Invalid::new(
                    path,
                    format!("{v:?} is zero; expected a positive rate"),
                ));
            }
            Ok(rate.0 as f64)
        }
    }
}

/// An optional duration at `path` (`default` when absent).
pub(crate) fn duration_at(
    value: &Option<String>,
    path: FieldPath,
    default: SimTime,
) -> Result<SimTime, Invalid> {
    match value {
        Some(v) => parse_duration(v).map_err(|e| Invalid::unit(path, e)),
        None => Ok(default),
    }
}

/// A duration at `path` that must be above zero.
pub(crate) fn positive_duration(value: &str, path: FieldPath) -> Result<SimTime, Invalid> {
    let t = parse_duration(value).map_err(|e| Invalid::unit(path.clone(), e))?;
    positive(t, path)
}

/// An optional duration at `path` that must be above zero (`default` when absent).
pub(crate) fn positive_duration_at(
    value: &Option<String>,
    path: FieldPath,
    default: SimTime,
) -> Result<SimTime, Invalid> {
    let t = duration_at(value, path.clone(), default)?;
    positive(t, path)
}

/// `t`, refused at `path` when it is zero.
fn positive(t: SimTime, path: FieldPath) -> Result<SimTime, Invalid> {
    if t == SimTime::ZERO {
        return Err(Invalid::new(path, "must be positive"));
    }
    Ok(t)
}

/// An optional size at `path` (`default` when absent).
pub(crate) fn size_at(
    value: &Option<String>,
    path: FieldPath,
    default: Bytes,
) -> Result<Bytes, Invalid> {
    match value {
        Some(v) => parse_size(v).map_err(|e| Invalid::unit(path, e)),
        None => Ok(default),
    }
}

/// An optional size at `path`, kept optional.
pub(crate) fn optional_size(
    value: &Option<String>,
    path: FieldPath,
) -> Result<Option<Bytes>, Invalid> {
    value
        .as_ref()
        .map(|s| parse_size(s).map_err(|e| Invalid::unit(path, e)))
        .transpose()
}

/// A traffic class: 0-7, default 0.
pub(crate) fn traffic_class(class: Option<u8>, path: &FieldPath) -> Result<u8, Invalid> {
    match class {
        None => Ok(0),
        Some(c) if (c as usize) < netstep_core::queue::CLASSES => Ok(c),
        Some(c) => Err(Invalid::new(
            path.clone(),
            format!("traffic classes are 0 to 7, got {c}"),
        )),
    }
}

/// A fraction in (0, 1] at `path` (`default` when absent).
pub(crate) fn unit_fraction(
    value: Option<f64>,
    path: FieldPath,
    default: f64,
) -> Result<f64, Invalid> {
    let v = value.unwrap_or(default);
    if v > 0.0 && v <= 1.0 {
        Ok(v)
    } else {
        Err(Invalid::new(path, format!("must be in (0, 1], got {v}")))
    }
}
