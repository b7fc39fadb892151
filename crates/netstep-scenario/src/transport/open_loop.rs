//! `kind = "open_loop"`: packets at a fixed (or exponential) gap, no ACKs.

use netstep_core::transport::{OpenLoopSpec, SizeDistribution};
use netstep_core::units::{SimTime, parse_duration, parse_rate};
use serde::{Deserialize, Serialize};

use super::TransportTemplate;
use crate::error::{FieldPath, Invalid};
use crate::fields::size_at;

/// Open-loop packets, no ACKs.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OpenLoopConfig {
    /// Wire size of each packet: above zero, at most 2^32 - 1 bytes (about 4 GB).
    ///
    /// Unit: size, > 0 · Default: `"1000B"` · Example: `packet_size = "1500B"`
    pub packet_size: Option<String>,
    /// Gap between packets (the mean gap with `exponential`); above zero. Give `interval` or
    /// `rate`, not both.
    ///
    /// Unit: duration · Default: — (give this or `rate`) · Example: `interval = "1s"`
    pub interval: Option<String>,
    /// Sending rate, above zero: the interval is `packet_size·8/rate`. Give `interval` or
    /// `rate`, not both.
    ///
    /// Unit: rate · Default: — (give this or `interval`) · Example: `rate = "1Gbps"`
    pub rate: Option<String>,
    /// Exponential gaps with mean `interval` (Poisson packets).
    ///
    /// Unit: bool · Default: false · Example: `exponential = true`
    pub exponential: Option<bool>,
    /// `"constant"`: every packet is `packet_size`; `"exponential"`: exponential sizes with
    /// mean `packet_size` (exponential service times at a single bottleneck: M/M/1).
    ///
    /// Unit: `"constant"` or `"exponential"` · Default: `"constant"` · Example:
    /// `size_distribution = "exponential"`
    pub size_distribution: Option<SizeDistributionConfig>,
    /// Packets are ECN-capable (ECT(0)), so marking queues mark them instead of dropping them.
    ///
    /// Unit: bool · Default: false · Example: `ecn = true`
    pub ecn: Option<bool>,
}

/// Packet size distribution of an open-loop source.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SizeDistributionConfig {
    /// All packets `packet_size`.
    Constant,
    /// Exponential with mean `packet_size`.
    Exponential,
}

impl OpenLoopConfig {
    /// Resolves the table found at `path`.
    pub(crate) fn resolve(&self, path: &FieldPath) -> Result<TransportTemplate, Invalid> {
        let packet_size = size_at(
            &self.packet_size,
            path.key("packet_size"),
            OpenLoopSpec::DEFAULT_PACKET_SIZE,
        )?;
        let size_distribution = match self.size_distribution {
            None | Some(SizeDistributionConfig::Constant) => SizeDistribution::Constant,
            Some(SizeDistributionConfig::Exponential) => SizeDistribution::Exponential,
        };
        if packet_size.0 > u32::MAX as u64 {
            return Err(Invalid::new(
                path.key("packet_size"),
                format!("{packet_size} is larger than 4 GB"),
            ));
        }
        if packet_size.0 == 0 {
            return Err(Invalid::new(
                path.key("packet_size"),
                "must be positive (a packet of no bytes carries nothing)",
            ));
        }
        let interval = match (&self.interval, &self.rate) {
            (Some(_), Some(_)) => {
                return Err(Invalid::new(
                    path.clone(),
                    "give either interval or rate, not both",
                ));
            }
            (None, None) => {
                return Err(Invalid::new(
                    path.clone(),
                    "open_loop needs an interval (e.g. \"1s\") or a rate (e.g. \"1Gbps\")",
                ));
            }
            (Some(i), None) => {
                parse_duration(i).map_err(|e| Invalid::unit(path.key("interval"), e))?
            }
            (None, Some(r)) => {
                let rate = parse_rate(r).map_err(|e| Invalid::unit(path.key("rate"), e))?;
                if rate.0 == 0 {
                    return Err(Invalid::new(
                        path.key("rate"),
                        format!("rate {r:?} is zero; expected a positive rate"),
                    ));
                }
                rate.serialization(packet_size)
            }
        };
        if interval == SimTime::ZERO {
            return Err(Invalid::new(path.key("interval"), "must be positive"));
        }
        Ok(TransportTemplate::OpenLoop {
            packet_size,
            interval,
            exponential: self.exponential.unwrap_or(false),
            size_distribution,
            ecn: self.ecn.unwrap_or(false),
        })
    }
}
