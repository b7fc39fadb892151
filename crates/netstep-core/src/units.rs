//! Unit newtypes (integer picoseconds, bytes, bits per second) and the parsers for the unit
//! strings that scenario files use (`"100Gbps"`, `"1us"`, `"1MB"`, `"100pkts"`).
//!
//! Every quantity is an integer: time is `u64` picoseconds, sizes are bytes, rates are bits per
//! second. A value without a unit is rejected: `"100"` could mean anything.

use std::fmt;
use std::ops::{Add, Sub};

/// A point in simulated time, or a duration, in integer picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    /// Time zero.
    pub const ZERO: SimTime = SimTime(0);
    /// The largest representable time, used as "never".
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// A time from picoseconds.
    pub const fn from_ps(ps: u64) -> Self {
        SimTime(ps)
    }
    /// A time from nanoseconds.
    pub const fn from_ns(ns: u64) -> Self {
        SimTime(ns * 1_000)
    }
    /// A time from microseconds.
    pub const fn from_us(us: u64) -> Self {
        SimTime(us * 1_000_000)
    }
    /// A time from milliseconds.
    pub const fn from_ms(ms: u64) -> Self {
        SimTime(ms * 1_000_000_000)
    }
    /// A time from seconds.
    pub const fn from_secs(s: u64) -> Self {
        SimTime(s * 1_000_000_000_000)
    }
    /// Picoseconds.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Whole nanoseconds (rounded down).
    pub const fn as_ns(self) -> u64 {
        self.0 / 1_000
    }
    /// Seconds as a float (for reports only, never for simulation state).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-12
    }
    /// Saturating addition.
    pub const fn saturating_add(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(other.0))
    }
    /// The smallest multiple of `quantum` that is `>= self` (`quantum` must be non-zero).
    pub const fn ceil_to(self, quantum: SimTime) -> SimTime {
        let rem = self.0 % quantum.0;
        if rem == 0 {
            self
        } else {
            SimTime(self.0.saturating_add(quantum.0 - rem))
        }
    }
}

/// Saturating: a time past the end of representable time is [`SimTime::MAX`] ("never"), not a
/// wrapped small value; the engine reports events beyond its limit as an error.
/// An optional time in one word (8 bytes, where `Option<SimTime>` takes 16): for state kept per
/// flow for a whole run. [`SimTime::MAX`] stands for none; no simulated time reaches it (events
/// end at 2^60 ps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaybeTime(u64);

impl MaybeTime {
    /// No time.
    pub const NONE: MaybeTime = MaybeTime(u64::MAX);

    /// `time`, packed (`Some(SimTime::MAX)` would read back as none: simulated times never
    /// get there).
    #[inline]
    pub fn new(time: Option<SimTime>) -> MaybeTime {
        debug_assert!(
            time != Some(SimTime::MAX),
            "no simulated time is SimTime::MAX"
        );
        time.map_or(MaybeTime::NONE, MaybeTime::at)
    }
    /// The time `time`.
    #[inline]
    pub const fn at(time: SimTime) -> MaybeTime {
        MaybeTime(time.0)
    }
    /// The time, if there is one.
    #[inline]
    pub fn get(self) -> Option<SimTime> {
        (self != MaybeTime::NONE).then_some(SimTime(self.0))
    }
    /// Whether there is no time.
    #[inline]
    pub fn is_none(self) -> bool {
        self == MaybeTime::NONE
    }
}

impl Default for MaybeTime {
    /// No time.
    fn default() -> MaybeTime {
        MaybeTime::NONE
    }
}

impl Add for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}

/// Saturating at zero.
impl Sub for SimTime {
    type Output = SimTime;
    #[inline]
    fn sub(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(rhs.0))
    }
}

impl fmt::Display for SimTime {
    /// Exact values in the largest whole unit (`25ms`); others with three decimals (`1.002s`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scales = [
            (1_000_000_000_000, "s"),
            (1_000_000_000, "ms"),
            (1_000_000, "us"),
            (1_000, "ns"),
        ];
        if let Some(&(scale, unit)) = scales
            .iter()
            .find(|(scale, _)| self.0 >= *scale && !self.0.is_multiple_of(*scale))
        {
            return write!(f, "{:.3}{unit}", self.0 as f64 / scale as f64);
        }
        format_scaled(f, self.0, &scales, "ps")
    }
}

/// A size in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

impl Bytes {
    /// The size in bits.
    pub const fn bits(self) -> u64 {
        self.0 * 8
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        format_scaled(
            f,
            self.0,
            &[(1_000_000_000, "GB"), (1_000_000, "MB"), (1_000, "KB")],
            "B",
        )
    }
}

/// A link rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitsPerSec(pub u64);

impl BitsPerSec {
    /// Time to serialize `size` onto a link of this rate, rounded up to a whole picosecond.
    ///
    /// Rounding up keeps every non-empty packet's serialization strictly positive.
    pub const fn serialization(self, size: Bytes) -> SimTime {
        // A byte's bits times a second's picoseconds: the numerator's unit.
        const PER_BYTE: u64 = 8 * 1_000_000_000_000;
        // Below about 2.3 MB (every packet) the product fits 64 bits, and a 64-bit division
        // costs a fraction of a 128-bit one (`__udivti3`: 1.2 % of a 1,024-GPU run, whose
        // 2,880 Gb/s links take no whole number of picoseconds per byte).
        if let Some(bits) = size.0.checked_mul(PER_BYTE) {
            return SimTime(bits.div_ceil(self.0));
        }
        let bits = size.0 as u128 * PER_BYTE as u128;
        SimTime(bits.div_ceil(self.0 as u128) as u64)
    }
}

impl fmt::Display for BitsPerSec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        format_scaled(
            f,
            self.0,
            &[
                (1_000_000_000, "Gbps"),
                (1_000_000, "Mbps"),
                (1_000, "kbps"),
            ],
            "bps",
        )
    }
}

/// How much an egress buffer holds: a byte budget or a packet count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BufferSize {
    /// At most this many bytes waiting.
    Bytes(Bytes),
    /// At most this many packets waiting.
    Packets(u32),
}

impl BufferSize {
    /// True when a packet of `size` bytes fits next to `packets` packets of `bytes` bytes.
    #[inline]
    pub fn fits(self, packets: usize, bytes: u64, size: u64) -> bool {
        match self {
            BufferSize::Packets(n) => packets < n as usize,
            BufferSize::Bytes(b) => bytes.saturating_add(size) <= b.0,
        }
    }
    /// The limit in bytes (`u64::MAX` for a packet limit).
    pub fn bytes_or_max(self) -> u64 {
        match self {
            BufferSize::Bytes(b) => b.0,
            BufferSize::Packets(_) => u64::MAX,
        }
    }
}

impl fmt::Display for BufferSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferSize::Bytes(b) => b.fmt(f),
            BufferSize::Packets(n) => write!(f, "{n}pkts"),
        }
    }
}

fn format_scaled(
    f: &mut fmt::Formatter<'_>,
    value: u64,
    scales: &[(u64, &str)],
    base: &str,
) -> fmt::Result {
    for &(scale, suffix) in scales {
        if value >= scale && value.is_multiple_of(scale) {
            return write!(f, "{}{suffix}", value / scale);
        }
    }
    write!(f, "{value}{base}")
}

/// A unit string that could not be parsed; keeps the offending input.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} {value:?}: expected {expected}")]
pub struct UnitError {
    /// What was being parsed ("duration", "rate", "size", "buffer size").
    pub kind: &'static str,
    /// The input as written.
    pub value: String,
    /// What a valid value looks like.
    pub expected: &'static str,
}

const DURATION_EXPECTED: &str =
    "a number with a unit: ps, ns, us, ms or s (e.g. \"1us\", \"25ms\")";
const RATE_EXPECTED: &str =
    "a number with a unit: bps, kbps, Mbps, Gbps or Tbps (e.g. \"100Gbps\", \"320kbps\")";
const SIZE_EXPECTED: &str = "a number with a unit: B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (e.g. \"1500B\", \"1MB\")";
const BUFFER_EXPECTED: &str =
    "a size with a unit (e.g. \"1MB\", \"256KB\") or a packet count (e.g. \"100pkts\")";

/// Splits `"12.5Gbps"` into the number and the unit; `None` when either part is missing.
fn split_number(input: &str) -> Option<(&str, &str)> {
    let s = input.trim();
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))?;
    let (number, unit) = s.split_at(end);
    if number.is_empty() || unit.trim().is_empty() {
        return None;
    }
    Some((number, unit.trim()))
}

/// Multiplies a decimal number written as a string by an integer scale, exactly.
/// Rejects results that are not whole numbers of the base unit.
fn scale_decimal(number: &str, scale: u64) -> Option<u64> {
    let number = number.replace('_', "");
    let (int_part, frac_part) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number.as_str(), ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let int_value: u128 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().ok()?
    };
    let mut total = int_value.checked_mul(scale as u128)?;
    if !frac_part.is_empty() {
        let digits = frac_part.len() as u32;
        if digits > 18 {
            return None;
        }
        let frac: u128 = frac_part.parse().ok()?;
        let denominator = 10u128.pow(digits);
        let scaled = frac.checked_mul(scale as u128)?;
        if scaled % denominator != 0 {
            return None;
        }
        total = total.checked_add(scaled / denominator)?;
    }
    u64::try_from(total).ok()
}

/// Parses a duration such as `"1us"`, `"25ms"`, `"2.5ns"`, `"0s"`.
pub fn parse_duration(input: &str) -> Result<SimTime, UnitError> {
    let err = || UnitError {
        kind: "duration",
        value: input.to_string(),
        expected: DURATION_EXPECTED,
    };
    let (number, unit) = split_number(input).ok_or_else(err)?;
    let scale = match unit {
        "ps" => 1,
        "ns" => 1_000,
        "us" | "µs" => 1_000_000,
        "ms" => 1_000_000_000,
        "s" => 1_000_000_000_000,
        _ => return Err(err()),
    };
    scale_decimal(number, scale).map(SimTime).ok_or_else(err)
}

/// Parses a rate such as `"100Gbps"` or `"320kbps"`.
pub fn parse_rate(input: &str) -> Result<BitsPerSec, UnitError> {
    let err = || UnitError {
        kind: "rate",
        value: input.to_string(),
        expected: RATE_EXPECTED,
    };
    let (number, unit) = split_number(input).ok_or_else(err)?;
    let scale = match unit {
        "bps" => 1,
        "kbps" | "Kbps" => 1_000,
        "Mbps" => 1_000_000,
        "Gbps" => 1_000_000_000,
        "Tbps" => 1_000_000_000_000,
        _ => return Err(err()),
    };
    scale_decimal(number, scale).map(BitsPerSec).ok_or_else(err)
}

/// Parses a size in bytes such as `"1500B"`, `"1MB"` (10^6) or `"1MiB"` (2^20).
pub fn parse_size(input: &str) -> Result<Bytes, UnitError> {
    let err = || UnitError {
        kind: "size",
        value: input.to_string(),
        expected: SIZE_EXPECTED,
    };
    let (number, unit) = split_number(input).ok_or_else(err)?;
    let scale = size_scale(unit).ok_or_else(err)?;
    scale_decimal(number, scale).map(Bytes).ok_or_else(err)
}

fn size_scale(unit: &str) -> Option<u64> {
    Some(match unit {
        "B" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => return None,
    })
}

/// Parses a buffer size: bytes (`"1MB"`) or packets (`"100pkts"`).
pub fn parse_buffer(input: &str) -> Result<BufferSize, UnitError> {
    let err = || UnitError {
        kind: "buffer size",
        value: input.to_string(),
        expected: BUFFER_EXPECTED,
    };
    let (number, unit) = split_number(input).ok_or_else(err)?;
    if unit == "pkts" || unit == "pkt" {
        let count = scale_decimal(number, 1).ok_or_else(err)?;
        return u32::try_from(count)
            .map(BufferSize::Packets)
            .map_err(|_| err());
    }
    let scale = size_scale(unit).ok_or_else(err)?;
    scale_decimal(number, scale)
        .map(|b| BufferSize::Bytes(Bytes(b)))
        .ok_or_else(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One word holds any simulated time, zero included, or none.
    #[test]
    fn a_maybe_time_holds_a_time_or_none() {
        for t in [
            None,
            Some(SimTime::ZERO),
            Some(SimTime(1)),
            Some(SimTime(u64::MAX - 1)),
        ] {
            assert_eq!(MaybeTime::new(t).get(), t);
            assert_eq!(MaybeTime::new(t).is_none(), t.is_none());
        }
        assert_eq!(MaybeTime::at(SimTime(7)).get(), Some(SimTime(7)));
        assert_eq!(std::mem::size_of::<MaybeTime>(), 8);
    }

    #[test]
    fn durations_parse_exactly() {
        assert_eq!(parse_duration("1us").unwrap(), SimTime::from_us(1));
        assert_eq!(parse_duration("25ms").unwrap(), SimTime::from_ms(25));
        assert_eq!(parse_duration("2.5ns").unwrap(), SimTime(2_500));
        assert_eq!(parse_duration("0s").unwrap(), SimTime::ZERO);
        assert_eq!(parse_duration(" 1 s ").unwrap(), SimTime::from_secs(1));
    }

    #[test]
    fn rates_and_sizes_parse() {
        assert_eq!(parse_rate("100Gbps").unwrap(), BitsPerSec(100_000_000_000));
        assert_eq!(parse_rate("320kbps").unwrap(), BitsPerSec(320_000));
        assert_eq!(parse_size("1MB").unwrap(), Bytes(1_000_000));
        assert_eq!(parse_size("1MiB").unwrap(), Bytes(1 << 20));
        assert_eq!(parse_buffer("100pkts").unwrap(), BufferSize::Packets(100));
        assert_eq!(
            parse_buffer("256KB").unwrap(),
            BufferSize::Bytes(Bytes(256_000))
        );
    }

    #[test]
    fn ambiguous_or_malformed_values_are_rejected() {
        for bad in ["100", "", "us", "1 furlong", "1.5.2s", "0.1ps", "-1s"] {
            let err = parse_duration(bad).unwrap_err();
            assert_eq!(err.value, bad);
        }
        assert!(parse_rate("100G").is_err());
        assert!(parse_size("1.0000001B").is_err());
        assert!(parse_buffer("100").is_err());
    }

    #[test]
    fn serialization_rounds_up() {
        // 1000 B at 320 kb/s = 25 ms exactly.
        assert_eq!(
            BitsPerSec(320_000).serialization(Bytes(1000)),
            SimTime::from_ms(25)
        );
        // 1 B at 3 bps = 8/3 s, rounded up to the picosecond.
        assert_eq!(BitsPerSec(3).serialization(Bytes(1)).0, 2_666_666_666_667);
        // Either side of the largest size whose bits in picoseconds fit 64 bits, at 2,880
        // Gb/s (no whole number of picoseconds per byte): the 128-bit quotient, rounded up.
        let edge = u64::MAX / 8_000_000_000_000;
        for size in [1, 9048, edge - 1, edge, edge + 1, 1 << 40] {
            let exact = (size as u128 * 8_000_000_000_000).div_ceil(2_880_000_000_000);
            assert_eq!(
                BitsPerSec(2_880_000_000_000).serialization(Bytes(size)).0 as u128,
                exact,
                "{size} B"
            );
        }
    }

    #[test]
    fn display_round_trips() {
        assert_eq!(SimTime::from_us(3).to_string(), "3us");
        assert_eq!(SimTime(1_001_882_247_954).to_string(), "1.002s");
        assert_eq!(BitsPerSec(100_000_000_000).to_string(), "100Gbps");
        assert_eq!(Bytes(1500).to_string(), "1500B");
    }
}
