//! `[transport]` tables: the config type of each transport kind in its own file
//! (`open_loop.rs`, `tcp.rs`, `rdma.rs`) with its resolver, and the [`TransportTemplate`] a
//! resolved table becomes before a flow's size is known.

pub mod open_loop;
pub mod rdma;
pub mod tcp;

use std::sync::Arc;

use netstep_core::transport::tcp::TcpSpec;
use netstep_core::transport::{OpenLoopSpec, SizeDistribution, TransportSpec};
use netstep_core::units::{Bytes, SimTime};
use serde::{Deserialize, Serialize};

use crate::error::{FieldPath, Invalid};
use crate::limits::MAX_PACKETS_PER_FLOW;

pub use open_loop::{OpenLoopConfig, SizeDistributionConfig};
pub use rdma::{RdmaCcConfig, RdmaConfig};
pub use tcp::{CcConfig, TcpConfig};

/// A transport and its parameters.
// Parsed once per traffic block and resolved at once: the size of the largest variant
// (RDMA's parameters) costs nothing that boxing would save.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TransportConfig {
    /// Open-loop packets, no ACKs.
    OpenLoop(OpenLoopConfig),
    /// TCP (`kind = "tcp"`, or `"tcp_newreno"` as before): reliable sender with SACK recovery
    /// and a congestion control.
    #[serde(alias = "tcp_newreno")]
    Tcp(TcpConfig),
    /// RDMA (RoCEv2-style): rate-based sender, per-packet ACKs, go-back-N, with a rate control.
    Rdma(RdmaConfig),
}

/// A transport with its parameters resolved, before a flow's size is known.
#[derive(Clone, Debug, PartialEq)]
pub enum TransportTemplate {
    /// Open loop: packet size, gap, exponential gaps.
    OpenLoop {
        /// Wire size of every packet.
        packet_size: Bytes,
        /// (Mean) gap.
        interval: SimTime,
        /// Exponential gaps.
        exponential: bool,
        /// Packet size distribution.
        size_distribution: SizeDistribution,
        /// ECN-capable packets.
        ecn: bool,
    },
    /// TCP, and the same as the transport every flow of it shares.
    Tcp(TcpSpec, Arc<TransportSpec>),
    /// RDMA, and the same as the transport every flow of it shares.
    Rdma(netstep_core::transport::rdma::RdmaSpec, Arc<TransportSpec>),
}

/// Resolves a transport table found at `path`: each kind by its own resolver.
pub fn resolve_transport(
    config: &TransportConfig,
    path: FieldPath,
) -> Result<TransportTemplate, Invalid> {
    match config {
        TransportConfig::OpenLoop(c) => c.resolve(&path),
        TransportConfig::Tcp(c) => c.resolve(&path),
        TransportConfig::Rdma(c) => c.resolve(&path),
    }
}

impl TransportTemplate {
    /// The one TCP or RDMA transport every flow of this template shares whatever its size
    /// (a zero-byte flow's, which sends nothing and never completes as in the HPCC simulator;
    /// an AICB job's); `None` for open loop, whose flows are counted in packets.
    pub(crate) fn shared(&self) -> Option<Arc<TransportSpec>> {
        match self {
            TransportTemplate::Tcp(_, shared) | TransportTemplate::Rdma(_, shared) => {
                Some(shared.clone())
            }
            TransportTemplate::OpenLoop { .. } => None,
        }
    }

    /// The flow's transport and payload size from `size` or `packets` (exactly one; below,
    /// `Ok` carries a size and `Err` a packet count).
    pub(crate) fn for_flow(
        &self,
        size: Option<Bytes>,
        packets: Option<u32>,
        path: &FieldPath,
    ) -> Result<(Arc<TransportSpec>, Bytes), Invalid> {
        let amount = match (size, packets) {
            (Some(_), Some(_)) => {
                return Err(Invalid::new(
                    path.clone(),
                    "give either size or packets, not both",
                ));
            }
            (None, None) => {
                return Err(Invalid::new(
                    path.clone(),
                    "give the flow a size (e.g. \"1MB\") or a packet count",
                ));
            }
            (Some(size), None) => Ok(size),
            (None, Some(n)) => Err(n),
        };
        match self {
            TransportTemplate::OpenLoop {
                packet_size,
                interval,
                exponential,
                size_distribution,
                ecn,
            } => {
                let n_packets = open_loop_packets(*packet_size, amount, packets.is_some(), path)?;
                let spec = OpenLoopSpec {
                    packet_size: *packet_size,
                    n_packets,
                    interval: *interval,
                    exponential: *exponential,
                    size_distribution: *size_distribution,
                    ecn: *ecn,
                };
                Ok((
                    Arc::new(TransportSpec::OpenLoop(spec)),
                    Bytes(packet_size.0 * n_packets as u64),
                ))
            }
            TransportTemplate::Tcp(spec, shared) => {
                let size = reliable_size(amount, spec.mss_bytes, "segments", path)?;
                Ok((shared.clone(), size))
            }
            TransportTemplate::Rdma(spec, shared) => {
                let size = reliable_size(amount, spec.mtu_bytes, "packets", path)?;
                Ok((shared.clone(), size))
            }
        }
    }
}

/// An open-loop flow's packet count from its size (`Ok`) or count (`Err`).
fn open_loop_packets(
    packet_size: Bytes,
    amount: Result<Bytes, u32>,
    counted: bool,
    path: &FieldPath,
) -> Result<u32, Invalid> {
    let n_packets = match amount {
        Ok(s) => u32::try_from(s.0.div_ceil(packet_size.0.max(1))).map_err(|_| {
            Invalid::new(
                path.key("size"),
                format!("{s} is more than {MAX_PACKETS_PER_FLOW} packets of {packet_size}"),
            )
        })?,
        Err(n) => n,
    };
    if n_packets == 0 {
        return Err(Invalid::new(
            path.clone(),
            "a flow needs at least one packet",
        ));
    }
    if n_packets as u64 > MAX_PACKETS_PER_FLOW {
        let field = if counted { "packets" } else { "size" };
        return Err(Invalid::new(
            path.key(field),
            format!(
                "{n_packets} packets in one flow; the limit is {MAX_PACKETS_PER_FLOW} (packet numbers are 31-bit)"
            ),
        ));
    }
    Ok(n_packets)
}

/// A reliable flow's payload from its size (`Ok`) or its count of `unit`-byte packets (`Err`).
fn reliable_size(
    amount: Result<Bytes, u32>,
    unit: u32,
    what: &str,
    path: &FieldPath,
) -> Result<Bytes, Invalid> {
    let size = amount.unwrap_or_else(|n| Bytes(n as u64 * unit as u64));
    if size.0 == 0 {
        return Err(Invalid::new(path.clone(), "a flow needs at least one byte"));
    }
    if size.0.div_ceil(unit as u64) >= (1 << 31) {
        return Err(Invalid::new(
            path.key("size"),
            format!("{size} needs more than 2^31 {what}"),
        ));
    }
    Ok(size)
}

/// Data packets a flow's source sends (retransmissions aside).
pub fn data_packets(transport: &TransportSpec, size: Bytes) -> u64 {
    match transport {
        TransportSpec::OpenLoop(spec) => spec.n_packets as u64,
        TransportSpec::Tcp(spec) => size.0.div_ceil(spec.mss_bytes.max(1) as u64),
        TransportSpec::Rdma(spec) => spec.n_packets(size) as u64,
    }
}

/// A size field in 1..=65535 bytes at `path` (`default` when absent); `space` is the text
/// between the number and `B` in the message, as each transport has always written it.
pub(crate) fn header_sized(
    value: &Option<String>,
    path: FieldPath,
    default: Bytes,
    space: &str,
) -> Result<Bytes, Invalid> {
    let size = crate::fields::size_at(value, path.clone(), default)?;
    if size.0 == 0 || size.0 > 65_535 {
        return Err(Invalid::new(
            path,
            format!("must be between 1{space}B and 65535{space}B, got {size}"),
        ));
    }
    Ok(size)
}
